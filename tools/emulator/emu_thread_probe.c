/* The emulator's thread probe: THREADS threads read one emulated file at the same time, as an
 * application thread and stagio's background I/O thread do. emu_run_test.cc checks that every
 * request is counted once and that each was charged between its cost on an idle device and
 * that cost with every other thread's transfer queued ahead of it.
 *
 *   usage: emulator_thread_probe EMULATED_DIR THREADS READS SIZE
 *   requests: 1 pwrite of SIZE, then per thread READS preads of SIZE and 1 fdatasync.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_fd;
static long g_reads, g_size;

static void *reader(void *unused) {
  char *buffer = malloc(g_size);
  for (long i = 0; i < g_reads; ++i) {
    if (pread(g_fd, buffer, g_size, 0) != g_size) {
      perror("emulator_thread_probe: pread");
      exit(1);
    }
  }
  if (fdatasync(g_fd) != 0) {
    perror("emulator_thread_probe: fdatasync");
    exit(1);
  }
  free(buffer);
  return unused;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s EMULATED_DIR THREADS READS SIZE\n", argv[0]);
    return 2;
  }
  const int threads = atoi(argv[2]);
  g_reads = atol(argv[3]);
  g_size = atol(argv[4]);
  char path[4096];
  snprintf(path, sizeof(path), "%s/threads.dat", argv[1]);
  g_fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
  char *buffer = calloc(1, g_size);
  if (g_fd < 0 || pwrite(g_fd, buffer, g_size, 0) != g_size) {
    perror("emulator_thread_probe: setup");
    return 1;
  }
  pthread_t workers[64];
  for (int i = 0; i < threads; ++i) pthread_create(&workers[i], NULL, reader, NULL);
  for (int i = 0; i < threads; ++i) pthread_join(workers[i], NULL);
  return 0;
}
