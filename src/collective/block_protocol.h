// The block service protocol: how a rank asks the owner of a block (collective-cache mode) to
// read, write, prefetch or flush it. Messages travel on the file's private communicator, so a
// request can only ever reach the server of the same file, and they never mix with the
// collectives stagio runs on that communicator (MPI keeps point-to-point and collective
// traffic apart).
//
// A request is one message with tag kBlockRequestTag:
//   RequestHeader, piece_count WirePieces, then (writes only) the pieces' bytes, concatenated.
// Reads, writes and flushes are answered with one message on the request's reply tag:
//   ReplyHeader, then (a successful read) the pieces' bytes, concatenated, or (a failure) the
//   error text, message_length bytes.
// Prefetch requests are not answered: they are hints, and a lost one costs only a miss later.
// The requester knows how many bytes to expect, so replies need no size field beyond that.
#pragma once

#include <cstdint>

namespace stagio {

constexpr int kBlockRequestTag = 0x5a10;
// Reply tags are chosen per request from [kFirstReplyTag, kFirstReplyTag + kReplyTagCount),
// so that two application threads waiting on the same owner cannot take each other's reply.
constexpr int kFirstReplyTag = 0x5a20;
constexpr int kReplyTagCount = 4096;

enum class BlockOp : uint32_t {
  kRead = 1,
  kWrite = 2,
  kPrefetch = 3,      // fetch these blocks ahead of use, if not cached
  kFlush = 4,         // write back every dirty block of the file this rank owns
  kFlushAndDrop = 5,  // the same, then drop the file's clean blocks and queued prefetches
};

struct RequestHeader {
  uint32_t op = 0;           // BlockOp
  uint32_t piece_count = 0;
  int32_t reply_tag = 0;
  uint32_t whole_blocks = 1; // reads: a miss fetches the whole block (else the bytes asked for)
};

struct WirePiece {
  uint64_t index = 0;            // block
  uint64_t offset_in_block = 0;
  uint64_t length = 0;           // bytes; the piece stays inside the block
};

struct ReplyHeader {
  int32_t ok = 1;
  uint32_t message_length = 0;  // bytes of error text after the header when !ok
};

// Error text longer than this is cut; the owner logs it in full.
constexpr uint32_t kMaxReplyMessage = 512;

}  // namespace stagio
