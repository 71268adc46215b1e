// Connection: one client's connection, from accept to close.
//
// Threads. A reader thread takes frames off the socket (net::FrameDecoder), decodes each
// request and hands it to the shared RequestPool; a writer thread sends the replies, in the
// order they are ready, which is not the order of the requests: requests of one connection run
// in parallel and the client matches replies by request id (a client must not pipeline
// requests whose order matters, such as a write and a read of the same bytes). The writer keeps
// request threads from ever blocking on a client that does not read its replies.
//
// Bounds. At most kMaxRequestsInFlight requests, holding at most kMaxBytesInFlight bytes of
// requests and read replies, are under way per connection; beyond that the reader stops
// reading, so TCP holds the client back and one client cannot exhaust the daemon's memory.
//
// A Connection starts past Hello: HelloGate (hello_gate.h) holds each new socket, threadless,
// until its Hello is accepted, and the Connection sends the gate's accepting reply first.
//
// Errors. A malformed frame, a payload that does not decode, or a reply frame sent by a client
// closes the connection with one log line naming the client and the reason. Then, and when the
// client hangs up, the requests in flight finish and their replies go out first; then the
// handles the client left open are closed (flushed), and the daemon goes on serving everyone
// else.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "iond/file_service.h"
#include "iond/hello.h"
#include "iond/log.h"
#include "iond/request_pool.h"
#include "iond/server_stats.h"
#include "iond/session.h"
#include "net/frame.h"
#include "net/socket.h"

namespace stagio {
namespace iond {

constexpr uint64_t kMaxRequestsInFlight = 64;
constexpr uint64_t kMaxBytesInFlight = uint64_t{256} << 20;

// What every connection of a server shares; it outlives them all.
struct ConnectionEnv {
  FileService* files = nullptr;
  RequestPool* pool = nullptr;
  ServerStats* stats = nullptr;
  LogSink log;
  // A file this connection left open could not be flushed when the connection ended.
  std::function<void(const std::string& path, const Status& status)> report_unflushed;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // The socket, its name for log lines and the accepting Hello reply come from the gate.
  Connection(GreetedSocket greeted, const ConnectionEnv* env);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Starts the connection's threads; fails (and the connection is dropped) if there are none.
  Status Start();
  // Stops reading: the connection ends once the requests in flight are answered (shutdown).
  void StopReading();
  // True once every thread of the connection is done; Join then does not block.
  bool finished() const { return finished_.load(); }
  void Join();

 private:
  // The reader thread: frames until the stream ends or is broken, then the teardown.
  void Run();
  // Handles the whole frames the decoder holds; false (with *reason) closes the connection.
  bool TakeFrames(std::string* reason, bool* protocol_error);
  // Handles one frame; false (with *reason) closes the connection.
  bool OnFrame(net::Frame& frame, std::string* reason);
  // Waits for room under the in-flight bounds, then hands the request to the pool.
  bool Submit(const net::Frame& frame, std::string* reason);
  void QueueReply(net::MessageType type, uint64_t request_id, const std::string& payload);
  void WriteReplies();
  // Waits out the requests in flight, sends their replies, closes the socket, and closes the
  // handles the client left open.
  void TearDown();

  net::UniqueFd socket_;
  const ConnectionEnv* const env_;
  // "client 'node3 pid 77' at 10.0.0.5:40312", as Hello named it, for log lines.
  const std::string name_;
  net::FrameDecoder decoder_;  // the reader's
  Session session_;

  std::mutex mutex_;
  std::condition_variable in_flight_changed_;
  std::condition_variable replies_ready_;
  uint64_t in_flight_ = 0;
  uint64_t in_flight_bytes_ = 0;
  std::deque<std::string> replies_;  // encoded frames
  bool stop_writer_ = false;
  bool send_failed_ = false;
  std::string send_error_;
  bool socket_closed_ = false;

  std::thread reader_;
  std::thread writer_;
  std::atomic<bool> finished_{false};
};

}  // namespace iond
}  // namespace stagio
