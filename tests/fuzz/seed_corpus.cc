// Writes the seed corpus of the fuzz targets: valid encodings of every message of the table,
// request and reply, so that the fuzzers start from the protocol instead of from noise.
//
//   seed_corpus FRAME_DECODER_DIR PAYLOAD_CODEC_DIR
//
// The committed corpus (corpus/) grew from these seeds by fuzzing and was minimized with
// -merge=1; run this again after adding a message, then merge (README.md).
#include <cstdio>
#include <fstream>
#include <string>

#include "net/frame.h"
#include "net/messages.h"

namespace {

void WriteSeed(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream out(dir + "/seed-" + name, std::ios::binary | std::ios::trunc);
  out << bytes;
  if (!out) std::fprintf(stderr, "seed_corpus: cannot write %s/seed-%s\n", dir.c_str(), name.c_str());
}

// A message with every string field non-empty where the type has one, for a richer seed.
template <typename Message>
Message Sample() {
  return Message{};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace stagio;
  if (argc != 3) {
    std::fprintf(stderr, "usage: seed_corpus FRAME_DECODER_DIR PAYLOAD_CODEC_DIR\n");
    return 64;
  }
  const std::string frames = argv[1], payloads = argv[2];
  // The frame decoder's input ends with the integers it draws (limit, piece sizes): a tail of
  // 0x40 bytes asks for a generous limit and pieces of a few dozen bytes.
  const std::string tail(16, '\x40');
  std::string stream;
  int selector = 0;
#define STAGIO_SEED_MESSAGE(name, code, Request, Reply)                                   \
  {                                                                                      \
    const std::string request = net::EncodePayload(Sample<net::Request>());              \
    const std::string reply = net::EncodePayload(Sample<net::Reply>());                  \
    const std::string pair = net::EncodeFrame(net::MessageType::k##name, false, 1, request) + \
                             net::EncodeFrame(net::MessageType::k##name, true, 1, reply);    \
    stream += pair;                                                                      \
    WriteSeed(frames, #name, pair + tail);                                               \
    WriteSeed(payloads, #name "-request", std::string(1, static_cast<char>(selector++)) + request); \
    WriteSeed(payloads, #name "-reply", std::string(1, static_cast<char>(selector++)) + reply);     \
  }
  STAGIO_IOND_MESSAGES(STAGIO_SEED_MESSAGE)
#undef STAGIO_SEED_MESSAGE
  WriteSeed(frames, "all", stream + tail);
  return 0;
}
