// coherence_test: one rank's writes reach another rank after sync-barrier-sync, when neither of
// them caches the bytes: a third rank owns every block (collective cache), or each rank caches
// its own (per-rank caching).
//
//   coherence_test --expect collective|per-rank|node|node-homes [--cases all|NAME,NAME...]
//                  [--dir DIR]
//
// NAME is one of kinds, reblock, cache_off (below).
//
// Needs at least 3 ranks and STAGIO_STATS=PATH. Linked directly with libstagio (ahead of MPI),
// like fault_test, so that stagio_is_active() tells at once whether stagio is in the way, and so
// that the test runs unchanged under a preload shim (thread_level_cap) without an LD_PRELOAD
// list to get right. Every file is opened with stagio_aggregators = "<last rank>," and 4 KiB
// blocks, so with the collective cache the last rank owns every block; rank 0 (the writer, A)
// and rank 1 (the reader, B) own none.
//
// kinds: one file per case, for each write kind x read kind (independent write_at or collective
// write_at_all; independent read_at or collective read_at_all; in collective calls the other
// ranks take part with count 0):
//   1. B writes the old bytes over a region spanning several blocks, off block boundaries;
//      sync-barrier-sync.
//   2. B reads the region back (old bytes); sync-barrier-sync, which drops what is cached.
//   3. B touches the blocks A is about to write without touching A's bytes (no conflict, so no
//      sync is needed): it reads the head of A's first block, so that a stale copy of it is
//      cached right before A writes, and writes a few bytes at the tail of A's last block (two
//      ranks' dirty bytes in one block). A writes a first version of its bytes (independent).
//      A barrier, then A writes its final bytes over the same part of the region, off block
//      boundaries; sync-barrier-sync.
//   4. B reads the region: A's final bytes where A wrote, B's new bytes where B wrote, old
//      bytes elsewhere. The file, read with POSIX after close, must hold the same.
// Two more cases change a hint in MPI_File_set_info between the barrier and A's final write,
// both with independent calls. Before step 3 the owner makes 8 MiB of other blocks dirty, so
// that it is still writing them back inside set_info when A, which has nothing to write back,
// has left it and writes:
//   reblock    stagio_block_size=64K: A sends its write cut into the new blocks to an owner
//              that may still cut the file into the old ones.
//   cache_off  stagio_cache=disable: A writes through MPI-IO while the owner may not yet have
//              written back A's first version, which must not overwrite the final one.
//
// After MPI_Finalize, rank 0 reads the stats JSON and checks that the mode was the expected one,
// so that the test fails if the collective cache silently turns off (or on):
//   collective: per file, A sent bytes to other ranks (exchanged_bytes > 0), and so did the
//               owner where B's read is collective; A's first write and B's writes made block
//               requests (remote_requests > 0). B's independent reads have no pattern and
//               follow a sync, so they read storage directly, as without the collective cache;
//   per-rank:   no rank exchanged bytes or made block requests;
//   node:       the same, and MPI_File_get_info said at open that the file is in the node cache
//               (the ranks of a node share one cache; with STAGIO_NODE_SIZE=1 and the
//               collective cache off, each rank is a pretend node of its own with a cache of its
//               own, so A, B and the owner share nothing);
//   node-homes: as collective, and the file is in the node cache: with pretend nodes of one
//               rank each, the owner's node is the home of every block, and A and B, on other
//               nodes, ask the owner.
// Prints "N passed, M failed" (checks summed over all ranks); exits 1 if any check failed.
#include <fcntl.h>
#include <mpi.h>
#include <stagio/stagio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

constexpr int kWriter = 0;
constexpr int kReader = 1;
constexpr int64_t kBlock = 4096;
constexpr int64_t kFarOffset = 16 << 20;  // the owner's dirty blocks in the hint cases
constexpr int64_t kFarLength = 8 << 20;
// The region spans blocks 0-4; A's write covers part of blocks 1-3; B's second write and its
// margin read are in blocks 3 and 1, beside A's bytes.
constexpr int64_t kRegionOffset = 1000;
constexpr int64_t kRegionLength = 4 * kBlock;
constexpr int64_t kWriteOffset = kBlock + 123;
constexpr int64_t kWriteLength = 2 * kBlock + 500;
constexpr int64_t kMarginReadOffset = kBlock;
constexpr int64_t kMarginReadLength = kWriteOffset - kBlock;
constexpr int64_t kMarginWriteOffset = kWriteOffset + kWriteLength + 77;
constexpr int64_t kMarginWriteLength = 200;
static_assert(kMarginWriteOffset / kBlock == (kWriteOffset + kWriteLength) / kBlock,
              "B's margin write shares a block with A's write");
static_assert(kMarginWriteOffset + kMarginWriteLength < kRegionOffset + kRegionLength,
              "B's margin write is inside the region");

int g_rank = 0;
int g_nranks = 1;
std::string g_case = "setup";
int g_passed = 0;
int g_failed = 0;

bool g_expect_node = false;  // --expect node

bool Expect(bool ok, const std::string& what) {
  if (ok) {
    g_passed++;
  } else {
    g_failed++;
    fprintf(stderr, "FAIL [rank %d, %s] %s\n", g_rank, g_case.c_str(), what.c_str());
  }
  return ok;
}

[[noreturn]] void Abort(const std::string& why) {
  fprintf(stderr, "coherence_test: rank %d (%s): %s\n", g_rank, g_case.c_str(), why.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

std::string ErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

// Setup, synchronization and collective calls: without them the rest means nothing.
void MustSucceed(int code, const char* call) {
  if (code != MPI_SUCCESS) Abort(std::string(call) + " failed: " + ErrorText(code));
}
#define MUST(call) MustSucceed((call), #call)

// Independent accesses: a failure is a finding, and the other ranks go on.
void ExpectSuccess(int code, const char* call) {
  Expect(code == MPI_SUCCESS, std::string(call) + " failed: " + ErrorText(code));
}
#define EXPECT_SUCCESS(call) ExpectSuccess((call), #call)

// Bytes that differ between offsets and between the old (salt 1) and new (salt 2) contents.
std::vector<char> Pattern(int64_t offset, int64_t length, uint32_t salt) {
  std::vector<char> data(static_cast<size_t>(length));
  for (int64_t i = 0; i < length; i++) {
    const uint64_t x = static_cast<uint64_t>(offset + i) * 2654435761u + salt * 40503u;
    data[i] = static_cast<char>((x >> 13) ^ (x >> 5));
  }
  return data;
}

// Salts of the writes.
constexpr uint32_t kOld = 1;
constexpr uint32_t kWriterNew = 2;
constexpr uint32_t kReaderNew = 3;
constexpr uint32_t kWriterFirst = 4;
constexpr uint32_t kFar = 5;

// What the region must hold after A's and B's second writes.
std::vector<char> ExpectedRegion() {
  std::vector<char> expected = Pattern(kRegionOffset, kRegionLength, kOld);
  const auto overlay = [&](int64_t offset, int64_t length, uint32_t salt) {
    const std::vector<char> written = Pattern(offset, length, salt);
    std::copy(written.begin(), written.end(), expected.begin() + (offset - kRegionOffset));
  };
  overlay(kWriteOffset, kWriteLength, kWriterNew);
  overlay(kMarginWriteOffset, kMarginWriteLength, kReaderNew);
  return expected;
}

// "" if equal, else where they first differ; `actual` was read from file offset `offset`.
std::string Compare(const std::vector<char>& actual, const std::vector<char>& expected,
                    int64_t offset = kRegionOffset) {
  if (actual.size() != expected.size()) {
    return std::to_string(actual.size()) + " bytes instead of " + std::to_string(expected.size());
  }
  for (size_t i = 0; i < actual.size(); i++) {
    if (actual[i] != expected[i]) {
      return "first wrong byte at file offset " + std::to_string(offset + i) + " (block " +
             std::to_string((offset + i) / kBlock) + ")";
    }
  }
  return "";
}

void SyncBarrierSync(MPI_File file) {
  MUST(MPI_File_sync(file));
  MUST(MPI_Barrier(MPI_COMM_WORLD));
  MUST(MPI_File_sync(file));
}

// Writes `data` at `offset` from `rank`: alone (independent) or in a collective call where the
// other ranks write nothing.
void WriteFrom(int rank, bool collective, MPI_File file, int64_t offset,
               const std::vector<char>& data) {
  const int count = g_rank == rank ? static_cast<int>(data.size()) : 0;
  MPI_Status status;
  if (collective) {
    MUST(MPI_File_write_at_all(file, offset, data.data(), count, MPI_BYTE, &status));
  } else if (g_rank == rank) {
    EXPECT_SUCCESS(MPI_File_write_at(file, offset, data.data(), count, MPI_BYTE, &status));
  }
}

// Reads `length` bytes at `offset` from `rank`, as WriteFrom writes; other ranks get an empty
// vector.
std::vector<char> ReadAt(int rank, bool collective, MPI_File file, int64_t offset,
                         int64_t length) {
  std::vector<char> data(g_rank == rank ? length : 0);
  const int count = static_cast<int>(data.size());
  MPI_Status status;
  if (collective) {
    MUST(MPI_File_read_at_all(file, offset, data.data(), count, MPI_BYTE, &status));
  } else if (g_rank == rank) {
    EXPECT_SUCCESS(MPI_File_read_at(file, offset, data.data(), count, MPI_BYTE, &status));
  }
  return data;
}

// B's region read, checked against `expected`.
void ReaderChecksRegion(bool collective, MPI_File file, const std::vector<char>& expected,
                        const std::string& what) {
  const std::vector<char> actual = ReadAt(kReader, collective, file, kRegionOffset,
                                          kRegionLength);
  if (g_rank != kReader) return;
  const std::string difference = Compare(actual, expected);
  Expect(difference.empty(), what + ": " + difference);
}

std::vector<char> PosixRead(const std::string& path) {
  std::vector<char> data(kRegionLength);
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) Abort("open " + path + ": " + strerror(errno));
  const ssize_t got = pread(fd, data.data(), data.size(), kRegionOffset);
  close(fd);
  data.resize(got < 0 ? 0 : static_cast<size_t>(got));
  return data;
}

struct Hint {
  const char* key;
  const char* value;
};

struct Case {
  bool collective_write;
  bool collective_read;
  const Hint* hint_change;  // or nullptr
  std::string path;
};

const Hint kReblock{"stagio_block_size", "64K"};
const Hint kCacheOff{"stagio_cache", "disable"};

// The hint cases' first step: the owner writes back oldest blocks first, so these go before
// A's first version (see the file comment).
void OwnerDirtiesFarBlocks(MPI_File file) {
  const int owner = g_nranks - 1;
  if (g_rank == owner) {
    WriteFrom(owner, /*collective=*/false, file, kFarOffset, Pattern(kFarOffset, kFarLength, kFar));
  }
  MUST(MPI_Barrier(MPI_COMM_WORLD));
}

void SetHint(MPI_File file, const Hint& hint) {
  MPI_Info info;
  MUST(MPI_Info_create(&info));
  MUST(MPI_Info_set(info, hint.key, hint.value));
  MUST(MPI_File_set_info(file, info));
  MPI_Info_free(&info);
}

void RunCase(const Case& c) {
  MPI_Info info;
  MUST(MPI_Info_create(&info));
  MUST(MPI_Info_set(info, "stagio_aggregators", (std::to_string(g_nranks - 1) + ",").c_str()));
  MUST(MPI_Info_set(info, "stagio_block_size", std::to_string(kBlock).c_str()));
  MPI_File file;
  MUST(MPI_File_open(MPI_COMM_WORLD, c.path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR, info,
                     &file));
  MPI_Info_free(&info);
  if (g_expect_node) {
    MPI_Info used;
    MUST(MPI_File_get_info(file, &used));
    char value[MPI_MAX_INFO_VAL + 1] = "";
    int flag = 0;
    MPI_Info_get(used, "stagio_node_cache", MPI_MAX_INFO_VAL, value, &flag);
    Expect(flag && strcmp(value, "enable") == 0,
           std::string("the file must be in the node cache (stagio_node_cache is '") + value +
               "')");
    MPI_Info_free(&used);
  }

  const std::vector<char> old_bytes = Pattern(kRegionOffset, kRegionLength, kOld);
  WriteFrom(kReader, /*collective=*/false, file, kRegionOffset, old_bytes);
  SyncBarrierSync(file);
  ReaderChecksRegion(c.collective_read, file, old_bytes, "B must read back its own bytes");
  SyncBarrierSync(file);

  if (c.hint_change) OwnerDirtiesFarBlocks(file);
  const std::vector<char> margin =
      ReadAt(kReader, c.collective_read, file, kMarginReadOffset, kMarginReadLength);
  if (g_rank == kReader) {
    const std::string difference = Compare(
        margin, Pattern(kMarginReadOffset, kMarginReadLength, kOld), kMarginReadOffset);
    Expect(difference.empty(), "B must read the old bytes beside A's: " + difference);
  }
  WriteFrom(kReader, /*collective=*/false, file, kMarginWriteOffset,
            Pattern(kMarginWriteOffset, kMarginWriteLength, kReaderNew));
  WriteFrom(kWriter, /*collective=*/false, file, kWriteOffset,
            Pattern(kWriteOffset, kWriteLength, kWriterFirst));
  MUST(MPI_Barrier(MPI_COMM_WORLD));  // B's copies are cached before A writes
  if (c.hint_change) SetHint(file, *c.hint_change);
  WriteFrom(kWriter, c.collective_write, file, kWriteOffset,
            Pattern(kWriteOffset, kWriteLength, kWriterNew));
  SyncBarrierSync(file);
  ReaderChecksRegion(c.collective_read, file, ExpectedRegion(),
                     "after sync-barrier-sync B must see A's bytes and its own");
  MUST(MPI_File_close(&file));
  MUST(MPI_Barrier(MPI_COMM_WORLD));
  if (g_rank == 0) {
    const std::string difference = Compare(PosixRead(c.path), ExpectedRegion());
    Expect(difference.empty(), "after close the file must hold A's and B's bytes: " + difference);
  }
}

std::string MakeWorkDirectory(const std::string& parent) {
  char path[4096] = {0};
  if (g_rank == 0) {
    snprintf(path, sizeof path, "%s/stagio-coherence.XXXXXX", parent.c_str());
    if (!mkdtemp(path)) Abort(std::string("mkdtemp: ") + strerror(errno));
  }
  MUST(MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD));
  return path;
}

const char* const kCaseNames[] = {"kinds", "reblock", "cache_off"};

// `which`: "all" or a comma-separated list of kCaseNames.
bool Selected(const std::string& which, const std::string& name) {
  return which == "all" || ("," + which + ",").find("," + name + ",") != std::string::npos;
}

bool ValidSelection(const std::string& which) {
  if (which == "all") return true;
  size_t start = 0;
  while (start <= which.size()) {
    const size_t comma = std::min(which.find(',', start), which.size());
    const std::string name = which.substr(start, comma - start);
    if (std::find(std::begin(kCaseNames), std::end(kCaseNames), name) == std::end(kCaseNames)) {
      return false;
    }
    start = comma + 1;
  }
  return true;
}

std::vector<Case> Cases(const std::string& which, const std::string& dir) {
  std::vector<Case> cases;
  if (Selected(which, "kinds")) {
    for (bool collective_write : {false, true}) {
      for (bool collective_read : {false, true}) {
        const std::string name = std::string(collective_write ? "write_at_all" : "write_at") +
                                 "-" + (collective_read ? "read_at_all" : "read_at");
        cases.push_back(
            Case{collective_write, collective_read, nullptr, dir + "/" + name + ".dat"});
      }
    }
  }
  if (Selected(which, "reblock")) {
    cases.push_back(Case{false, false, &kReblock, dir + "/reblock.dat"});
  }
  if (Selected(which, "cache_off")) {
    cases.push_back(Case{false, false, &kCacheOff, dir + "/cache_off.dat"});
  }
  return cases;
}

// ---- After MPI_Finalize: what the stats say about the mode.

uint64_t CounterOf(const nlohmann::json& stats, int rank, const std::string& path,
                   const char* counter) {
  const nlohmann::json& files = stats["per_rank"][rank]["files"];
  if (!files.contains(path)) {
    Expect(false, "the stats have no entry for " + path + " at rank " + std::to_string(rank));
    return 0;
  }
  return files[path].value(counter, uint64_t{0});
}

void CheckMode(const nlohmann::json& stats, const std::vector<Case>& cases, bool collective) {
  const int owner = g_nranks - 1;
  for (const Case& c : cases) {
    g_case = c.path;
    if (!collective) {
      for (int rank = 0; rank < g_nranks; rank++) {
        for (const char* counter : {"exchanged_bytes", "remote_requests"}) {
          Expect(CounterOf(stats, rank, c.path, counter) == 0,
                 std::string("per-rank caching, yet ") + counter + " > 0 at rank " +
                     std::to_string(rank));
        }
      }
      continue;
    }
    Expect(CounterOf(stats, kWriter, c.path, "exchanged_bytes") > 0,
           "A's writes must go to the owner (exchanged_bytes of A is 0)");
    // B's independent read has no pattern, and after the sync no owner holds bytes of B's:
    // it reads storage directly (data_path.h), so only a collective read needs the owner.
    if (c.collective_read) {
      Expect(CounterOf(stats, owner, c.path, "exchanged_bytes") > 0,
             "the owner must serve B's collective read (exchanged_bytes of the owner is 0)");
    }
    Expect(CounterOf(stats, kWriter, c.path, "remote_requests") > 0,
           "A's independent first write must be a block request (remote_requests of A is 0)");
    Expect(CounterOf(stats, kReader, c.path, "remote_requests") > 0,
           "B's independent writes must be block requests (remote_requests of B is 0)");
  }
}

void CheckStats(const std::string& stats_path, const std::vector<Case>& cases, bool collective) {
  std::ifstream in(stats_path);
  const nlohmann::json stats = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!Expect(stats.is_object() && stats.contains("per_rank") &&
                  stats["per_rank"].size() == static_cast<size_t>(g_nranks),
              "stagio must write the stats of every rank to " + stats_path)) {
    return;
  }
  CheckMode(stats, cases, collective);
}

[[noreturn]] void Usage() {
  fprintf(stderr, "usage: coherence_test --expect collective|per-rank|node|node-homes "
                  "[--cases all|NAME,NAME...] [--dir DIR]\n"
                  "  NAME: kinds, reblock, cache_off\n");
  exit(64);
}

}  // namespace

int main(int argc, char** argv) {
  std::string expect;
  std::string which = "all";
  const char* tmpdir = getenv("TMPDIR");
  std::string parent = tmpdir && *tmpdir ? tmpdir : "/tmp";
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc) Usage();
    if (strcmp(argv[i], "--expect") == 0) {
      expect = argv[i + 1];
    } else if (strcmp(argv[i], "--cases") == 0) {
      which = argv[i + 1];
    } else if (strcmp(argv[i], "--dir") == 0) {
      parent = argv[i + 1];
    } else {
      Usage();
    }
  }
  if (expect != "collective" && expect != "per-rank" && expect != "node" &&
      expect != "node-homes") {
    Usage();
  }
  g_expect_node = expect == "node" || expect == "node-homes";
  if (!ValidSelection(which)) Usage();
  const char* stats_variable = getenv("STAGIO_STATS");
  const std::string stats_path = stats_variable ? stats_variable : "";

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_nranks);
  if (g_nranks < 3) Abort("needs at least 3 ranks: a writer, a reader and an owner");
  if (stats_path.empty()) Abort("needs STAGIO_STATS=PATH to tell which mode stagio was in");
  // A stats file left by an earlier run must not pass for this one's.
  if (g_rank == 0) unlink(stats_path.c_str());

  std::vector<Case> cases;
  std::string dir;
  if (Expect(stagio_is_active() == 1, "stagio_is_active() must be 1: libstagio must be linked "
                                      "ahead of MPI and not disabled")) {
    dir = MakeWorkDirectory(parent);
    cases = Cases(which, dir);
    for (const Case& c : cases) {
      g_case = c.path;
      RunCase(c);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    for (const Case& c : cases) unlink(c.path.c_str());
    if (!dir.empty()) rmdir(dir.c_str());
  }
  int totals[2] = {g_passed, g_failed};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();  // stagio writes the stats here

  if (g_rank != 0) return 0;
  g_passed = totals[0];
  g_failed = totals[1];
  if (!cases.empty()) {
    CheckStats(stats_path, cases, expect == "collective" || expect == "node-homes");
  }
  printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
