// fault_test: storage failures must surface as MPI errors, at the right call, without losing
// data that was reported written.
//
//   fault_test [--cases abcdefg] [--dir DIR]
//
// Linked directly with libstagio (ahead of MPI) and run with STAGIO_DRIVER=fault, which lets
// stagio_inject_faults() make the storage below the cache fail. Cases:
//   a  write-back fails at MPI_File_sync: MPI_ERR_IO, the file's error handler is called; after
//      the fault clears, a second sync succeeds and every byte written is in the file.
//   b  write-back fails at MPI_File_close: MPI_ERR_IO and the error handler is called.
//   c  a read of uncached data fails with MPI_ERR_IO; after the fault clears, the same read
//      returns the right bytes.
//   d  (needs STAGIO_CACHE_SIZE=1) a cache smaller than any request: random writes and reads
//      agree with an in-memory model, and so does the file afterwards.
//   e  (needs STAGIO_CACHE_SIZE=4M STAGIO_BLOCK_SIZE=64K) write-back in the background fails
//      ("write=fail_after:2"): the next sync reports MPI_ERR_IO; after the fault clears, the
//      data written before and after the failure is intact.
//   f  stagio's own open of the file's storage fails on the last rank only ("open=fail"): the
//      open must still succeed everywhere, every rank must leave the file to MPI (no stagio
//      hints in MPI_File_get_info), nothing may hang, and the bytes must be right.
//   g  arguments past what any file can hold, which plain MPICH 4.0 cannot serve as a
//      reference for (its _c calls assert that the count fits an int, and it computes byte
//      offsets that wrap around): counts whose byte size overflows or exceeds the largest file
//      offset, and offsets whose byte position does, in the plain, _c, nonblocking and
//      collective forms, fail with MPI_ERR_ARG through the file's error handler, leave the file
//      and the buffer alone and never abort; a _c count above INT_MAX whose bytes fit is served.
// Each rank works on its own part of each file, so the cases hold at any number of ranks.
// Prints "N passed, M failed" (checks summed over all ranks); exits 1 if any check failed.
#include <fcntl.h>
#include <mpi.h>
#include <stagio/stagio.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr int64_t kKiB = 1024;
constexpr int64_t kMiB = 1024 * kKiB;

int g_rank = 0;
int g_nranks = 1;
std::string g_dir;
std::string g_case = "setup";
int g_passed = 0;
int g_failed = 0;

std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* format, ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof text, format, args);
  va_end(args);
  return text;
}

bool Expect(bool ok, const std::string& what) {
  if (ok) {
    g_passed++;
  } else {
    g_failed++;
    fprintf(stderr, "FAIL [rank %d, case %s] %s\n", g_rank, g_case.c_str(), what.c_str());
  }
  return ok;
}

int ErrorClass(int code) {
  int error_class = code;
  MPI_Error_class(code, &error_class);
  return error_class;
}

std::string Describe(int code) {
  if (code == MPI_SUCCESS) return "MPI_SUCCESS";
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return Format("error class %d%s: %.*s", ErrorClass(code),
                ErrorClass(code) == MPI_ERR_IO ? " (MPI_ERR_IO)" : "", length, text);
}

bool ExpectSuccess(int code, const std::string& call) {
  return Expect(code == MPI_SUCCESS, call + " must succeed, got " + Describe(code));
}

bool ExpectIoError(int code, const std::string& call) {
  return Expect(code != MPI_SUCCESS && ErrorClass(code) == MPI_ERR_IO,
                call + " must fail with error class MPI_ERR_IO, got " + Describe(code));
}

// Setup failures make the rest of the run meaningless.
[[noreturn]] void Abort(const std::string& why) {
  fprintf(stderr, "fault_test: rank %d case %s: %s\n", g_rank, g_case.c_str(), why.c_str());
  MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

void MustSucceed(int code, const char* call) {
  if (code != MPI_SUCCESS) Abort(std::string(call) + " failed: " + Describe(code));
}

// ---- the error handler ----------------------------------------------------------------------

struct HandlerCalls {
  int count = 0;
  int last_code = MPI_SUCCESS;
};
HandlerCalls g_handler;

void CountingHandler(MPI_File*, int* code, ...) {
  g_handler.count++;
  g_handler.last_code = *code;
}

MPI_Errhandler CountingErrhandler() {
  static MPI_Errhandler handler = MPI_ERRHANDLER_NULL;
  if (handler == MPI_ERRHANDLER_NULL) {
    MustSucceed(MPI_File_create_errhandler(CountingHandler, &handler),
                "MPI_File_create_errhandler");
  }
  return handler;
}

void ExpectHandlerCalled(const std::string& call) {
  Expect(g_handler.count >= 1 && ErrorClass(g_handler.last_code) == MPI_ERR_IO,
         Format("the file's error handler must be called with MPI_ERR_IO for the failed %s "
                "(calls: %d, last code: %s)",
                call.c_str(), g_handler.count, Describe(g_handler.last_code).c_str()));
}

// ---- data and files -------------------------------------------------------------------------

// A byte that depends on its file offset, so misplaced data never matches by accident.
uint8_t PatternByte(int64_t offset, uint32_t salt) {
  uint64_t x = static_cast<uint64_t>(offset) * 0x9e3779b97f4a7c15ull + salt * 0xbf58476d1ce4e5b9ull;
  x ^= x >> 29;
  x *= 0x94d049bb133111ebull;
  return static_cast<uint8_t>(x >> 56);
}

std::vector<uint8_t> Pattern(int64_t offset, int64_t length, uint32_t salt) {
  std::vector<uint8_t> data(length);
  for (int64_t i = 0; i < length; i++) data[i] = PatternByte(offset + i, salt);
  return data;
}

std::string PathOf(const char* name) { return g_dir + "/" + name; }

MPI_File Open(const std::string& path, int amode, const char* block_size_hint) {
  MPI_Info info;
  MustSucceed(MPI_Info_create(&info), "MPI_Info_create");
  if (block_size_hint) {
    MustSucceed(MPI_Info_set(info, "stagio_block_size", block_size_hint), "MPI_Info_set");
  }
  MPI_File file = MPI_FILE_NULL;
  MustSucceed(MPI_File_open(MPI_COMM_WORLD, path.c_str(), amode, info, &file),
              ("MPI_File_open " + path).c_str());
  MPI_Info_free(&info);
  return file;
}

// The file as POSIX sees it; stagio does not intercept POSIX.
std::vector<uint8_t> PosixRead(const std::string& path, int64_t offset, int64_t length) {
  std::vector<uint8_t> data(length, 0);
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) Abort("open " + path + ": " + strerror(errno));
  int64_t done = 0;
  while (done < length) {
    const ssize_t got = pread(fd, data.data() + done, length - done, offset + done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // a short file: the rest stays zero and fails the comparison
    done += got;
  }
  close(fd);
  data.resize(done);
  return data;
}

void PosixWrite(const std::string& path, int64_t offset, const std::vector<uint8_t>& data) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  if (fd < 0) Abort("create " + path + ": " + strerror(errno));
  if (pwrite(fd, data.data(), data.size(), offset) != static_cast<ssize_t>(data.size())) {
    Abort("write " + path + ": " + strerror(errno));
  }
  close(fd);
}

// "" if equal, else where the first difference is.
std::string Compare(const std::vector<uint8_t>& actual, const std::vector<uint8_t>& expected,
                    int64_t file_offset) {
  if (actual.size() != expected.size()) {
    return Format("%zu bytes instead of %zu", actual.size(), expected.size());
  }
  int64_t first = -1, differing = 0;
  for (size_t i = 0; i < actual.size(); i++) {
    if (actual[i] == expected[i]) continue;
    if (first < 0) first = static_cast<int64_t>(i);
    differing++;
  }
  if (first < 0) return "";
  return Format("first difference at file offset %lld (got 0x%02x, expected 0x%02x); "
                "%lld of %zu bytes differ",
                static_cast<long long>(file_offset + first), actual[first], expected[first],
                static_cast<long long>(differing), actual.size());
}

void ExpectFileHolds(const std::string& path, int64_t offset, const std::vector<uint8_t>& data,
                     const std::string& what) {
  const std::string difference = Compare(PosixRead(path, offset, data.size()), data, offset);
  Expect(difference.empty(), what + ": " + difference);
}

int WriteAt(MPI_File file, int64_t offset, const std::vector<uint8_t>& data) {
  MPI_Status status;
  return MPI_File_write_at(file, offset, data.data(), static_cast<int>(data.size()), MPI_BYTE,
                           &status);
}

void InjectFaults(const char* spec) {
  Expect(stagio_inject_faults(spec) == 0,
         Format("stagio_inject_faults(\"%s\") must return 0", spec));
}

bool EnvironmentIs(const char* name, const char* value) {
  const char* actual = getenv(name);
  return Expect(actual && strcmp(actual, value) == 0,
                Format("this case needs %s=%s in the environment (it is %s)", name, value,
                       actual ? actual : "unset"));
}

// ---- the cases ------------------------------------------------------------------------------

constexpr int64_t kSmallBlock = 64 * kKiB;
constexpr const char* kSmallBlockHint = "64K";

// (a) Three dirty blocks, write-back made to fail: the sync reports it, and once the fault
// is gone a second sync writes everything.
void CaseSyncFails() {
  g_case = "a (sync)";
  const std::string path = PathOf("a.dat");
  MPI_File file = Open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kSmallBlockHint);
  MustSucceed(MPI_File_set_errhandler(file, CountingErrhandler()), "MPI_File_set_errhandler");
  const int64_t base = g_rank * 3 * kSmallBlock;
  const std::vector<uint8_t> data = Pattern(base, 3 * kSmallBlock, 1);
  ExpectSuccess(WriteAt(file, base, data), "MPI_File_write_at of 3 blocks");

  InjectFaults("write=fail");
  g_handler = {};
  const int code = MPI_File_sync(file);
  ExpectIoError(code, "MPI_File_sync with write=fail");
  ExpectHandlerCalled("MPI_File_sync");

  InjectFaults("");
  ExpectSuccess(MPI_File_sync(file), "MPI_File_sync after clearing the faults");
  ExpectSuccess(MPI_File_close(&file), "MPI_File_close");
  MPI_Barrier(MPI_COMM_WORLD);
  ExpectFileHolds(path, base, data, "after recovery every byte written must be in the file");
}

// (b) The same failure, first noticed at close.
void CaseCloseFails() {
  g_case = "b (close)";
  const std::string path = PathOf("b.dat");
  MPI_File file = Open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kSmallBlockHint);
  MustSucceed(MPI_File_set_errhandler(file, CountingErrhandler()), "MPI_File_set_errhandler");
  const int64_t base = g_rank * 3 * kSmallBlock;
  ExpectSuccess(WriteAt(file, base, Pattern(base, 3 * kSmallBlock, 2)),
                "MPI_File_write_at of 3 blocks");

  InjectFaults("write=fail");
  g_handler = {};
  ExpectIoError(MPI_File_close(&file), "MPI_File_close with write=fail");
  ExpectHandlerCalled("MPI_File_close");
  InjectFaults("");
  MPI_Barrier(MPI_COMM_WORLD);
}

// (c) A failed read of data not in the cache, then the same read once the fault is gone.
void CaseReadFails() {
  g_case = "c (read)";
  const std::string path = PathOf("c.dat");
  const int64_t region = 3 * kSmallBlock + 123;  // not block aligned
  const int64_t base = g_rank * region;
  if (g_rank == 0) PosixWrite(path, 0, Pattern(0, g_nranks * region, 3));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File file = Open(path, MPI_MODE_RDWR, kSmallBlockHint);
  MustSucceed(MPI_File_set_errhandler(file, MPI_ERRORS_RETURN), "MPI_File_set_errhandler");

  // With the collective cache another rank may read this rank's blocks from storage, so the
  // fault is switched on and off on every rank at once.
  InjectFaults("read=fail");
  MPI_Barrier(MPI_COMM_WORLD);
  std::vector<uint8_t> buffer(region);
  MPI_Status status;
  ExpectIoError(MPI_File_read_at(file, base + 7, buffer.data(), static_cast<int>(region - 7),
                                 MPI_BYTE, &status),
                "MPI_File_read_at of uncached data with read=fail");

  MPI_Barrier(MPI_COMM_WORLD);
  InjectFaults("");
  std::fill(buffer.begin(), buffer.end(), 0);
  buffer.resize(region - 7);
  if (ExpectSuccess(MPI_File_read_at(file, base + 7, buffer.data(), static_cast<int>(region - 7),
                                     MPI_BYTE, &status),
                    "the same MPI_File_read_at after clearing the faults")) {
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    Expect(count == region - 7, Format("the read must return %lld bytes, got %d",
                                       static_cast<long long>(region - 7), count));
    const std::string difference = Compare(buffer, Pattern(base + 7, region - 7, 3), base + 7);
    Expect(difference.empty(),
           "the read after recovery must return the file's bytes: " + difference);
  }
  ExpectSuccess(MPI_File_close(&file), "MPI_File_close");
  MPI_Barrier(MPI_COMM_WORLD);
}

// A tiny deterministic generator for case d's random sequence.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    state_ += 0x9e3779b97f4a7c15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  int64_t Below(int64_t bound) { return static_cast<int64_t>(Next() % bound); }
  int64_t Length(int64_t max) {  // 1..max, small lengths as likely as large ones
    const int bits = 1 + static_cast<int>(Below(64 - __builtin_clzll(max)));
    return std::min<int64_t>(max, 1 + Below(int64_t{1} << bits));
  }

 private:
  uint64_t state_;
};

// Random writes and reads, every one larger than the 1-byte cache, checked against a model.
void RunModelSequence(const std::string& path, const char* block_size_hint, uint64_t seed) {
  const int64_t region = 1536 * kKiB + 77;
  const int64_t base = g_rank * region;
  MPI_File file = Open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, block_size_hint);
  std::vector<uint8_t> model = Pattern(base, region, 4);
  ExpectSuccess(WriteAt(file, base, model), "the initial MPI_File_write_at");
  Random random(seed * 977 + g_rank);
  int mismatches = 0;
  for (int step = 0; step < 80; step++) {
    const int64_t length = random.Length(300 * kKiB);
    const int64_t offset = random.Below(region - length + 1);
    MPI_Status status;
    if (random.Below(2) == 0) {
      std::vector<uint8_t> data(length);
      for (uint8_t& byte : data) byte = static_cast<uint8_t>(random.Next());
      std::copy(data.begin(), data.end(), model.begin() + offset);
      const int code = MPI_File_write_at(file, base + offset, data.data(),
                                         static_cast<int>(length), MPI_BYTE, &status);
      if (!ExpectSuccess(code, Format("write_at %lld+%lld", static_cast<long long>(base + offset),
                                      static_cast<long long>(length)))) {
        break;
      }
    } else {
      std::vector<uint8_t> data(length, 0xEE);
      const int code = MPI_File_read_at(file, base + offset, data.data(),
                                        static_cast<int>(length), MPI_BYTE, &status);
      if (!ExpectSuccess(code, Format("read_at %lld+%lld", static_cast<long long>(base + offset),
                                      static_cast<long long>(length)))) {
        break;
      }
      const std::vector<uint8_t> expected(model.begin() + offset, model.begin() + offset + length);
      const std::string difference = Compare(data, expected, base + offset);
      if (!difference.empty() && ++mismatches <= 3) {
        Expect(false, Format("step %d: read_at %lld+%lld disagrees with the model: %s", step,
                             static_cast<long long>(base + offset), static_cast<long long>(length),
                             difference.c_str()));
      }
    }
  }
  Expect(mismatches == 0, Format("%d reads disagreed with the model (block size %s)", mismatches,
                                 block_size_hint ? block_size_hint : "default"));
  ExpectSuccess(MPI_File_close(&file), "MPI_File_close");
  MPI_Barrier(MPI_COMM_WORLD);
  ExpectFileHolds(path, base, model, "the file after close must equal the model");
}

void CaseTinyCache() {
  g_case = "d (1-byte cache)";
  if (!EnvironmentIs("STAGIO_CACHE_SIZE", "1")) return;
  RunModelSequence(PathOf("d1.dat"), nullptr, 1);
  RunModelSequence(PathOf("d2.dat"), "4K", 2);
  RunModelSequence(PathOf("d3.dat"), "37K", 3);
}

// (e) Enough dirty data to pass the cache's high-water mark, so write-back runs in the
// background, and write-back fails after two storage writes.
void CaseBackgroundWriteBackFails() {
  g_case = "e (background write-back)";
  if (!EnvironmentIs("STAGIO_CACHE_SIZE", "4M") || !EnvironmentIs("STAGIO_BLOCK_SIZE", "64K")) {
    return;
  }
  const std::string path = PathOf("e.dat");
  const int64_t region = 2 * kMiB, piece = 64 * kKiB;
  const int64_t base = g_rank * region;
  MPI_File file = Open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, nullptr);
  MustSucceed(MPI_File_set_errhandler(file, MPI_ERRORS_RETURN), "MPI_File_set_errhandler");
  InjectFaults("write=fail_after:2");
  const std::vector<uint8_t> before = Pattern(base, region, 5);
  int failed_writes = 0;
  for (int64_t offset = 0; offset < region; offset += piece) {
    const std::vector<uint8_t> data(before.begin() + offset, before.begin() + offset + piece);
    if (WriteAt(file, base + offset, data) != MPI_SUCCESS) failed_writes++;
  }
  Expect(failed_writes == 0,
         Format("%d of %lld MPI_File_write_at calls failed; the write-back error belongs to "
                "the next sync",
                failed_writes, static_cast<long long>(region / piece)));
  usleep(200 * 1000);  // give the background write-back time to run into the fault
  if (g_rank == 0) {
    // Informational: shows whether write-back really ran before the sync.
    const std::vector<uint8_t> on_disk = PosixRead(path, base, region);
    int64_t arrived = 0;
    for (size_t i = 0; i < on_disk.size(); i++) arrived += on_disk[i] == before[i];
    printf("case e: before the sync, %lld of %lld bytes of rank 0's data were in the file\n",
           static_cast<long long>(arrived), static_cast<long long>(region));
  }

  ExpectIoError(MPI_File_sync(file), "MPI_File_sync after failed background write-back");
  InjectFaults("");
  ExpectSuccess(MPI_File_sync(file), "MPI_File_sync after clearing the faults");
  const std::vector<uint8_t> after = Pattern(base + region / 2, region / 2, 6);
  ExpectSuccess(WriteAt(file, base + region / 2, after), "MPI_File_write_at after recovery");
  ExpectSuccess(MPI_File_sync(file), "MPI_File_sync of the data written after recovery");
  ExpectSuccess(MPI_File_close(&file), "MPI_File_close");
  MPI_Barrier(MPI_COMM_WORLD);
  ExpectFileHolds(path, base + region / 2, after, "data written after recovery must be intact");
  ExpectFileHolds(path, base, std::vector<uint8_t>(before.begin(), before.begin() + region / 2),
                  "data written before the failure must survive once the fault clears");
}

// ---- main -----------------------------------------------------------------------------------

std::string MakeWorkDirectory(const std::string& parent) {
  char path[4096] = {0};
  if (g_rank == 0) {
    snprintf(path, sizeof path, "%s/stagio-fault.XXXXXX", parent.c_str());
    if (!mkdtemp(path)) Abort(std::string("mkdtemp: ") + strerror(errno));
  }
  MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
  return path;
}

void RemoveWorkDirectory() {
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank != 0) return;
  for (const char* name : {"a.dat", "b.dat", "c.dat", "d1.dat", "d2.dat", "d3.dat", "e.dat"}) {
    unlink(PathOf(name).c_str());
  }
  rmdir(g_dir.c_str());
}

// (f) The ranks disagree about whether stagio can open the file: they must all agree to leave
// it to MPI, or the collective calls stagio makes on the file would hang.
bool InfoHasStagioHints(MPI_File file) {
  MPI_Info info;
  MustSucceed(MPI_File_get_info(file, &info), "MPI_File_get_info");
  char value[MPI_MAX_INFO_VAL + 1];
  int found = 0;
  // Not a hint given at open: OMPIO returns those as given, whoever handles the file.
  MPI_Info_get(info, "stagio_collective_cache", MPI_MAX_INFO_VAL, value, &found);
  MPI_Info_free(&info);
  return found != 0;
}

void CaseOpenFailsOnOneRank() {
  g_case = "f (open fails on one rank)";
  const std::string path = PathOf("f.dat");
  if (g_rank == g_nranks - 1) InjectFaults("open=fail");
  MPI_File file = Open(path, MPI_MODE_CREATE | MPI_MODE_RDWR, kSmallBlockHint);
  InjectFaults("");
  MustSucceed(MPI_File_set_errhandler(file, MPI_ERRORS_RETURN), "MPI_File_set_errhandler");
  Expect(!InfoHasStagioHints(file),
         "a file stagio could not open on every rank must be left to MPI on every rank");

  const int64_t region = 2 * kSmallBlock + 17;
  const int64_t base = g_rank * region;
  const std::vector<uint8_t> data = Pattern(base, region, 6);
  ExpectSuccess(WriteAt(file, base, data), "MPI_File_write_at on a bypassed file");
  ExpectSuccess(MPI_File_set_size(file, g_nranks * region), "MPI_File_set_size (collective)");
  std::vector<uint8_t> buffer(region, 0);
  MPI_Status status;
  ExpectSuccess(MPI_File_read_at(file, base, buffer.data(), static_cast<int>(region), MPI_BYTE,
                                 &status),
                "MPI_File_read_at on a bypassed file");
  const std::string difference = Compare(buffer, data, base);
  Expect(difference.empty(), "a bypassed file must read back what was written: " + difference);
  ExpectSuccess(MPI_File_close(&file), "MPI_File_close");
  MPI_Barrier(MPI_COMM_WORLD);
  ExpectFileHolds(path, base, data, "the file must hold what each rank wrote");
}

// (g) Past the largest file offset. A file of known bytes; every call below must fail with
// MPI_ERR_ARG and change nothing. The handler is MPI_ERRORS_RETURN, and MPI_COMM_WORLD's stays
// fatal: an error raised there would end the run.
void ExpectArgumentError(int code, const std::string& call) {
  Expect(code != MPI_SUCCESS && ErrorClass(code) == MPI_ERR_ARG,
         call + " must fail with error class MPI_ERR_ARG, got " + Describe(code));
}

void CaseArgumentLimits() {
  g_case = "g";
  const std::string path = PathOf("limits.dat");
  const int64_t base = g_rank * 4 * kKiB;
  const std::vector<uint8_t> data = Pattern(base, 4 * kKiB, 7);
  if (g_rank == 0) PosixWrite(path, 0, std::vector<uint8_t>(g_nranks * 4 * kKiB, 0));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_File file = Open(path, MPI_MODE_RDWR, nullptr);
  MustSucceed(MPI_File_write_at(file, base, data.data(), 4 * kKiB, MPI_BYTE, MPI_STATUS_IGNORE),
              "MPI_File_write_at");
  MustSucceed(MPI_File_sync(file), "MPI_File_sync");
  MPI_Barrier(MPI_COMM_WORLD);

  std::vector<double> buffer(64, -1.0);
  [[maybe_unused]] const MPI_Count overflowing = (MPI_Count{1} << 61) + 1;  // 8 bytes once multiplied by 8
  [[maybe_unused]] const MPI_Count past_largest = MPI_Count{1} << 60;        // 2^63 bytes
  MPI_Datatype huge;  // 2^40 bytes of nothing but a resized extent's worth of ints
  MustSucceed(MPI_Type_contiguous(1 << 30, MPI_INT, &huge), "MPI_Type_contiguous");
  MPI_Datatype huge_of_huge;
  MustSucceed(MPI_Type_contiguous(1 << 8, huge, &huge_of_huge), "MPI_Type_contiguous");
  MustSucceed(MPI_Type_free(&huge), "MPI_Type_free");
  huge = huge_of_huge;
  MustSucceed(MPI_Type_commit(&huge), "MPI_Type_commit");
  MPI_Status status;
  [[maybe_unused]] MPI_Request request;
  double* out = buffer.data();
  const std::pair<const char*, std::function<int()>> calls[] = {
#if MPI_VERSION >= 4
      {"write_at_c of 2^61+1 doubles",
       [&] { return MPI_File_write_at_c(file, base, out, overflowing, MPI_DOUBLE, &status); }},
      {"read_at_c of 2^61+1 doubles",
       [&] { return MPI_File_read_at_c(file, base, out, overflowing, MPI_DOUBLE, &status); }},
      {"read_at_c of 2^60 doubles",
       [&] { return MPI_File_read_at_c(file, base, out, past_largest, MPI_DOUBLE, &status); }},
      {"iwrite_at_c of 2^61+1 doubles",
       [&] { return MPI_File_iwrite_at_c(file, base, out, overflowing, MPI_DOUBLE, &request); }},
      {"write_at_all_c of 2^61+1 doubles",
       [&] { return MPI_File_write_at_all_c(file, base, out, overflowing, MPI_DOUBLE, &status); }},
      {"read_all_c of 2^60 doubles",
       [&] { return MPI_File_read_all_c(file, out, past_largest, MPI_DOUBLE, &status); }},
#endif
      // int counts cannot overflow 64 bits, but a type of 2^40 bytes makes them pass the
      // largest file offset.
      {"read_at of 2^23 items of 2^40 bytes",
       [&] { return MPI_File_read_at(file, base, out, 1 << 23, huge, &status); }},
  };
  for (const auto& [what, call] : calls) ExpectArgumentError(call(), what);
  Expect(std::all_of(buffer.begin(), buffer.end(), [](double v) { return v == -1.0; }),
         "a rejected read must not touch the buffer");
  MustSucceed(MPI_Type_free(&huge), "MPI_Type_free");

  // Offsets: etypes of 4 bytes, so that 2^62 etypes are 2^64 bytes; and a view whose holes
  // spread 2^40 stream bytes over more than 2^63 file bytes.
  MustSucceed(MPI_File_set_view(file, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL),
              "MPI_File_set_view");
  ExpectArgumentError(MPI_File_write_at(file, MPI_Offset{1} << 62, out, 1, MPI_INT, &status),
                      "write_at 2^62 ints in");
  ExpectArgumentError(MPI_File_read_at(file, MPI_Offset{1} << 62, out, 1, MPI_INT, &status),
                      "read_at 2^62 ints in");
  MPI_Datatype sparse;
  MustSucceed(MPI_Type_create_resized(MPI_INT, 0, MPI_Aint{1} << 40, &sparse),
              "MPI_Type_create_resized");
  MustSucceed(MPI_Type_commit(&sparse), "MPI_Type_commit");
  MustSucceed(MPI_File_set_view(file, 0, MPI_INT, sparse, "native", MPI_INFO_NULL),
              "MPI_File_set_view");
  ExpectArgumentError(MPI_File_write_at(file, MPI_Offset{1} << 24, out, 1, MPI_INT, &status),
                      "write_at 2^24 ints in, a view with 2^40-byte strides");
  MustSucceed(MPI_Type_free(&sparse), "MPI_Type_free");
  MustSucceed(MPI_File_set_view(file, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL),
              "MPI_File_set_view");

#if MPI_VERSION >= 4
  // A count above INT_MAX whose bytes fit: read to the end of file, which is near.
  MPI_Count got = -1;
  std::vector<uint8_t> tail(8 * kKiB, 0);
  const int64_t from = (g_nranks - 1) * 4 * kKiB + 2 * kKiB;
  Expect(MPI_File_read_at_c(file, from, tail.data(), (MPI_Count{1} << 31) + 7, MPI_BYTE,
                            &status) == MPI_SUCCESS &&
             MPI_Get_count_c(&status, MPI_BYTE, &got) == MPI_SUCCESS && got == 2 * kKiB,
         Format("read_at_c of 2^31+7 bytes 2 KiB before the end must return 2 KiB, got %lld",
                static_cast<long long>(got)));
#endif
  MustSucceed(MPI_File_close(&file), "MPI_File_close");
  MPI_Barrier(MPI_COMM_WORLD);
  ExpectFileHolds(path, base, data, "the rejected writes must not have written");
}

}  // namespace

int main(int argc, char** argv) {
  std::string cases = "abc";
  const char* tmpdir = getenv("TMPDIR");
  std::string parent = tmpdir && *tmpdir ? tmpdir : "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--cases") == 0) {
      cases = argv[i + 1];
    } else if (strcmp(argv[i], "--dir") == 0) {
      parent = argv[i + 1];
    } else {
      fprintf(stderr, "usage: fault_test [--cases abcdefg] [--dir DIR]\n");
      return 64;
    }
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_nranks);

  // Without interposition or without the fault driver nothing below would test anything.
  const bool active = Expect(stagio_is_active() == 1,
                             "stagio_is_active() must be 1: libstagio must be linked ahead of "
                             "MPI and not disabled");
  const bool fault_driver = Expect(stagio_inject_faults("") == 0,
                                   "stagio_inject_faults(\"\") must return 0: run with "
                                   "STAGIO_DRIVER=fault");
  if (active && fault_driver) {
    g_dir = MakeWorkDirectory(parent);
    for (char which : cases) {
      switch (which) {
        case 'a': CaseSyncFails(); break;
        case 'b': CaseCloseFails(); break;
        case 'c': CaseReadFails(); break;
        case 'd': CaseTinyCache(); break;
        case 'e': CaseBackgroundWriteBackFails(); break;
        case 'f': CaseOpenFailsOnOneRank(); break;
        case 'g': CaseArgumentLimits(); break;
        default: Abort(Format("unknown case '%c'", which));
      }
    }
    RemoveWorkDirectory();
  }

  int totals[2] = {g_passed, g_failed}, sums[2] = {0, 0};
  MPI_Allreduce(totals, sums, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) printf("%d passed, %d failed\n", sums[0], sums[1]);
  MPI_Finalize();
  return sums[1] == 0 ? 0 : 1;
}
