// The stagio-iond protocol: every message, in one table.
//
// A client sends a request frame; the daemon answers with a reply frame of the same type and
// request id. Requests on one connection may be pipelined: replies can come in any order and
// are matched by id. Every reply starts with a WireStatus; the other reply fields mean
// something only when it is OK.
//
// The first request on a connection must be Hello. It carries the protocol version and the
// shared token; a daemon that requires a token closes the connection after a refused Hello.
// Files are named by the daemon's handle from Open. Offsets and lengths are bytes of the file:
// the daemon cuts them into its own cache blocks. Read requests also carry how the client
// spreads blocks over its aggregators (block size and aggregator count), which is what the
// daemon prefetches by (seed 004, V-D: the next blocks of the same aggregator).
//
// Changing a message means bumping kProtocolVersion.
#pragma once

#include <cstdint>
#include <string>

#include "net/wire_codec.h"

namespace stagio {
namespace net {

constexpr uint16_t kProtocolVersion = 2;

// A status on the wire: the code of stagio::Status and its message.
struct WireStatus {
  uint8_t code = 0;
  std::string message;
  STAGIO_WIRE_FIELDS(code, message)
};
WireStatus ToWire(const Status& status);
Status FromWire(const WireStatus& status);

enum class FileAccess : uint8_t { kReadOnly = 0, kWriteOnly = 1, kReadWrite = 2 };

struct HelloRequest {
  uint16_t version = kProtocolVersion;
  std::string token;
  std::string client;  // "host pid", for the daemon's log lines
  STAGIO_WIRE_FIELDS(version, token, client)
};
// A token is a short secret. Token files larger than this are refused on both sides, so that
// a token always fits the small Hello the daemon accepts from a peer it does not know yet.
constexpr size_t kMaxTokenBytes = 1024;
struct HelloReply {
  WireStatus status;
  std::string server;  // "stagio-iond 0.5.0"
  uint64_t block_size = 0;
  STAGIO_WIRE_FIELDS(status, server, block_size)
};

struct OpenRequest {
  std::string path;  // absolute; must resolve to a file under the daemon's root
  uint8_t access = 0;  // FileAccess
  STAGIO_WIRE_FIELDS(path, access)
};
struct OpenReply {
  WireStatus status;
  uint64_t handle = 0;
  STAGIO_WIRE_FIELDS(status, handle)
};

// Close, Flush, Sync, Stat and Invalidate name only the file.
struct FileRequest {
  uint64_t handle = 0;
  STAGIO_WIRE_FIELDS(handle)
};

struct ReadRequest {
  uint64_t handle = 0;
  uint64_t offset = 0;
  uint32_t length = 0;
  uint64_t client_block_size = 0;  // how the client cuts the file into blocks
  uint32_t client_aggregators = 0;  // over how many aggregators it spreads them, round-robin
  // A long client read reaches a daemon as several requests sent at once; each says how many
  // more of them this daemon gets, so that only the last one prefetches: the blocks after the
  // others are the later pieces, already on their way as demands.
  uint32_t pieces_after = 0;
  STAGIO_WIRE_FIELDS(handle, offset, length, client_block_size, client_aggregators, pieces_after)
};
struct ReadReply {
  WireStatus status;
  std::string data;  // shorter than asked for at end of file
  STAGIO_WIRE_FIELDS(status, data)
};

struct WriteRequest {
  uint64_t handle = 0;
  uint64_t offset = 0;
  std::string data;
  STAGIO_WIRE_FIELDS(handle, offset, data)
};

struct StatusReply {
  WireStatus status;
  STAGIO_WIRE_FIELDS(status)
};
struct StatReply {
  WireStatus status;
  uint64_t size = 0;  // of the file as the daemon sees it: storage plus its dirty bytes
  STAGIO_WIRE_FIELDS(status, size)
};

// X(name, wire code, request type, reply type). Meaning of each request:
//   Hello       version and token check; must come first
//   Open        open a file under the root (it must exist: MPI creates files)
//   Close       flush the file to the backing file system and release the handle
//   ReadBlocks  read bytes; served from the daemon's cache, then prefetch for that aggregator
//   WriteBlocks write bytes into the daemon's cache (write-back)
//   Flush       write the file's dirty bytes to the backing file system
//   Sync        Flush, fsync, and drop the file's clean cached bytes
//   Stat        the file size
//   Invalidate  drop the file's clean cached bytes (storage changed behind the daemon)
#define STAGIO_IOND_MESSAGES(X)                          \
  X(Hello, 1, HelloRequest, HelloReply)                  \
  X(Open, 2, OpenRequest, OpenReply)                     \
  X(Close, 3, FileRequest, StatusReply)                  \
  X(ReadBlocks, 4, ReadRequest, ReadReply)               \
  X(WriteBlocks, 5, WriteRequest, StatusReply)           \
  X(Flush, 6, FileRequest, StatusReply)                  \
  X(Sync, 7, FileRequest, StatusReply)                   \
  X(Stat, 8, FileRequest, StatReply)                     \
  X(Invalidate, 9, FileRequest, StatusReply)

enum class MessageType : uint16_t {
#define STAGIO_MESSAGE_ENUM(name, code, request, reply) k##name = code,
  STAGIO_IOND_MESSAGES(STAGIO_MESSAGE_ENUM)
#undef STAGIO_MESSAGE_ENUM
};

// The message's name for log lines; "unknown" for a code not in the table.
const char* MessageName(uint16_t code);
bool IsKnownMessage(uint16_t code);

// The request and reply types of each message, for code that is generic over messages.
template <MessageType type>
struct MessageTypes;
#define STAGIO_MESSAGE_TYPES(name, code, request, reply) \
  template <>                                            \
  struct MessageTypes<MessageType::k##name> {            \
    using Request = request;                             \
    using Reply = reply;                                 \
  };
STAGIO_IOND_MESSAGES(STAGIO_MESSAGE_TYPES)
#undef STAGIO_MESSAGE_TYPES

}  // namespace net
}  // namespace stagio
