// iond_kill_test: the I/O-node daemon dies (SIGKILL) in the middle of a job. A plain MPI
// program, run with libstagio.so preloaded and STAGIO_IOND naming one daemon, under
// iond_kill.sh, which kills the daemon when asked:
//
//   iond_kill_test --file F --kill-request R --killed K
//
// Each rank has its own region of F in each phase (phase p, rank r: bytes [(p*N + r)*S, +S)):
//   A  written, then MPI_File_sync: must succeed. That data is durable from now on.
//   B  written (the small client cache of the test writes most of it back to the daemon, which
//      accepts it), then rank 0 creates R and every rank waits until K exists: by then the
//      harness has SIGKILLed the daemon and seen it die.
//   C  written, and A and C read back: they must read right (stagio falls back to direct I/O).
//   The next MPI_File_sync must fail with error class MPI_ERR_IO on every rank (the daemon had
//   accepted writes that were never flushed), and only that one: a second sync succeeds.
//   D  written after the failed sync; MPI_File_close must succeed.
// Then rank 0 reads F with POSIX I/O: every byte of A, C and D must be there (B's may be lost).
// Waiting for K polls the file system: the order of events is what is tested, never time.
// Prints "iond_kill_test: N checks passed, M failed" and exits 1 if any failed.
#include <fcntl.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

constexpr MPI_Offset kRegion = 256 * 1024;  // per rank and phase; 16 blocks of 16 KiB
constexpr int kPiece = 32 * 1024;           // bytes per MPI call
enum Phase { kA, kB, kC, kD };

int g_rank = 0;
int g_nranks = 1;
int g_passed = 0;
int g_failed = 0;

void Check(bool ok, const std::string& what) {
  if (ok) {
    ++g_passed;
    return;
  }
  ++g_failed;
  std::fprintf(stderr, "iond_kill_test: rank %d: FAILED: %s\n", g_rank, what.c_str());
}

unsigned char Expected(int phase, int rank, MPI_Offset i) {
  return static_cast<unsigned char>(phase * 71 + rank * 31 + i * 13 + (i >> 9));
}

MPI_Offset RegionStart(int phase, int rank) { return (phase * g_nranks + rank) * kRegion; }

std::string ErrorText(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  return std::string(text, length);
}

bool Succeeded(int rc, const std::string& what) {
  Check(rc == MPI_SUCCESS, what + ": " + (rc == MPI_SUCCESS ? "" : ErrorText(rc)));
  return rc == MPI_SUCCESS;
}

void WritePhase(MPI_File file, int phase) {
  std::vector<unsigned char> data(kPiece);
  for (MPI_Offset done = 0; done < kRegion; done += kPiece) {
    for (int i = 0; i < kPiece; ++i) data[i] = Expected(phase, g_rank, done + i);
    const int rc = MPI_File_write_at(file, RegionStart(phase, g_rank) + done, data.data(), kPiece,
                                     MPI_BYTE, MPI_STATUS_IGNORE);
    if (!Succeeded(rc, "write of phase " + std::string(1, "ABCD"[phase]))) return;
  }
}

// Counts the bytes of `data` (holding [start, start + size) of the region) that are wrong.
int64_t WrongBytes(const std::vector<unsigned char>& data, int phase, int rank) {
  int64_t wrong = 0;
  for (MPI_Offset i = 0; i < kRegion; ++i) wrong += data[i] != Expected(phase, rank, i);
  return wrong;
}

void ReadBack(MPI_File file, int phase) {
  std::vector<unsigned char> data(kRegion, 0);
  const int rc = MPI_File_read_at(file, RegionStart(phase, g_rank), data.data(),
                                  static_cast<int>(kRegion), MPI_BYTE, MPI_STATUS_IGNORE);
  const std::string name(1, "ABCD"[phase]);
  if (!Succeeded(rc, "read of phase " + name)) return;
  const int64_t wrong = WrongBytes(data, phase, g_rank);
  Check(wrong == 0, "phase " + name + " read back with " + std::to_string(wrong) + " wrong bytes");
}

void WaitForFile(const std::string& path) {
  struct stat info;
  while (::stat(path.c_str(), &info) != 0) usleep(10 * 1000);
}

// The file on disk, after the job closed it: phases A, C and D of every rank.
void CheckFileOnDisk(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  Check(fd >= 0, "open " + path + " with POSIX: " + std::strerror(errno));
  if (fd < 0) return;
  std::vector<unsigned char> data(kRegion);
  for (int phase : {kA, kC, kD}) {
    for (int rank = 0; rank < g_nranks; ++rank) {
      const ssize_t got = ::pread(fd, data.data(), kRegion, RegionStart(phase, rank));
      const int64_t wrong = got == kRegion ? WrongBytes(data, phase, rank) : kRegion;
      Check(wrong == 0, "on disk, phase " + std::string(1, "ABCD"[phase]) + " of rank " +
                            std::to_string(rank) + ": " + std::to_string(wrong) +
                            " wrong or missing bytes");
    }
  }
  ::close(fd);
}

int ErrorClass(int rc) {
  int error_class = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &error_class);
  return error_class;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_nranks);
  std::string path, kill_request, killed;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--file") path = argv[i + 1];
    if (flag == "--kill-request") kill_request = argv[i + 1];
    if (flag == "--killed") killed = argv[i + 1];
  }
  if (path.empty() || kill_request.empty() || killed.empty()) {
    if (g_rank == 0) {
      std::fprintf(stderr, "usage: iond_kill_test --file F --kill-request R --killed K\n");
    }
    MPI_Finalize();
    return 64;
  }

  MPI_File file;
  if (!Succeeded(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_CREATE | MPI_MODE_RDWR,
                               MPI_INFO_NULL, &file),
                 "open")) {
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_File_set_errhandler(file, MPI_ERRORS_RETURN);

  WritePhase(file, kA);
  Succeeded(MPI_File_sync(file), "sync after phase A, the daemon alive");
  MPI_Barrier(MPI_COMM_WORLD);

  WritePhase(file, kB);
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) std::fclose(std::fopen(kill_request.c_str(), "w"));
  WaitForFile(killed);
  MPI_Barrier(MPI_COMM_WORLD);

  WritePhase(file, kC);
  ReadBack(file, kA);
  ReadBack(file, kC);
  const int lost = MPI_File_sync(file);
  Check(ErrorClass(lost) == MPI_ERR_IO,
        "the first sync after the daemon died must fail with MPI_ERR_IO; it returned " +
            (lost == MPI_SUCCESS ? std::string("MPI_SUCCESS") : ErrorText(lost)));
  Succeeded(MPI_File_sync(file), "the second sync after the daemon died (reported once)");

  WritePhase(file, kD);
  ReadBack(file, kD);
  Succeeded(MPI_File_close(&file), "close");
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) CheckFileOnDisk(path);

  int counts[2] = {g_passed, g_failed};
  MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) {
    std::printf("iond_kill_test: %d checks passed, %d failed (%d ranks)\n", counts[0], counts[1],
                g_nranks);
  }
  MPI_Finalize();
  return counts[1] == 0 ? 0 : 1;
}
