/* The emulator's I/O probe: a plain C program that makes a fixed sequence of I/O calls, one
 * after another from one thread, so that emu_run_test.cc can say exactly what the emulator must
 * have charged for it (kExpectedRequests there lists the same steps, in the same order).
 * It fails (exit 1, with a message) if any call does not return what a normal file would.
 *
 *   usage: emulator_io_probe EMULATED_DIR OUTSIDE_DIR SIZE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *g_step = "start";

static void expect(long got, long want) {
  if (got != want) {
    fprintf(stderr, "emulator_io_probe: %s returned %ld, expected %ld (%s)\n", g_step, got, want,
            strerror(errno));
    exit(1);
  }
}

static char *join(const char *dir, const char *name) {
  char *path = malloc(strlen(dir) + strlen(name) + 2);
  sprintf(path, "%s/%s", dir, name);
  return path;
}

/* Two pieces, so the vector calls really are vectors. */
static void split(struct iovec iov[2], char *buffer, size_t size) {
  iov[0].iov_base = buffer;
  iov[0].iov_len = size / 2;
  iov[1].iov_base = buffer + size / 2;
  iov[1].iov_len = size - size / 2;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s EMULATED_DIR OUTSIDE_DIR SIZE\n", argv[0]);
    return 2;
  }
  const char *inside = argv[1];
  const char *outside = argv[2];
  const long size = atol(argv[3]);
  char *buffer = malloc(size);
  memset(buffer, 'x', size);
  struct iovec iov[2];
  split(iov, buffer, size);

  /* Writes on an emulated file, each of SIZE bytes, by every write call. */
  g_step = "open";
  const int fd = open(join(inside, "probe.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
  expect(fd >= 0, 1);
  g_step = "pwrite";    expect(pwrite(fd, buffer, size, 0), size);
  g_step = "pwrite64";  expect(pwrite64(fd, buffer, size, size), size);
  g_step = "write";     lseek(fd, 2 * size, SEEK_SET); expect(write(fd, buffer, size), size);
  g_step = "writev";    expect(writev(fd, iov, 2), size);
  g_step = "pwritev";   expect(pwritev(fd, iov, 2, 4 * size), size);
  g_step = "pwritev2";  expect(pwritev2(fd, iov, 2, 5 * size, 0), size);
  g_step = "fsync";     expect(fsync(fd), 0);
  g_step = "fdatasync"; expect(fdatasync(fd), 0);

  /* Reads of the 6 * SIZE bytes just written, then one at end of file and one short read. */
  g_step = "pread";     expect(pread(fd, buffer, size, 0), size);
  g_step = "pread64";   expect(pread64(fd, buffer, size, size), size);
  g_step = "read";      lseek(fd, 2 * size, SEEK_SET); expect(read(fd, buffer, size), size);
  g_step = "readv";     expect(readv(fd, iov, 2), size);
  g_step = "preadv";    expect(preadv(fd, iov, 2, 4 * size), size);
  g_step = "preadv2";   expect(preadv2(fd, iov, 2, 5 * size, 0), size);
  g_step = "pread at end of file"; expect(pread(fd, buffer, size, 6 * size), 0);
  g_step = "short pread"; expect(pread(fd, buffer, size, 6 * size - size / 2), size / 2);

  /* A failed call is not charged. */
  g_step = "open write-only";
  const int write_only = open(join(inside, "probe.dat"), O_WRONLY);
  expect(write_only >= 0, 1);
  g_step = "read on a write-only descriptor"; expect(read(write_only, buffer, size), -1);
  close(write_only);

  /* Other ways to reach an emulated file: dup, openat relative to a directory, creat, and a
   * symlink outside that points inside. */
  g_step = "dup"; const int copy = dup(fd); expect(copy >= 0, 1);
  g_step = "pread on dup"; expect(pread(copy, buffer, size, 0), size);
  close(copy);
  g_step = "open dir"; const int dir_fd = open(inside, O_RDONLY | O_DIRECTORY);
  expect(dir_fd >= 0, 1);
  g_step = "openat"; const int relative = openat(dir_fd, "probe.dat", O_RDONLY);
  expect(relative >= 0, 1);
  g_step = "pread via openat"; expect(pread(relative, buffer, size, 0), size);
  close(relative);
  close(dir_fd);
  g_step = "creat"; const int created = creat(join(inside, "created.dat"), 0644);
  expect(created >= 0, 1);
  g_step = "write after creat"; expect(write(created, buffer, size), size);
  close(created);
  char *link = join(outside, "link-to-inside");
  unlink(link);
  g_step = "symlink"; expect(symlink(join(inside, "probe.dat"), link), 0);
  g_step = "open symlink"; const int via_link = open(link, O_RDONLY);
  expect(via_link >= 0, 1);
  g_step = "pread via symlink"; expect(pread(via_link, buffer, size, 0), size);

  /* A child process charges the same device: two reads through the inherited descriptor. */
  g_step = "fork"; const pid_t child = fork();
  expect(child >= 0, 1);
  if (child == 0) {
    g_step = "pread in child"; expect(pread(fd, buffer, size, 0), size);
    g_step = "pread64 in child"; expect(pread64(fd, buffer, size, size), size);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  g_step = "child"; expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, 1);

  /* A descriptor opened by a raw syscall, as stagio-iond's openat2 opens: the shim never saw
   * the open, and judges the descriptor at its first read. */
  g_step = "raw openat";
  const int raw = (int)syscall(SYS_openat, AT_FDCWD, join(inside, "probe.dat"), O_RDONLY);
  expect(raw >= 0, 1);
  g_step = "pread via raw openat"; expect(pread(raw, buffer, size, 0), size);

  /* None of what follows is charged: a file outside, a sibling directory whose name starts like
   * the emulated one, an emulated descriptor number replaced by dup2, and a closed emulated
   * descriptor whose number a new open reuses. */
  g_step = "open outside";
  const int plain = open(join(outside, "plain.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
  expect(plain >= 0, 1);
  g_step = "pwrite outside"; expect(pwrite(plain, buffer, size, 0), size);
  g_step = "pread outside"; expect(pread(plain, buffer, size, 0), size);
  g_step = "fsync outside"; expect(fsync(plain), 0);
  char *sibling_dir = malloc(strlen(inside) + 16);
  sprintf(sibling_dir, "%s-sibling", inside);
  mkdir(sibling_dir, 0755);
  g_step = "open in sibling";
  const int sibling = open(join(sibling_dir, "s.dat"), O_CREAT | O_RDWR | O_TRUNC, 0644);
  expect(sibling >= 0, 1);
  g_step = "write in sibling"; expect(write(sibling, buffer, size), size);
  g_step = "dup2 over emulated"; expect(dup2(plain, via_link), via_link);
  g_step = "pwrite after dup2"; expect(pwrite(via_link, buffer, size, 0), size);
  const int reused_number = fd;
  close(fd);
  g_step = "open outside again";
  const int reused = open(join(outside, "plain.dat"), O_RDWR);
  expect(reused, reused_number);
  g_step = "pread on reused number"; expect(pread(reused, buffer, size, 0), size);
  g_step = "raw openat outside";
  const int raw_outside =
      (int)syscall(SYS_openat, AT_FDCWD, join(outside, "plain.dat"), O_RDONLY);
  expect(raw_outside >= 0, 1);
  g_step = "pread via raw openat outside"; expect(pread(raw_outside, buffer, size, 0), size);
  return 0;
}
