/* The record log of the MPI differential tests.
 *
 * A test program (diff_driver, c_only) writes one log per rank with every result that a
 * correct MPI-IO implementation must reproduce: read buffers, returned counts, sizes,
 * positions and the final file contents. A run under plain MPICH and a run under
 * LD_PRELOAD=libstagio.so must therefore produce byte-identical logs; `diff_driver --explain`
 * decodes two logs and names the first record that differs.
 *
 * A log is a sequence of records, each a fixed header followed by `detail_len` bytes of text
 * (a human-readable description of the operation, starting with its name) and `payload_len`
 * bytes of payload. Fields are in host byte order: both runs happen on the same machine.
 *
 * Plain C so that the C test programs can share it.
 */
#ifndef STAGIO_TESTS_MPI_DIFF_LOG_H_
#define STAGIO_TESTS_MPI_DIFF_LOG_H_

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define DIFFLOG_MAGIC 0x52544753u /* "SGTR" */

enum difflog_record_type {
  DIFFLOG_SEED_BEGIN = 1, /* value: 0; detail: the seed's configuration */
  DIFFLOG_READ = 2,       /* value: count returned; payload: the whole receive buffer */
  DIFFLOG_WRITE = 3,      /* value: count returned; payload: hash of the buffer afterwards */
  DIFFLOG_SCALAR = 4,     /* value: a size, position, byte offset or extent */
  DIFFLOG_FINAL_FILE = 5, /* value: file size; payload: the file read back with POSIX */
  DIFFLOG_SEED_END = 6
};

/* 40 bytes, no padding. */
typedef struct {
  uint32_t magic;
  uint16_t type;
  uint16_t kind; /* the program's operation code; the detail text names it */
  uint32_t seed;
  uint32_t op; /* operation index within the seed; equal on all ranks */
  int64_t value;
  uint32_t detail_len;
  uint32_t reserved;
  uint64_t payload_len;
} difflog_header;

static inline const char *difflog_type_name(uint16_t type) {
  switch (type) {
    case DIFFLOG_SEED_BEGIN: return "seed-begin";
    case DIFFLOG_READ: return "read";
    case DIFFLOG_WRITE: return "write";
    case DIFFLOG_SCALAR: return "scalar";
    case DIFFLOG_FINAL_FILE: return "final-file";
    case DIFFLOG_SEED_END: return "seed-end";
    default: return "unknown";
  }
}

/* FNV-1a; used to log write buffers compactly (a correct library never changes them). */
static inline uint64_t difflog_hash(const void *data, uint64_t length) {
  const unsigned char *bytes = (const unsigned char *)data;
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint64_t i = 0; i < length; i++) {
    hash ^= bytes[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

/* Returns 0 on success, -1 if the stream reported an error. */
static inline int difflog_write(FILE *log, uint16_t type, uint16_t kind, uint32_t seed,
                                uint32_t op, int64_t value, const char *detail,
                                const void *payload, uint64_t payload_len) {
  difflog_header header;
  memset(&header, 0, sizeof header);
  header.magic = DIFFLOG_MAGIC;
  header.type = type;
  header.kind = kind;
  header.seed = seed;
  header.op = op;
  header.value = value;
  header.detail_len = detail ? (uint32_t)strlen(detail) : 0;
  header.payload_len = payload ? payload_len : 0;
  fwrite(&header, sizeof header, 1, log);
  if (detail && header.detail_len) fwrite(detail, 1, header.detail_len, log);
  if (payload && header.payload_len) fwrite(payload, 1, header.payload_len, log);
  return ferror(log) ? -1 : 0;
}

#endif /* STAGIO_TESTS_MPI_DIFF_LOG_H_ */
