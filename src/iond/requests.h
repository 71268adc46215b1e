// The daemon's side of each message: decode the request, serve it against the files and the
// connection's handles, encode the reply. One Serve specialization per row of
// STAGIO_IOND_MESSAGES (net/messages.h); PrepareRequest dispatches over the same table, so a
// message added there without a Serve here does not link.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"
#include "iond/file_service.h"
#include "iond/log.h"
#include "iond/server_stats.h"
#include "iond/session.h"
#include "net/frame.h"
#include "net/messages.h"

namespace stagio {
namespace iond {

// What a request runs against.
struct RequestContext {
  FileService* files;
  Session* session;
  ServerStats* stats;
  const LogSink* log;
  const std::string* client;  // the connection's name for log lines
};

// Serves one decoded request of message kType, filling the whole reply; a failure goes into
// the reply's status, never out of the daemon.
template <net::MessageType kType>
void Serve(RequestContext& context, const typename net::MessageTypes<kType>::Request& request,
           typename net::MessageTypes<kType>::Reply* reply);

// A decoded request, ready to run on a request thread; returns the encoded reply payload.
using PreparedRequest = std::function<std::string(RequestContext&)>;

// Decodes the frame's payload as its message's request. Fails, naming the message, if the
// payload does not decode exactly (the connection is then closed). *memory is what serving it
// will hold in memory beyond the frame (a read's reply data), for the connection's bound.
Status PrepareRequest(const net::Frame& frame, PreparedRequest* prepared, uint64_t* memory);

}  // namespace iond
}  // namespace stagio
