// preexec_api_test: the pre-execution API (stagio_preexec_start/join, stagio_prefetch_*) in a
// real MPI job, with slices that are wrong, late, early or never released on their own.
//
//   preexec_api_test --expect run|off|fallback [--cases all|NAME,NAME...] [--dir DIR]
//
//   --expect run       MPI provides MPI_THREAD_MULTIPLE and stagio_preexec is pp or ppis: every
//                      slice runs.
//   --expect off       STAGIO_PREEXEC=off: no slice ever runs.
//   --expect fallback  MPI provides less than MPI_THREAD_MULTIPLE (the thread_level_cap shim):
//                      the first stagio_preexec_start warns once, from rank 0, and no slice runs.
//
// In every mode the program's own reads must return the file's bytes. Cases (each on its own
// file, every rank with its own region of it; all run in this order with "all"):
//   warning      two runs of a trivial slice, stderr captured around the starts: exactly one
//                line naming MPI_THREAD_MULTIPLE on rank 0 with fallback, none otherwise. First,
//                because the warning is printed once per process.
//   bad_calls    the slice reads past the end of file, with a negative count, offset or seek,
//                MPI_DATATYPE_NULL, on unknown handles and an unsupported view; the program's
//                reads are right, and the stats count the dropped calls (preexec_dropped).
//   open_later   the slice waits in stagio_prefetch_open for the program's open of the file and
//                reads what the program will read, before it does; the program's reads are
//                right and, on one rank, all served by the helper's fetches (no demand fetch).
//   open_too_late  the slice opens the file only after the program has opened and closed it:
//                stagio_prefetch_open gives MPI_FILE_NULL, and the slice's calls on it count as
//                lagging (preexec_skipped_lagging), not as wrong (preexec_dropped).
//   deleted      the file is unlinked (POSIX, rank 0) while open; helper and program read it.
//   dirty        the program writes a region and reads it back, the slice mirrors both (a
//                read that depends on a pending write): the program reads what it wrote, and
//                the file holds it after close.
//   closed_file  the slice goes on reading a file the program has closed (and reopened, so the
//                handle value may come back).
//   join         a slice that waits for a sync the program never makes, for the open of a file
//                the program never opens, for a close, and then loops: stagio_preexec_join must
//                release every wait and end the run.
// More, not in "all", each in a run of its own because a failure may crash the job:
//   huge_count   the slice reads 2^40 bytes through a noncontiguous view of a small file.
//   reblock      the program changes stagio_block_size 40 times (set_info), reading its region
//                after each change, while the slice prefetches bytes all over it.
//
// Needs STAGIO_STATS=PATH: after MPI_Finalize, rank 0 checks the counters. Linked directly with
// libstagio (ahead of MPI), so it runs unchanged under the thread_level_cap shim. Prints
// "N passed, M failed" (summed over ranks); exits 1 if any check failed.
#include <fcntl.h>
#include <mpi.h>
#include <stagio/stagio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

constexpr int64_t kBlock = 16 * 1024;        // stagio_block_size of every file (hint)
constexpr int64_t kRegion = 9 * kBlock + 321;  // each rank's part of a file, off block bounds
constexpr int64_t kChunk = 7000;             // the program's reads
// Only keeps a broken run from hanging: nothing waits for it to pass.
constexpr std::chrono::seconds kHangGuard(60);

enum class Expectation { kRun, kOff, kFallback };

struct Job {
  int rank = 0;
  int nranks = 1;
  Expectation expect = Expectation::kRun;
  std::string dir;
  std::string current = "setup";
  int passed = 0;
  int failed = 0;
  bool slices_run() const { return expect == Expectation::kRun; }
  int64_t region_offset() const { return rank * kRegion; }
};
Job g_job;

bool Check(bool ok, const std::string& what) {
  ok ? ++g_job.passed : ++g_job.failed;
  if (!ok) fprintf(stderr, "FAIL [rank %d, %s] %s\n", g_job.rank, g_job.current.c_str(),
                   what.c_str());
  return ok;
}

[[noreturn]] void Die(const std::string& why) {
  fprintf(stderr, "preexec_api_test: rank %d (%s): %s\n", g_job.rank, g_job.current.c_str(),
          why.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

// Setup and collective calls: without them the rest means nothing.
void Must(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  Die(std::string(call) + " failed: " + std::string(text, length));
}
#define MUST(call) Must((call), #call)

bool WaitFor(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The bytes of a file at `offset` as version `salt` of it has them.
std::vector<char> Data(int64_t offset, int64_t length, int salt) {
  std::vector<char> bytes(static_cast<size_t>(length));
  for (int64_t i = 0; i < length; ++i) {
    const uint64_t x = static_cast<uint64_t>(offset + i) * 0x9E3779B1u + salt * 0x85EBCA6Bu;
    bytes[i] = static_cast<char>(x >> 17);
  }
  return bytes;
}

// ---- files

std::string PathOf(const std::string& name) { return g_job.dir + "/" + name + ".dat"; }

MPI_File Open(const std::string& path, int amode) {
  MPI_Info info;
  MUST(MPI_Info_create(&info));
  MUST(MPI_Info_set(info, "stagio_block_size", "16K"));  // plain MPI ignores it
  MPI_File file = MPI_FILE_NULL;
  MUST(MPI_File_open(MPI_COMM_WORLD, path.c_str(), amode, info, &file));
  MUST(MPI_Info_free(&info));
  return file;
}

// Every rank writes version `salt` of its region; the file is closed again.
void CreateFile(const std::string& path, int salt) {
  MPI_File file = Open(path, MPI_MODE_CREATE | MPI_MODE_RDWR);
  const std::vector<char> data = Data(g_job.region_offset(), kRegion, salt);
  MUST(MPI_File_write_at_all(file, g_job.region_offset(), data.data(), static_cast<int>(kRegion),
                             MPI_BYTE, MPI_STATUS_IGNORE));
  MUST(MPI_File_close(&file));
}

// The program reads [offset, offset + length) in kChunk pieces with read_at and checks them
// against version `salt`.
void ReadAndCheck(MPI_File file, int64_t offset, int64_t length, int salt) {
  const std::vector<char> expected = Data(offset, length, salt);
  for (int64_t done = 0; done < length; done += kChunk) {
    const int64_t piece = std::min(kChunk, length - done);
    std::vector<char> buffer(static_cast<size_t>(piece), '\x5a');
    MPI_Status status;
    const int rc = MPI_File_read_at(file, offset + done, buffer.data(), static_cast<int>(piece),
                                    MPI_BYTE, &status);
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    if (!Check(rc == MPI_SUCCESS && count == piece,
               "read_at " + std::to_string(offset + done) + " returned rc " +
                   std::to_string(rc) + ", count " + std::to_string(count))) {
      return;
    }
    if (!Check(std::equal(buffer.begin(), buffer.end(), expected.begin() + done),
               "read_at " + std::to_string(offset + done) + " returned wrong bytes")) {
      return;
    }
  }
}

// ---- helper runs

// What a slice reports back to the program's thread. `stage` marks progress through the
// slice (case-defined); `finished` is set as it returns.
struct SliceState {
  std::atomic<int> started{0};
  std::atomic<int> stage{0};
  std::atomic<int> finished{0};
  std::atomic<int> findings{0};  // checks the slice itself failed (see SliceCheck)
};

void SliceCheck(SliceState& state, bool ok, const char* what) {
  if (ok) return;
  state.findings.fetch_add(1);
  fprintf(stderr, "FAIL [rank %d, %s, in the slice] %s\n", g_job.rank, g_job.current.c_str(),
          what);
}

// Waits until the slice has reached `stage` when slices run; at once when they do not.
void AwaitStage(SliceState& state, int stage) {
  if (!g_job.slices_run()) return;
  Check(WaitFor([&] { return state.stage.load() >= stage; }),
        "the slice did not reach stage " + std::to_string(stage));
}

// After stagio_preexec_join: the slice ran to its end when slices run, never otherwise.
void CheckRan(SliceState& state) {
  if (g_job.slices_run()) {
    Check(state.started.load() == 1 && state.finished.load() == 1,
          "the slice did not run to its end before join returned");
    Check(state.findings.load() == 0, "the slice found problems (above)");
  } else {
    Check(state.started.load() == 0, "the slice ran although pre-execution is off");
  }
}

// A slice function over an argument of type Arg (which holds `state`).
template <typename Arg, void (*Body)(Arg&)>
void Slice(void* raw) {
  Arg& arg = *static_cast<Arg*>(raw);
  arg.state.started.fetch_add(1);
  Body(arg);
  arg.state.finished.store(1);
}

// ---- warning

struct TrivialArg {
  SliceState state;
};
void TrivialBody(TrivialArg&) {}

// Runs `body` with this process's stderr going to a file; returns what was written.
std::string CaptureStderr(const std::function<void()>& body) {
  char path[] = "/tmp/preexec_api_test.stderr.XXXXXX";
  const int capture = mkstemp(path);
  if (capture < 0) Die(std::string("mkstemp: ") + strerror(errno));
  fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  dup2(capture, STDERR_FILENO);
  body();
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(capture);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  unlink(path);
  return text.str();
}

void WarningCase() {
  TrivialArg first, second;
  const std::string output = CaptureStderr([&] {
    stagio_preexec* a = stagio_preexec_start(Slice<TrivialArg, TrivialBody>, &first, nullptr, 0);
    stagio_preexec* b = stagio_preexec_start(Slice<TrivialArg, TrivialBody>, &second, nullptr, 0);
    stagio_preexec_join(a);
    stagio_preexec_join(b);
  });
  int lines = 0;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) {
    lines += line.find("MPI_THREAD_MULTIPLE") != std::string::npos ? 1 : 0;
  }
  const int expected = g_job.expect == Expectation::kFallback && g_job.rank == 0 ? 1 : 0;
  Check(lines == expected, "expected " + std::to_string(expected) +
                               " line(s) naming MPI_THREAD_MULTIPLE, got " +
                               std::to_string(lines) + ": " + output);
  CheckRan(first.state);
  CheckRan(second.state);
  // Not a helper thread, or no runner: the calls do nothing.
  stagio_prefetch_read_at(MPI_FILE_NULL, 0, 10, MPI_BYTE);
  stagio_preexec_join(nullptr);
  stagio_preexec_join(stagio_preexec_start(nullptr, nullptr, nullptr, 0));
}

// ---- bad_calls

struct FileArg {
  SliceState state;
  MPI_File file = MPI_FILE_NULL;
  int64_t offset = 0;  // the rank's region
};

// Creates the case's file `name` as version `salt`, and opens it for `arg`.
std::string OpenCaseFile(FileArg& arg, const char* name, int salt) {
  const std::string path = PathOf(name);
  CreateFile(path, salt);
  arg.file = Open(path, MPI_MODE_RDWR);
  arg.offset = g_job.region_offset();
  return path;
}

template <void (*Body)(FileArg&)>
stagio_preexec* StartOn(FileArg& arg) {
  return stagio_preexec_start(Slice<FileArg, Body>, &arg, &arg.file, 1);
}

// The shape of most cases: the case's file is created and opened, `before_start(path)` runs, a
// helper runs Body on it; once the slice has reached stage 1 the program reads its region and
// checks it; join; close.
template <void (*Body)(FileArg&)>
void ReadBesideSlice(const char* name, int salt,
                     const std::function<void(const std::string&)>& before_start = nullptr) {
  FileArg arg;
  const std::string path = OpenCaseFile(arg, name, salt);
  if (before_start) before_start(path);
  stagio_preexec* run = StartOn<Body>(arg);
  AwaitStage(arg.state, 1);
  ReadAndCheck(arg.file, arg.offset, kRegion, salt);
  stagio_preexec_join(run);
  CheckRan(arg.state);
  MUST(MPI_File_close(&arg.file));
}

void BadCallsBody(FileArg& arg) {
  const MPI_File file = arg.file;
  // A handle no file has: the address of something that is not a file.
  const MPI_File unknown = reinterpret_cast<MPI_File>(&arg);
  stagio_prefetch_read_at(file, int64_t{1} << 40, 100, MPI_BYTE);  // past the end of file
  stagio_prefetch_read_at(file, arg.offset + kRegion - 10, 1000, MPI_BYTE);  // across the end
  stagio_prefetch_read_at(file, 0, -5, MPI_BYTE);
  stagio_prefetch_read_at(file, 0, 10, MPI_DATATYPE_NULL);
  stagio_prefetch_read_at(file, -100, 10, MPI_BYTE);
  stagio_prefetch_read(file, -1, MPI_INT);
  stagio_prefetch_read_all(file, 10, MPI_DATATYPE_NULL);
  stagio_prefetch_write_at(file, 0, -1, MPI_BYTE);
  stagio_prefetch_write_at_all(file, -8, 1, MPI_BYTE);
  stagio_prefetch_seek(file, -10, MPI_SEEK_SET);
  stagio_prefetch_seek(file, -10, MPI_SEEK_CUR);
  stagio_prefetch_seek(file, 0, 12345);  // no such whence
  // Datatypes MPI rejects must be dropped before any MPI call that would raise on
  // MPI_COMM_WORLD, which aborts the job, and before the flattening, which would crash.
  MPI_Datatype freed, uncommitted;
  MUST(MPI_Type_contiguous(2, MPI_INT, &freed));
  MUST(MPI_Type_commit(&freed));
  const MPI_Datatype freed_handle = freed;
  MUST(MPI_Type_free(&freed));
  MUST(MPI_Type_vector(2, 1, 2, MPI_INT, &uncommitted));
  std::vector<MPI_Datatype> rejected = {freed_handle, uncommitted};
#if defined(MPICH)
  rejected.push_back(static_cast<MPI_Datatype>(0x12345));  // an integer MPICH can check
#endif
  for (MPI_Datatype bad : rejected) {
    stagio_prefetch_read_at(file, arg.offset, 4, bad);
    stagio_prefetch_read(file, 4, bad);
    stagio_prefetch_write_at(file, arg.offset, 4, bad);
    stagio_prefetch_set_view(file, 0, MPI_BYTE, bad, "native", MPI_INFO_NULL);
    stagio_prefetch_set_view(file, 0, bad, MPI_BYTE, "native", MPI_INFO_NULL);
  }
  MUST(MPI_Type_free(&uncommitted));
  // Counts whose byte size overflows, or lies past the largest file offset.
  stagio_prefetch_read_at(file, 0, (MPI_Count{1} << 61) + 1, MPI_DOUBLE);
  stagio_prefetch_read_at(file, 0, MPI_Count{1} << 60, MPI_DOUBLE);
  stagio_prefetch_read_at(file, int64_t{1} << 62, 1, MPI_INT);
  for (MPI_File bad : {unknown, MPI_FILE_NULL}) {
    stagio_prefetch_read_at(bad, 0, 10, MPI_BYTE);
    stagio_prefetch_read(bad, 10, MPI_BYTE);
    stagio_prefetch_write(bad, 10, MPI_BYTE);
    stagio_prefetch_seek(bad, 0, MPI_SEEK_SET);
    stagio_prefetch_set_view(bad, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    stagio_prefetch_sync(bad);
    stagio_prefetch_set_size(bad, 0);
  }
  MPI_File opened = unknown;
  stagio_prefetch_open(MPI_COMM_WORLD, nullptr, MPI_MODE_RDONLY, MPI_INFO_NULL, &opened);
  SliceCheck(arg.state, opened == MPI_FILE_NULL, "prefetch_open(NULL name) left a handle");
  stagio_prefetch_open(MPI_COMM_WORLD, "x", MPI_MODE_RDONLY, MPI_INFO_NULL, nullptr);
  stagio_prefetch_close(nullptr);
  MPI_File closed = unknown;
  stagio_prefetch_close(&closed);  // a handle the helper does not know: returns at once
  SliceCheck(arg.state, closed == MPI_FILE_NULL, "prefetch_close did not clear the handle");
  // Views the helper cannot follow; the file's later calls then fetch nothing.
  stagio_prefetch_set_view(file, -1, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
  stagio_prefetch_set_view(file, 0, MPI_DATATYPE_NULL, MPI_BYTE, "native", MPI_INFO_NULL);
  stagio_prefetch_set_view(file, 0, MPI_BYTE, MPI_BYTE, nullptr, MPI_INFO_NULL);
  stagio_prefetch_set_view(file, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL);
  stagio_prefetch_read_at(file, arg.offset, kRegion, MPI_BYTE);
  arg.state.stage.store(1);
}

// Every bad call is made before the program reads (stage 1).
void BadCallsCase() { ReadBesideSlice<BadCallsBody>("bad_calls", 1); }

// ---- open_later

struct OpenLaterArg {
  SliceState state;
  std::string path;
  int64_t offset = 0;
  MPI_File seen = MPI_FILE_NULL;  // the handle stagio_prefetch_open gave
  MPI_File after_close = MPI_FILE_NULL;
};

void OpenLaterBody(OpenLaterArg& arg) {
  MPI_File file = MPI_FILE_NULL;
  stagio_prefetch_open(MPI_COMM_WORLD, arg.path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  arg.seen = file;
  // Exactly the program's calls: read_at of each chunk of the region.
  for (int64_t done = 0; done < kRegion; done += kChunk) {
    stagio_prefetch_read_at(file, arg.offset + done, std::min(kChunk, kRegion - done), MPI_BYTE);
  }
  arg.state.stage.store(1);
  stagio_prefetch_close(&file);  // returns once the program has closed it
  arg.after_close = file;
  arg.state.stage.store(2);
}

void OpenLaterCase() {
  const std::string path = PathOf("open_later");
  CreateFile(path, 2);
  OpenLaterArg arg;
  arg.path = path;
  arg.offset = g_job.region_offset();
  arg.after_close = reinterpret_cast<MPI_File>(&arg);
  stagio_preexec* run = stagio_preexec_start(Slice<OpenLaterArg, OpenLaterBody>, &arg, nullptr, 0);
  MPI_File file = Open(path, MPI_MODE_RDONLY);
  const MPI_File handle = file;
  AwaitStage(arg.state, 1);  // the helper has fetched the region
  ReadAndCheck(file, arg.offset, kRegion, 2);
  MUST(MPI_File_close(&file));
  AwaitStage(arg.state, 2);  // its prefetch_close saw the close
  stagio_preexec_join(run);
  CheckRan(arg.state);
  if (g_job.slices_run()) {
    Check(arg.seen == handle, "stagio_prefetch_open did not give the program's handle");
    Check(arg.after_close == MPI_FILE_NULL, "stagio_prefetch_close did not clear the handle");
  }
}

// ---- deleted

void ReadRegionBody(FileArg& arg) {
  for (int64_t done = 0; done < kRegion; done += kChunk) {
    stagio_prefetch_read_at(arg.file, arg.offset + done, std::min(kChunk, kRegion - done),
                            MPI_BYTE);
  }
  arg.state.stage.store(1);
}

void DeletedCase() {
  ReadBesideSlice<ReadRegionBody>("deleted", 3, [](const std::string& path) {
    MUST(MPI_Barrier(MPI_COMM_WORLD));  // every rank has it open
    if (g_job.rank == 0) {
      Check(unlink(path.c_str()) == 0, "unlink: " + std::string(strerror(errno)));
    }
    MUST(MPI_Barrier(MPI_COMM_WORLD));
  });
}

// ---- dirty

constexpr int kDirtyRounds = 24;
// Round i's region: overlapping the previous rounds' and crossing blocks.
int64_t DirtyOffset(int64_t region, int round) { return region + (round * 1531) % (kRegion / 2); }
int64_t DirtyLength(int round) { return 1000 + (round * 7919) % (3 * kBlock); }
// Even rounds write and read at explicit offsets, odd ones through the file pointer.
bool ThroughPointer(int round) { return round % 2 == 1; }

// The slice marks stage round + 1 once it has recorded round's write, and the program makes
// that write only then: the slice's read of the round comes while the write is pending, about
// to be made, or made (a dirty wait, or a lagging skip), never long after the program is done.
void DirtyBody(FileArg& arg) {
  for (int round = 0; round < kDirtyRounds; ++round) {
    const int64_t offset = DirtyOffset(arg.offset, round);
    const int64_t length = DirtyLength(round);
    if (ThroughPointer(round)) {
      stagio_prefetch_seek(arg.file, offset, MPI_SEEK_SET);
      stagio_prefetch_write(arg.file, length, MPI_BYTE);
      arg.state.stage.store(round + 1);
      stagio_prefetch_seek(arg.file, -length, MPI_SEEK_CUR);
      stagio_prefetch_read(arg.file, length, MPI_BYTE);
    } else {
      stagio_prefetch_write_at(arg.file, offset, length, MPI_BYTE);
      arg.state.stage.store(round + 1);
      stagio_prefetch_read_at(arg.file, offset, length, MPI_BYTE);
    }
  }
}

void DirtyCase() {
  FileArg arg;
  const std::string path = OpenCaseFile(arg, "dirty", 4);
  // What the region holds after each round: version 4, overwritten by round i's version 100+i.
  std::vector<char> region = Data(arg.offset, kRegion, 4);
  stagio_preexec* run = StartOn<DirtyBody>(arg);
  for (int round = 0; round < kDirtyRounds; ++round) {
    const int64_t offset = DirtyOffset(arg.offset, round);
    const int64_t length = DirtyLength(round);
    const std::vector<char> data = Data(offset, length, 100 + round);
    std::copy(data.begin(), data.end(), region.begin() + (offset - arg.offset));
    std::vector<char> back(static_cast<size_t>(length), '\x5a');
    AwaitStage(arg.state, round + 1);
    if (ThroughPointer(round)) {
      MUST(MPI_File_seek(arg.file, offset, MPI_SEEK_SET));
      MUST(MPI_File_write(arg.file, data.data(), static_cast<int>(length), MPI_BYTE,
                          MPI_STATUS_IGNORE));
      MUST(MPI_File_seek(arg.file, -length, MPI_SEEK_CUR));
      MUST(MPI_File_read(arg.file, back.data(), static_cast<int>(length), MPI_BYTE,
                         MPI_STATUS_IGNORE));
    } else {
      MUST(MPI_File_write_at(arg.file, offset, data.data(), static_cast<int>(length), MPI_BYTE,
                             MPI_STATUS_IGNORE));
      MUST(MPI_File_read_at(arg.file, offset, back.data(), static_cast<int>(length), MPI_BYTE,
                            MPI_STATUS_IGNORE));
    }
    Check(back == data, "round " + std::to_string(round) + ": the program did not read back "
                        "what it wrote");
  }
  stagio_preexec_join(run);
  CheckRan(arg.state);
  MUST(MPI_File_close(&arg.file));
  // The file, read with POSIX (stagio does not intercept it), holds the last version.
  std::vector<char> stored(static_cast<size_t>(kRegion), '\x5a');
  const int fd = open(path.c_str(), O_RDONLY);
  const ssize_t got = fd >= 0 ? pread(fd, stored.data(), stored.size(), arg.offset) : -1;
  if (fd >= 0) close(fd);
  Check(got == kRegion && stored == region, "the file does not hold the program's writes");
}

// ---- closed_file

void ClosedFileBody(FileArg& arg) {
  stagio_prefetch_read_at(arg.file, arg.offset, kChunk, MPI_BYTE);
  arg.state.stage.store(1);
  // Wait (as a slice may) until the program has closed the file and opened it again.
  while (arg.state.stage.load() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  for (int i = 0; i < 20; ++i) {
    stagio_prefetch_read_at(arg.file, arg.offset + i * kChunk % kRegion, kChunk, MPI_BYTE);
    stagio_prefetch_read(arg.file, kChunk, MPI_BYTE);
    stagio_prefetch_write_at(arg.file, arg.offset, 10, MPI_BYTE);
  }
  stagio_prefetch_sync(arg.file);  // the program never syncs the new file: released by close
  arg.state.stage.store(3);
}

void ClosedFileCase() {
  FileArg arg;
  const std::string path = OpenCaseFile(arg, "closed_file", 5);
  stagio_preexec* run = StartOn<ClosedFileBody>(arg);
  AwaitStage(arg.state, 1);
  MPI_File file = arg.file;
  MUST(MPI_File_close(&file));
  MPI_File again = Open(path, MPI_MODE_RDWR);
  arg.state.stage.store(std::max(arg.state.stage.load(), 2));
  AwaitStage(arg.state, 3);
  ReadAndCheck(again, arg.offset, kRegion, 5);
  stagio_preexec_join(run);
  CheckRan(arg.state);
  MUST(MPI_File_close(&again));
}

// ---- join

struct JoinArg {
  SliceState state;
  MPI_File file = MPI_FILE_NULL;
  std::string never_opened;
  MPI_File opened = MPI_FILE_NULL;
};

void JoinBody(JoinArg& arg) {
  arg.state.stage.store(1);
  stagio_prefetch_sync(arg.file);  // the program makes no call on the file until join
  arg.state.stage.store(2);
  arg.opened = reinterpret_cast<MPI_File>(&arg);
  stagio_prefetch_open(MPI_COMM_WORLD, arg.never_opened.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL,
                       &arg.opened);
  arg.state.stage.store(3);
  MPI_File copy = arg.file;
  stagio_prefetch_close(&copy);  // the program closes it only after join
  arg.state.stage.store(4);
  for (int i = 0; i < 100000; ++i) stagio_prefetch_read_at(arg.file, 0, kRegion, MPI_BYTE);
}

void JoinCase() {
  const std::string path = PathOf("join");
  CreateFile(path, 6);
  JoinArg arg;
  arg.file = Open(path, MPI_MODE_RDWR);
  arg.never_opened = PathOf("never_opened");
  stagio_preexec* run = stagio_preexec_start(Slice<JoinArg, JoinBody>, &arg, &arg.file, 1);
  AwaitStage(arg.state, 1);
  stagio_preexec_join(run);  // must return: every wait of the slice is released
  CheckRan(arg.state);
  if (g_job.slices_run()) {
    Check(arg.state.stage.load() == 4, "the slice did not get past its waits");
    Check(arg.opened == MPI_FILE_NULL, "prefetch_open released by join left a handle");
  }
  ReadAndCheck(arg.file, g_job.region_offset(), kRegion, 6);
  MUST(MPI_File_close(&arg.file));
}

// ---- huge_count

void HugeCountBody(FileArg& arg) {
  // 8 bytes of every 16 of the file, from the start of the region.
  MPI_Datatype block, filetype;
  MUST(MPI_Type_contiguous(8, MPI_BYTE, &block));
  MUST(MPI_Type_create_resized(block, 0, 16, &filetype));
  MUST(MPI_Type_commit(&filetype));
  MUST(MPI_Type_free(&block));
  stagio_prefetch_set_view(arg.file, arg.offset, MPI_BYTE, filetype, "native", MPI_INFO_NULL);
  stagio_prefetch_read_at(arg.file, 0, MPI_Count{1} << 40, MPI_BYTE);
  stagio_prefetch_read(arg.file, MPI_Count{1} << 40, MPI_BYTE);
  MUST(MPI_Type_free(&filetype));
  arg.state.stage.store(1);
}

// ---- reblock

constexpr int kReblockCycles = 40;

// Keeps prefetching single bytes all over the rank's region (a byte announces little, so the
// run-ahead budget never holds the slice back) until the program says stop (stage 2).
void ReblockBody(FileArg& arg) {
  arg.state.stage.store(1);
  for (int64_t n = 0; arg.state.stage.load() < 2; ++n) {
    stagio_prefetch_read_at(arg.file, arg.offset + (n * 4099) % kRegion, 1, MPI_BYTE);
  }
}

void SetBlockSize(MPI_File file, const char* size) {
  MPI_Info info;
  MUST(MPI_Info_create(&info));
  MUST(MPI_Info_set(info, "stagio_block_size", size));
  MUST(MPI_File_set_info(file, info));
  MUST(MPI_Info_free(&info));
}

// The program changes stagio_block_size back and forth (set_info: stagio writes back, drops the
// file's blocks and cuts it anew) while the slice prefetches, and reads its region after each
// change. Whatever the slice fetched under the old block size must not be read under the new.
void ReblockCase() {
  FileArg arg;
  OpenCaseFile(arg, "reblock", 9);
  stagio_preexec* run = StartOn<ReblockBody>(arg);
  AwaitStage(arg.state, 1);
  const int failed_before = g_job.failed;
  // Until the first wrong read on any rank: set_info is collective, so all stop together.
  for (int cycle = 0, any_failed = 0; cycle < kReblockCycles && !any_failed; ++cycle) {
    SetBlockSize(arg.file, cycle % 2 == 0 ? "4K" : "16K");
    ReadAndCheck(arg.file, arg.offset, kRegion, 9);
    any_failed = g_job.failed != failed_before;
    MUST(MPI_Allreduce(MPI_IN_PLACE, &any_failed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD));
  }
  arg.state.stage.store(2);
  stagio_preexec_join(run);
  CheckRan(arg.state);
  MUST(MPI_File_close(&arg.file));
}

// ---- cases and the stats

// ---- open_too_late

struct OpenTooLateArg {
  SliceState state;
  std::string path;
  std::atomic<bool> closed{false};
  MPI_File seen = MPI_FILE_NULL;
};

void OpenTooLateBody(OpenTooLateArg& arg) {
  while (!arg.closed.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  MPI_File file = reinterpret_cast<MPI_File>(&arg);
  stagio_prefetch_open(MPI_COMM_WORLD, arg.path.c_str(), MPI_MODE_RDONLY, MPI_INFO_NULL, &file);
  arg.seen = file;
  for (int i = 0; i < 4; ++i) stagio_prefetch_read_at(file, i * kChunk, kChunk, MPI_BYTE);
  arg.state.stage.store(1);
}

void OpenTooLateCase() {
  const std::string path = PathOf("open_too_late");
  CreateFile(path, 9);
  OpenTooLateArg arg;
  arg.path = path;
  arg.seen = reinterpret_cast<MPI_File>(&arg);
  stagio_preexec* run =
      stagio_preexec_start(Slice<OpenTooLateArg, OpenTooLateBody>, &arg, nullptr, 0);
  MPI_File file = Open(path, MPI_MODE_RDONLY);
  ReadAndCheck(file, g_job.region_offset(), kRegion, 9);
  MUST(MPI_File_close(&file));
  arg.closed.store(true);
  AwaitStage(arg.state, 1);
  stagio_preexec_join(run);
  CheckRan(arg.state);
  if (g_job.slices_run()) {
    Check(arg.seen == MPI_FILE_NULL, "prefetch_open of a file closed again left a handle");
  }
}

struct Case {
  const char* name;
  bool in_all;
  void (*run)();
};
const Case kCases[] = {
    {"warning", true, WarningCase},
    {"bad_calls", true, BadCallsCase},
    {"open_later", true, OpenLaterCase},
    {"open_too_late", true, OpenTooLateCase},
    {"deleted", true, DeletedCase},
    {"dirty", true, DirtyCase},
    {"closed_file", true, ClosedFileCase},
    {"join", true, JoinCase},
    {"huge_count", false, [] { ReadBesideSlice<HugeCountBody>("huge_count", 7); }},
    {"reblock", false, ReblockCase},
};

bool Selected(const std::string& which, const Case& c) {
  if (which == "all") return c.in_all;
  return ("," + which + ",").find(std::string(",") + c.name + ",") != std::string::npos;
}

bool Selected(const std::string& which, const char* name) {
  for (const Case& c : kCases) {
    if (strcmp(c.name, name) == 0) return Selected(which, c);
  }
  return false;
}

uint64_t Counter(const nlohmann::json& files, const std::string& path, const char* counter) {
  if (!files.contains(path)) return 0;
  return files[path].value(counter, uint64_t{0});
}

void CheckStats(const std::string& stats_path, const std::string& which) {
  g_job.current = "stats";
  std::ifstream in(stats_path);
  const nlohmann::json stats = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!Check(stats.is_object() && stats.contains("total"),
             "stagio did not write the stats to " + stats_path)) {
    return;
  }
  const nlohmann::json& files = stats["total"]["files"];
  const std::string unattributed = "(pre-execution helper: unknown file handles)";
  if (!g_job.slices_run()) {
    for (const Case& c : kCases) {
      if (!Selected(which, c)) continue;
      Check(Counter(files, PathOf(c.name), "preexec_calls") == 0,
            std::string(c.name) + ": preexec_calls > 0 without pre-execution");
    }
    Check(!files.contains(unattributed), "calls on unknown handles counted without a helper");
    return;
  }
  if (Selected(which, "bad_calls")) {
    Check(Counter(files, PathOf("bad_calls"), "preexec_dropped") > 0,
          "bad_calls: no preexec_dropped for the file");
    Check(Counter(files, unattributed, "preexec_dropped") > 0,
          "bad_calls: no preexec_dropped for unknown handles");
  }
  if (Selected(which, "open_too_late")) {
    Check(Counter(files, unattributed, "preexec_skipped_lagging") > 0,
          "open_too_late: calls on the handle of a late open not counted as lagging");
    if (!Selected(which, "bad_calls")) {
      Check(Counter(files, unattributed, "preexec_dropped") == 0,
            "open_too_late: calls on the handle of a late open counted as dropped");
    }
  }
  if (Selected(which, "open_later")) {
    const std::string path = PathOf("open_later");
    Check(Counter(files, path, "preexec_calls") > 0, "open_later: preexec_calls is 0");
    if (g_job.nranks == 1) {
      // Without pattern prefetching (STAGIO_PREFETCH=none), only the helper prefetches.
      Check(Counter(files, path, "prefetch_issued") > 0, "open_later: prefetch_issued is 0");
      Check(Counter(files, path, "demand_fetches") == 0,
            "open_later: the program's reads went to storage after the helper's fetches");
    }
  }
}

[[noreturn]] void Usage() {
  fprintf(stderr, "usage: preexec_api_test --expect run|off|fallback [--cases all|NAME,...] "
                  "[--dir DIR]\n  NAME:");
  for (const Case& c : kCases) fprintf(stderr, " %s", c.name);
  fprintf(stderr, "\n");
  exit(64);
}

}  // namespace

int main(int argc, char** argv) {
  std::string expect, which = "all";
  const char* tmpdir = getenv("TMPDIR");
  std::string parent = tmpdir && *tmpdir ? tmpdir : "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--expect") {
      expect = argv[i + 1];
    } else if (flag == "--cases") {
      which = argv[i + 1];
    } else if (flag == "--dir") {
      parent = argv[i + 1];
    } else {
      Usage();
    }
  }
  if (argc % 2 != 1) Usage();
  if (expect == "run") {
    g_job.expect = Expectation::kRun;
  } else if (expect == "off") {
    g_job.expect = Expectation::kOff;
  } else if (expect == "fallback") {
    g_job.expect = Expectation::kFallback;
  } else {
    Usage();
  }
  bool any = false;
  for (const Case& c : kCases) any = any || Selected(which, c);
  if (!any) Usage();
  const char* stats_variable = getenv("STAGIO_STATS");
  const std::string stats_path = stats_variable ? stats_variable : "";

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_job.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_job.nranks);
  if (stats_path.empty()) Die("needs STAGIO_STATS=PATH");
  if (g_job.rank == 0) unlink(stats_path.c_str());  // an earlier run's must not pass for ours
  int provided = 0;
  MPI_Query_thread(&provided);
  Check(stagio_is_active() == 1, "stagio_is_active() must be 1");
  Check((provided == MPI_THREAD_MULTIPLE) == (g_job.expect != Expectation::kFallback),
        "MPI provides thread level " + std::to_string(provided) + ", unexpected for --expect " +
            expect);

  char dir[4096] = {0};
  if (g_job.rank == 0) {
    snprintf(dir, sizeof dir, "%s/stagio-preexec-api.XXXXXX", parent.c_str());
    if (!mkdtemp(dir)) Die(std::string("mkdtemp: ") + strerror(errno));
  }
  MUST(MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD));
  g_job.dir = dir;
  for (const Case& c : kCases) {
    if (!Selected(which, c)) continue;
    g_job.current = c.name;
    c.run();
    MUST(MPI_Barrier(MPI_COMM_WORLD));
  }
  if (g_job.rank == 0) {
    for (const Case& c : kCases) unlink(PathOf(c.name).c_str());
    rmdir(dir);
  }
  int totals[2] = {g_job.passed, g_job.failed};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();  // stagio writes the stats here

  if (g_job.rank != 0) return 0;
  g_job.passed = totals[0];
  g_job.failed = totals[1];
  CheckStats(stats_path, which);
  printf("%d passed, %d failed\n", g_job.passed, g_job.failed);
  return g_job.failed == 0 ? 0 : 1;
}
