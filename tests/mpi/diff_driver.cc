// diff_driver: a randomized MPI-IO workload for differential testing.
//
//   diff_driver --seeds A:B --dir D --log L [--ops N]
//   diff_driver --explain LOG_A LOG_B
//
// For every seed in A..B (inclusive) the driver creates D/seed_<seed>.dat, fills it, runs a
// random sequence of MPI_File_* calls on it and writes everything a correct MPI-IO
// implementation must reproduce into L.<rank> (format: diff_log.h). Run once under plain MPICH
// and once under LD_PRELOAD=libstagio.so, the logs must be byte-identical; --explain names the
// first record where two logs differ.
//
// Determinism. All decisions are made by a planner seeded from the seed alone, so every rank
// plans the same operations for every rank and then executes its own part. That makes the
// sequence of collective calls identical on all ranks, and lets every rank know the file size
// at each epoch boundary without communicating. Write data comes from a stream seeded by
// (seed, rank, operation).
//
// Consistency. The workload stays inside what MPI guarantees in non-atomic mode, because plain
// ROMIO on a local file shows writes at once while stagio shows them only after
// sync-barrier-sync or close/reopen:
//  * Time is cut into epochs ending in MPI_File_sync, MPI_Barrier, MPI_File_sync (or a close
//    and reopen). Within an epoch every byte has at most one owner rank, which is the only one
//    to write or read it ("segments" mode: the file is cut into segments dealt round-robin;
//    "view" mode: each rank's file view is a disjoint part of the file).
//  * A rank reads only below the file size of the last epoch boundary, or below the end of its
//    own writes. Reads past the end of file happen only in dedicated contiguous read_at calls,
//    in epochs where no rank grows the file, so their returned counts are deterministic.
//  * Size changes (set_size, preallocate) happen between epochs, followed by another boundary.
//  * Shared-file-pointer epochs add a region of the file for ordered calls, one rank's shared
//    calls and independent calls, where a byte belongs to the first rank that touches it; see
//    RunSharedEpoch for the barriers ROMIO's shared file pointer needs.
//  * Every open passes romio_cb_write, romio_ds_write and romio_ds_read = disable, because
//    plain MPICH 4.0.2 is not a correct reference without them: two-phase and data-sieving
//    writes read-modify-write bytes other ranks own (racing with their writes) and fill holes
//    past the end of file with garbage; and after a data-sieving-less write through a
//    noncontiguous view, a data-sieving read through the individual file pointer reads the
//    wrong bytes.
//
// Model. Every write is planned on every rank and its data is reproducible, so every rank
// also keeps the expected file contents (FileModel) and checks each read and the final file
// against it. The log comparison catches what the model does not see (returned counts, bytes
// in buffer gaps, positions, sizes).
//
// Calls stagio leaves to MPI. Besides plain segment and view epochs, an epoch may be a
// shared-file-pointer epoch (ordered and shared calls mixed with independent ones on the same
// bytes), an atomic epoch (set_atomicity(1) in its middle, the individual pointer read through
// across both switches) or an external32 epoch (a view with that data representation, MPI_INT
// data, the model holding big-endian ints). Between and within epochs, MPI_File_set_info (and
// set_view's info) changes stagio_block_size or sets stagio_cache=disable for a while; plain
// MPICH ignores these keys. Some seeds end with a second file opened with MPI_MODE_SEQUENTIAL,
// written through the shared pointer, then reopened normally and read back.
//
// Pre-execution. With DIFF_PREEXEC=1 each seed is first rehearsed (same plan, no MPI-IO) to
// record the prefetch counterparts of its calls, which a stagio pre-execution helper then plays
// ahead of the real run (diff_preexec.h).
#include <dlfcn.h>
#include <fcntl.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diff_log.h"
#include "interposition_report.h"
#include "diff_preexec.h"

namespace {

// ---------------------------------------------------------------------------------------------
// Utilities

std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  char small[256];
  va_list copy;
  va_copy(copy, args);
  const int length = vsnprintf(small, sizeof small, format, copy);
  va_end(copy);
  std::string text;
  if (length < static_cast<int>(sizeof small)) {
    text.assign(small, length);
  } else {
    text.resize(length + 1);
    vsnprintf(&text[0], text.size(), format, args);
    text.resize(length);
  }
  va_end(args);
  return text;
}

// SplitMix64: tiny, fast, and its output depends on nothing but the seed, so every rank that
// seeds it alike draws the same sequence.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi], both inclusive.
  int64_t Uniform(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(Next() % span);
  }
  bool Chance(double probability) {
    return static_cast<double>(Next() >> 11) * 0x1.0p-53 < probability;
  }
  // Roughly uniform in the number of bits: small values are as likely as large ones, which is
  // what exercises both the 1-byte and the multi-block cases. lo >= 1.
  int64_t LogUniform(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    const int low_bits = BitWidth(lo), high_bits = BitWidth(hi);
    const int bits = static_cast<int>(Uniform(low_bits, high_bits));
    const int64_t from = std::max<int64_t>(lo, int64_t{1} << (bits - 1));
    const int64_t to = std::min<int64_t>(hi, (int64_t{1} << bits) - 1);
    return Uniform(from, to);
  }
  template <typename T>
  const T& Pick(const std::vector<T>& choices) {
    return choices[Uniform(0, static_cast<int64_t>(choices.size()) - 1)];
  }
  void Fill(uint8_t* data, size_t length) {
    size_t i = 0;
    for (; i + 8 <= length; i += 8) {
      const uint64_t word = Next();
      memcpy(data + i, &word, 8);
    }
    if (i < length) {
      const uint64_t word = Next();
      memcpy(data + i, &word, length - i);
    }
  }

 private:
  static int BitWidth(int64_t value) { return 64 - __builtin_clzll(static_cast<uint64_t>(value)); }
  uint64_t state_;
};

uint64_t MixSeed(uint64_t a, uint64_t b, uint64_t c = 0) {
  Rng mixer(a * 0x2545f4914f6cdd1dull ^ (b + 0x632be59bd9b4e019ull) * 0x9e3779b97f4a7c15ull ^
            (c + 0x8cb92ba72f3d8dd7ull) * 0xd6e8feb86659fd93ull);
  return mixer.Next();
}

// What the driver is doing, for error messages.
struct Context {
  int rank = -1;
  uint32_t seed = 0;
  uint32_t op = 0;
  std::string what = "startup";
};
Context g_context;
// DIFF_DRIVER_TRACE=1 prints every operation to stderr as it starts (for hangs and crashes).
bool g_trace = false;
// DIFF_DRIVER_SEEK_SHARED_END=0 replaces the planned MPI_SEEK_END seeks of seek_shared by
// MPI_SEEK_SET seeks to the same place (plan and logs are the same either way). It exists to
// tell a seek_shared problem from others: stagio once sent seek_shared to PMPI without writing
// back the ranks' cached writes, so ROMIO's end of file missed them.
bool g_seek_shared_end = true;
// DIFF_DRIVER_GET_SIZE_WORKAROUND=1 adds MPI_File_get_size calls (not logged) after nonblocking
// writes stagio passes to PMPI. stagio once ended its reads at the file size sampled when PMPI
// started such a write, before ROMIO had grown the file; get_size refreshed it. Kept to tell
// that problem from others; plan and logs are the same either way.
bool g_get_size_workaround = false;
// DIFF_DRIVER_FOCUS=collective draws view epochs and collective calls more often (about five
// times as many collective calls through a view per seed), for configurations that test the
// collective paths (two-phase I/O, aggregators, collective prefetching) in few seeds. It changes
// the plan, so both runs of a comparison must see it; every epoch mode still occurs.
bool g_focus_collective = false;
// DIFF_DRIVER_PAUSE_MS=N: after each file is closed, and before it is deleted, all ranks stay
// idle together for N ms, so that a daemon's idle-time work (the segment store's grouping)
// runs while the file still exists. Plan and logs are the same either way.
int g_pause_ms = 0;
// DIFF_PREEXEC=1 runs each seed with a pre-execution helper whose slice makes the prefetch
// counterparts of the seed's calls (diff_preexec.h); libstagio must be loaded, and every slice
// must run. g_preexec is then libstagio's API; null otherwise.
const diff_preexec::Api* g_preexec = nullptr;
diff_preexec::Totals g_preexec_totals;

// See g_pause_ms; called by all ranks after the barrier that follows a close.
void PauseBeforeDelete() {
  if (g_pause_ms > 0) usleep(static_cast<useconds_t>(g_pause_ms) * 1000);
}

[[noreturn]] void Fail(const std::string& message) {
  fprintf(stderr, "diff_driver: rank %d seed %u op %u (%s): %s\n", g_context.rank,
          g_context.seed, g_context.op, g_context.what.c_str(), message.c_str());
  fflush(stderr);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, 2);
  exit(2);
}

std::string ErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return Format("error %d", code);
  return std::string(text, length);
}

void CheckMpi(int code, const char* call) {
  if (code != MPI_SUCCESS) Fail(Format("%s failed: %s", call, ErrorText(code).c_str()));
}
#define CHECK_MPI(call) CheckMpi((call), #call)

// ---------------------------------------------------------------------------------------------
// The log

class Log {
 public:
  explicit Log(const std::string& path) : path_(path), file_(fopen(path.c_str(), "wb")) {
    if (!file_) Fail(Format("cannot create log %s: %s", path.c_str(), strerror(errno)));
    setvbuf(file_, nullptr, _IOFBF, 1 << 20);
  }
  ~Log() {
    if (fclose(file_) != 0) Fail(Format("cannot write log %s", path_.c_str()));
  }
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  void Write(uint16_t type, uint16_t kind, uint32_t seed, uint32_t op, int64_t value,
             const std::string& detail, const void* payload, uint64_t payload_length) {
    if (difflog_write(file_, type, kind, seed, op, value, detail.c_str(), payload,
                      payload_length) != 0) {
      Fail(Format("cannot write log %s", path_.c_str()));
    }
  }

 private:
  std::string path_;
  FILE* file_;
};

// ---------------------------------------------------------------------------------------------
// Memory datatypes
//
// Reads go into buffers described by random derived datatypes whose gaps hold a sentinel
// pattern; the whole buffer is logged, so a library that writes into a gap is caught.

enum class Element : uint8_t { kByte, kInt };  // the basic type everything is built from

MPI_Datatype ElementType(Element element) {
  return element == Element::kInt ? MPI_INT : MPI_BYTE;
}
int64_t ElementBytes(Element element) { return element == Element::kInt ? 4 : 1; }
const char* ElementName(Element element) { return element == Element::kInt ? "int" : "byte"; }

struct StructField {
  MPI_Datatype type;
  int64_t count;
  int64_t displacement;  // bytes
};

int64_t NamedTypeBytes(MPI_Datatype type) {
  int size = 0;
  CHECK_MPI(MPI_Type_size(type, &size));
  return size;
}

// MPI-3.1 libraries (Open MPI 4.1) have no large-count (_c) functions. Plans still draw the
// choice, so that the rest of a seed's plan is the same on every MPI, and use the int form.
#if MPI_VERSION >= 4
constexpr bool kHaveLargeCount = true;
#else
constexpr bool kHaveLargeCount = false;
#endif
bool PlanLargeCount(Rng& plan, double probability) {
  return plan.Chance(probability) && kHaveLargeCount;
}

// What plain Open MPI (OMPIO) gets wrong or leaves open, and the plans avoid on it, so that it
// can serve as the reference (docs/mpi-implementations.md):
//  - MPI_MODE_EXCL at several ranks: now and then one rank's open fails while the others
//    wait for it in a barrier; the plans create the file without it.
//  - MPI_File_preallocate to the size of the file or past it: OMPIO rewrites the file through
//    the individual pointer and so appends a copy of it (the file doubles), and the bytes past
//    the end are undefined anyway (MPI 4.0 section 14.2.5; ROMIO writes zeros, which is what
//    the model holds). The plans preallocate less than the file holds.
#if defined(OPEN_MPI)
constexpr bool kExclusiveCreate = false;
constexpr bool kPreallocatePastEnd = false;
#else
constexpr bool kExclusiveCreate = true;
constexpr bool kPreallocatePastEnd = true;
#endif

struct MemTypeSpec {
  // kContiguousC is the only large-count constructor: MPICH 4.0's ROMIO cannot flatten a
  // noncontiguous type built by a _c constructor (it calls MPI_Type_get_envelope and aborts).
  enum class Shape : uint8_t { kContiguous, kContiguousC, kVector, kIndexed, kStruct, kResized };
  Shape shape = Shape::kContiguous;
  Element element = Element::kByte;
  int64_t count = 1, blocklength = 1, stride = 1;  // vector shapes, in elements
  std::vector<int> lengths, displacements;         // indexed, in elements
  std::vector<StructField> fields;                 // struct
  int64_t lb = 0, extent = 0;                      // resized: bytes, around `blocklength` elements

  // Elements of data in one instance of the type.
  int64_t Units() const {
    switch (shape) {
      case Shape::kContiguous: return 1;
      case Shape::kVector: return count * blocklength;
      case Shape::kContiguousC: return blocklength;
      case Shape::kIndexed: {
        int64_t total = 0;
        for (int length : lengths) total += length;
        return total;
      }
      case Shape::kStruct: {
        int64_t bytes = 0;
        for (const StructField& field : fields) bytes += field.count * NamedTypeBytes(field.type);
        return bytes / ElementBytes(element);
      }
      case Shape::kResized: return blocklength;
    }
    return 1;
  }

  std::string Describe() const {
    const char* base = ElementName(element);
    switch (shape) {
      case Shape::kContiguous: return base;
      case Shape::kVector:
        return Format("vector(%" PRId64 ",%" PRId64 ",%" PRId64 ",%s)", count, blocklength,
                      stride, base);
      case Shape::kContiguousC: return Format("contiguous_c(%" PRId64 ",%s)", blocklength, base);
      case Shape::kIndexed: {
        std::string text = "indexed(";
        for (size_t i = 0; i < lengths.size(); i++) {
          text += Format("%s%d@%d", i ? "," : "", lengths[i], displacements[i]);
        }
        return text + "," + base + ")";
      }
      case Shape::kStruct: {
        std::string text = "struct(";
        for (size_t i = 0; i < fields.size(); i++) {
          text += Format("%s%" PRId64 "x%" PRId64 "B@%" PRId64, i ? "," : "", fields[i].count,
                         NamedTypeBytes(fields[i].type), fields[i].displacement);
        }
        return text + ")";
      }
      case Shape::kResized:
        return Format("resized(%" PRId64 "x%s,lb=%" PRId64 ",extent=%" PRId64 ")", blocklength,
                      base, lb, extent);
    }
    return "?";
  }
};

MemTypeSpec Contiguous(Element element) {
  MemTypeSpec spec;
  spec.element = element;
  return spec;
}

// A random memory type of at most `max_units` elements per instance.
MemTypeSpec RandomMemType(Rng& rng, Element element, int64_t max_units) {
  MemTypeSpec spec;
  spec.element = element;
  const int64_t element_bytes = ElementBytes(element);
  if (max_units < 2 || rng.Chance(0.45)) return spec;
  switch (rng.Uniform(0, 4)) {
    case 0: {  // vector with gaps between blocks
      spec.shape = MemTypeSpec::Shape::kVector;
      spec.blocklength = rng.LogUniform(1, std::min<int64_t>(64, max_units));
      spec.count = rng.Uniform(1, std::min<int64_t>(8, max_units / spec.blocklength));
      spec.stride = spec.blocklength + rng.Uniform(1, 16);
      return spec;
    }
    case 1: {  // indexed: increasing blocks, gaps (some empty), sometimes a nonzero lower bound
      spec.shape = MemTypeSpec::Shape::kIndexed;
      int64_t total = 0, next = rng.Uniform(0, 4);
      const int64_t blocks = rng.Uniform(1, 6);
      for (int64_t i = 0; i < blocks; i++) {
        const int64_t length = rng.LogUniform(1, 32);
        if (total + length > max_units) break;
        spec.lengths.push_back(static_cast<int>(length));
        spec.displacements.push_back(static_cast<int>(next));
        total += length;
        next += length + rng.Uniform(0, 8);
      }
      if (spec.lengths.empty()) return Contiguous(element);
      return spec;
    }
    case 2: {  // struct of (for bytes) mixed basic types at padded displacements
      spec.shape = MemTypeSpec::Shape::kStruct;
      const std::vector<MPI_Datatype> byte_types = {MPI_INT, MPI_CHAR, MPI_DOUBLE, MPI_SHORT};
      int64_t displacement = rng.Uniform(0, 3) * element_bytes, total_bytes = 0;
      const int64_t fields = rng.Uniform(1, 4);
      for (int64_t i = 0; i < fields; i++) {
        const MPI_Datatype type = element == Element::kInt ? MPI_INT : rng.Pick(byte_types);
        const int64_t count = rng.Uniform(1, 3);
        const int64_t bytes = count * NamedTypeBytes(type);
        if ((total_bytes + bytes) / element_bytes > max_units) break;
        spec.fields.push_back({type, count, displacement});
        total_bytes += bytes;
        displacement += bytes + rng.Uniform(0, 5);
      }
      if (spec.fields.empty()) return Contiguous(element);
      return spec;
    }
    case 3: {  // resized: each instance followed (and maybe preceded) by a gap
      spec.shape = MemTypeSpec::Shape::kResized;
      spec.blocklength = rng.LogUniform(1, std::min<int64_t>(64, max_units));
      const int64_t gap = rng.Uniform(1, 12);
      spec.lb = rng.Chance(0.3) ? -rng.Uniform(1, gap) : 0;
      spec.extent = spec.blocklength * element_bytes + gap;
      return spec;
    }
    default:  // a contiguous run of elements as one instance, sometimes a large-count type
      spec.shape = PlanLargeCount(rng, 0.5) ? MemTypeSpec::Shape::kContiguousC
                                           : MemTypeSpec::Shape::kVector;
      spec.count = 1;
      spec.blocklength = rng.LogUniform(1, std::min<int64_t>(4096, max_units));
      spec.stride = spec.blocklength;
      return spec;
  }
}

// A memory type for external32 accesses: MPI_INT, or a vector of MPI_INT used as one instance.
// MPICH 4.0.2's ROMIO converts through a buffer of count * true_extent bytes that it then
// accesses with the memory type itself, so a type with a nonzero lower bound or gaps between
// instances would overrun it.
MemTypeSpec External32MemType(Rng& rng, int64_t max_units) {
  MemTypeSpec spec = Contiguous(Element::kInt);
  if (max_units < 2 || rng.Chance(0.6)) return spec;
  spec.shape = MemTypeSpec::Shape::kVector;
  spec.blocklength = rng.LogUniform(1, std::min<int64_t>(64, max_units));
  spec.count = rng.Uniform(1, std::min<int64_t>(8, max_units / spec.blocklength));
  spec.stride = spec.blocklength + rng.Uniform(1, 16);
  return spec;
}

// Owns a committed derived datatype (named types are borrowed).
class OwnedType {
 public:
  explicit OwnedType(MPI_Datatype type, bool owned) : type_(type), owned_(owned) {}
  ~OwnedType() { Free(); }
  OwnedType(const OwnedType&) = delete;
  OwnedType& operator=(const OwnedType&) = delete;
  MPI_Datatype get() const { return type_; }
  bool alive() const { return type_ != MPI_DATATYPE_NULL; }
  // MPI allows freeing a datatype while a nonblocking operation still uses it; the test does
  // so on purpose, so a library must not keep the handle.
  void Free() {
    if (owned_ && type_ != MPI_DATATYPE_NULL) CHECK_MPI(MPI_Type_free(&type_));
    if (!owned_) type_ = MPI_DATATYPE_NULL;
  }

 private:
  MPI_Datatype type_;
  bool owned_;
};

std::unique_ptr<OwnedType> BuildMemType(const MemTypeSpec& spec) {
  const MPI_Datatype element = ElementType(spec.element);
  MPI_Datatype type = MPI_DATATYPE_NULL;
  switch (spec.shape) {
    case MemTypeSpec::Shape::kContiguous: return std::make_unique<OwnedType>(element, false);
    case MemTypeSpec::Shape::kVector:
      CHECK_MPI(MPI_Type_vector(static_cast<int>(spec.count), static_cast<int>(spec.blocklength),
                                static_cast<int>(spec.stride), element, &type));
      break;
    case MemTypeSpec::Shape::kContiguousC:
#if MPI_VERSION >= 4
      CHECK_MPI(MPI_Type_contiguous_c(spec.blocklength, element, &type));
#endif
      break;
    case MemTypeSpec::Shape::kIndexed:
      CHECK_MPI(MPI_Type_indexed(static_cast<int>(spec.lengths.size()), spec.lengths.data(),
                                 spec.displacements.data(), element, &type));
      break;
    case MemTypeSpec::Shape::kStruct: {
      std::vector<int> counts;
      std::vector<MPI_Aint> displacements;
      std::vector<MPI_Datatype> types;
      for (const StructField& field : spec.fields) {
        counts.push_back(static_cast<int>(field.count));
        displacements.push_back(field.displacement);
        types.push_back(field.type);
      }
      CHECK_MPI(MPI_Type_create_struct(static_cast<int>(counts.size()), counts.data(),
                                       displacements.data(), types.data(), &type));
      break;
    }
    case MemTypeSpec::Shape::kResized: {
      MPI_Datatype block;
      CHECK_MPI(MPI_Type_contiguous(static_cast<int>(spec.blocklength), element, &block));
      CHECK_MPI(MPI_Type_create_resized(block, spec.lb, spec.extent, &type));
      CHECK_MPI(MPI_Type_free(&block));
      break;
    }
  }
  CHECK_MPI(MPI_Type_commit(&type));
  return std::make_unique<OwnedType>(type, true);
}

// A buffer for `count` instances of a datatype, with guard bytes on both sides. The whole
// allocation (guards and gaps included) is what gets logged.
class TypedBuffer {
 public:
  static constexpr int64_t kGuard = 16;

  TypedBuffer(MPI_Datatype type, int64_t count) {
    MPI_Count lb, extent, true_lb, true_extent;
    CHECK_MPI(MPI_Type_get_extent_x(type, &lb, &extent));
    CHECK_MPI(MPI_Type_get_true_extent_x(type, &true_lb, &true_extent));
    int64_t low = 0, high = 0;
    if (count > 0) {
      const int64_t last = (count - 1) * extent;
      low = std::min<int64_t>(true_lb, true_lb + last);
      high = std::max<int64_t>(true_lb + true_extent, true_lb + last + true_extent);
    }
    bytes_.resize(high - low + 2 * kGuard);
    origin_ = kGuard - low;
  }
  void* origin() { return bytes_.data() + origin_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  int64_t origin_offset() const { return origin_; }

  void FillSentinel() {
    for (size_t i = 0; i < bytes_.size(); i++) bytes_[i] = static_cast<uint8_t>(0xA5 ^ (i * 29));
  }
  void FillRandom(Rng& rng) { rng.Fill(bytes_.data(), bytes_.size()); }

 private:
  std::vector<uint8_t> bytes_;
  int64_t origin_ = kGuard;
};

// ---------------------------------------------------------------------------------------------
// Data access calls: every read/write flavor MPI has, reached through one description.

enum class Completion : uint8_t { kBlocking, kWait, kTestLoop, kSplit };

struct AccessKind {
  bool write = false;
  bool explicit_offset = true;  // *_at* (else the individual file pointer)
  bool collective = false;
  bool large_count = false;  // the MPI 4 *_c variants
  Completion completion = Completion::kBlocking;

  bool nonblocking() const {
    return completion == Completion::kWait || completion == Completion::kTestLoop;
  }
  uint16_t Code() const {
    return static_cast<uint16_t>(100 + write + 2 * explicit_offset + 4 * collective +
                                 8 * large_count + 16 * static_cast<int>(completion));
  }
  std::string Name() const {
    std::string name = nonblocking() ? "i" : "";
    name += write ? "write" : "read";
    if (explicit_offset) name += "_at";
    if (collective) name += "_all";
    if (completion == Completion::kSplit) name += "_begin";
    if (large_count) name += "_c";
    if (completion == Completion::kWait) name += "+wait";
    if (completion == Completion::kTestLoop) name += "+test";
    if (completion == Completion::kSplit) name += "+end";
    return name;
  }
};

template <typename CountT>
int StartRead(const AccessKind& k, MPI_File fh, MPI_Offset offset, void* buf, CountT count,
              MPI_Datatype type, MPI_Status* status, MPI_Request* request);
template <typename CountT>
int StartWrite(const AccessKind& k, MPI_File fh, MPI_Offset offset, const void* buf,
               CountT count, MPI_Datatype type, MPI_Status* status, MPI_Request* request);

template <>
int StartRead<int>(const AccessKind& k, MPI_File fh, MPI_Offset offset, void* buf, int n,
                   MPI_Datatype t, MPI_Status* st, MPI_Request* req) {
  const bool at = k.explicit_offset, all = k.collective;
  switch (k.completion) {
    case Completion::kBlocking:
      if (at) return all ? MPI_File_read_at_all(fh, offset, buf, n, t, st)
                         : MPI_File_read_at(fh, offset, buf, n, t, st);
      return all ? MPI_File_read_all(fh, buf, n, t, st) : MPI_File_read(fh, buf, n, t, st);
    case Completion::kWait:
    case Completion::kTestLoop:
      if (at) return all ? MPI_File_iread_at_all(fh, offset, buf, n, t, req)
                         : MPI_File_iread_at(fh, offset, buf, n, t, req);
      return all ? MPI_File_iread_all(fh, buf, n, t, req) : MPI_File_iread(fh, buf, n, t, req);
    case Completion::kSplit:
      return at ? MPI_File_read_at_all_begin(fh, offset, buf, n, t)
                : MPI_File_read_all_begin(fh, buf, n, t);
  }
  return MPI_ERR_OTHER;
}

#if MPI_VERSION >= 4
template <>
int StartRead<MPI_Count>(const AccessKind& k, MPI_File fh, MPI_Offset offset, void* buf,
                         MPI_Count n, MPI_Datatype t, MPI_Status* st, MPI_Request* req) {
  const bool at = k.explicit_offset, all = k.collective;
  switch (k.completion) {
    case Completion::kBlocking:
      if (at) return all ? MPI_File_read_at_all_c(fh, offset, buf, n, t, st)
                         : MPI_File_read_at_c(fh, offset, buf, n, t, st);
      return all ? MPI_File_read_all_c(fh, buf, n, t, st) : MPI_File_read_c(fh, buf, n, t, st);
    case Completion::kWait:
    case Completion::kTestLoop:
      if (at) return all ? MPI_File_iread_at_all_c(fh, offset, buf, n, t, req)
                         : MPI_File_iread_at_c(fh, offset, buf, n, t, req);
      return all ? MPI_File_iread_all_c(fh, buf, n, t, req)
                 : MPI_File_iread_c(fh, buf, n, t, req);
    case Completion::kSplit:
      return at ? MPI_File_read_at_all_begin_c(fh, offset, buf, n, t)
                : MPI_File_read_all_begin_c(fh, buf, n, t);
  }
  return MPI_ERR_OTHER;
}
#endif

template <>
int StartWrite<int>(const AccessKind& k, MPI_File fh, MPI_Offset offset, const void* buf, int n,
                    MPI_Datatype t, MPI_Status* st, MPI_Request* req) {
  const bool at = k.explicit_offset, all = k.collective;
  switch (k.completion) {
    case Completion::kBlocking:
      if (at) return all ? MPI_File_write_at_all(fh, offset, buf, n, t, st)
                         : MPI_File_write_at(fh, offset, buf, n, t, st);
      return all ? MPI_File_write_all(fh, buf, n, t, st) : MPI_File_write(fh, buf, n, t, st);
    case Completion::kWait:
    case Completion::kTestLoop:
      if (at) return all ? MPI_File_iwrite_at_all(fh, offset, buf, n, t, req)
                         : MPI_File_iwrite_at(fh, offset, buf, n, t, req);
      return all ? MPI_File_iwrite_all(fh, buf, n, t, req)
                 : MPI_File_iwrite(fh, buf, n, t, req);
    case Completion::kSplit:
      return at ? MPI_File_write_at_all_begin(fh, offset, buf, n, t)
                : MPI_File_write_all_begin(fh, buf, n, t);
  }
  return MPI_ERR_OTHER;
}

#if MPI_VERSION >= 4
template <>
int StartWrite<MPI_Count>(const AccessKind& k, MPI_File fh, MPI_Offset offset, const void* buf,
                          MPI_Count n, MPI_Datatype t, MPI_Status* st, MPI_Request* req) {
  const bool at = k.explicit_offset, all = k.collective;
  switch (k.completion) {
    case Completion::kBlocking:
      if (at) return all ? MPI_File_write_at_all_c(fh, offset, buf, n, t, st)
                         : MPI_File_write_at_c(fh, offset, buf, n, t, st);
      return all ? MPI_File_write_all_c(fh, buf, n, t, st)
                 : MPI_File_write_c(fh, buf, n, t, st);
    case Completion::kWait:
    case Completion::kTestLoop:
      if (at) return all ? MPI_File_iwrite_at_all_c(fh, offset, buf, n, t, req)
                         : MPI_File_iwrite_at_c(fh, offset, buf, n, t, req);
      return all ? MPI_File_iwrite_all_c(fh, buf, n, t, req)
                 : MPI_File_iwrite_c(fh, buf, n, t, req);
    case Completion::kSplit:
      return at ? MPI_File_write_at_all_begin_c(fh, offset, buf, n, t)
                : MPI_File_write_all_begin_c(fh, buf, n, t);
  }
  return MPI_ERR_OTHER;
}
#endif

// Starts the access (blocking kinds: performs it). Returns the MPI error code.
int StartAccess(const AccessKind& k, MPI_File fh, MPI_Offset offset, void* buf, int64_t count,
                MPI_Datatype type, MPI_Status* status, MPI_Request* request) {
#if MPI_VERSION >= 4
  if (k.large_count) {
    const MPI_Count n = count;
    return k.write ? StartWrite<MPI_Count>(k, fh, offset, buf, n, type, status, request)
                   : StartRead<MPI_Count>(k, fh, offset, buf, n, type, status, request);
  }
#endif
  const int n = static_cast<int>(count);
  return k.write ? StartWrite<int>(k, fh, offset, buf, n, type, status, request)
                 : StartRead<int>(k, fh, offset, buf, n, type, status, request);
}

int EndSplit(const AccessKind& k, MPI_File fh, void* buf, MPI_Status* status) {
  if (k.write) {
    return k.explicit_offset ? MPI_File_write_at_all_end(fh, buf, status)
                             : MPI_File_write_all_end(fh, buf, status);
  }
  return k.explicit_offset ? MPI_File_read_at_all_end(fh, buf, status)
                           : MPI_File_read_all_end(fh, buf, status);
}

void WaitOrTest(Completion completion, MPI_Request* request, MPI_Status* status) {
  if (completion == Completion::kWait) {
    CHECK_MPI(MPI_Wait(request, status));
    return;
  }
  int done = 0;
  while (!done) CHECK_MPI(MPI_Test(request, &done, status));
}

// The count of `type` in `status`, in the widest form the MPI has.
int64_t StatusCount(const MPI_Status& status, MPI_Datatype type) {
#if MPI_VERSION >= 4
  MPI_Count count = 0;
  CHECK_MPI(MPI_Get_count_c(&status, type, &count));
#else
  int count = 0;
  CHECK_MPI(MPI_Get_count(&status, type, &count));
#endif
  return count;
}

// Bytes transferred according to the status. Counting in MPI_BYTE works for every datatype
// and stays valid after the datatype has been freed.
int64_t TransferredBytes(const MPI_Status& status, bool large_count) {
#if MPI_VERSION >= 4
  if (large_count) {
    MPI_Count count = 0;
    CHECK_MPI(MPI_Get_count_c(&status, MPI_BYTE, &count));
    return count;
  }
#endif
  int count = 0;
  CHECK_MPI(MPI_Get_count(&status, MPI_BYTE, &count));
  return count;
}

// ---------------------------------------------------------------------------------------------
// Shared file pointer calls: ordered (collective, in rank order) and shared (independent).

struct SharedKind {
  enum class How : uint8_t { kBlocking, kSplit, kWait };  // kSplit: ordered only; kWait: shared
  bool write = false;
  bool ordered = true;
  bool large_count = false;
  How how = How::kBlocking;

  uint16_t Code() const {
    return static_cast<uint16_t>(200 + write + 2 * ordered + 4 * large_count +
                                 8 * static_cast<int>(how));
  }
  std::string Name() const {
    std::string name = how == How::kWait ? "i" : "";
    name += write ? "write" : "read";
    name += ordered ? "_ordered" : "_shared";
    if (how == How::kSplit) name += "_begin";
    if (large_count) name += "_c";
    if (how == How::kWait) name += "+wait";
    if (how == How::kSplit) name += "+end";
    return name;
  }
};

// The int forms; StartSharedLarge below is the same with the large-count (_c) forms.
int StartSharedInt(const SharedKind& k, MPI_File fh, void* buf, int n, MPI_Datatype t,
                   MPI_Status* st, MPI_Request* req) {
  if (k.ordered) {
    if (k.how == SharedKind::How::kSplit) {
      return k.write ? MPI_File_write_ordered_begin(fh, buf, n, t)
                     : MPI_File_read_ordered_begin(fh, buf, n, t);
    }
    return k.write ? MPI_File_write_ordered(fh, buf, n, t, st)
                   : MPI_File_read_ordered(fh, buf, n, t, st);
  }
  if (k.how == SharedKind::How::kWait) {
    return k.write ? MPI_File_iwrite_shared(fh, buf, n, t, req)
                   : MPI_File_iread_shared(fh, buf, n, t, req);
  }
  return k.write ? MPI_File_write_shared(fh, buf, n, t, st) : MPI_File_read_shared(fh, buf, n, t, st);
}

#if MPI_VERSION >= 4
int StartSharedLarge(const SharedKind& k, MPI_File fh, void* buf, MPI_Count c, MPI_Datatype t,
                     MPI_Status* st, MPI_Request* req) {
  if (k.ordered) {
    if (k.how == SharedKind::How::kSplit) {
      return k.write ? MPI_File_write_ordered_begin_c(fh, buf, c, t)
                     : MPI_File_read_ordered_begin_c(fh, buf, c, t);
    }
    return k.write ? MPI_File_write_ordered_c(fh, buf, c, t, st)
                   : MPI_File_read_ordered_c(fh, buf, c, t, st);
  }
  if (k.how == SharedKind::How::kWait) {
    return k.write ? MPI_File_iwrite_shared_c(fh, buf, c, t, req)
                   : MPI_File_iread_shared_c(fh, buf, c, t, req);
  }
  return k.write ? MPI_File_write_shared_c(fh, buf, c, t, st)
                 : MPI_File_read_shared_c(fh, buf, c, t, st);
}
#endif

int StartShared(const SharedKind& k, MPI_File fh, void* buf, int64_t count, MPI_Datatype t,
                MPI_Status* st, MPI_Request* req) {
#if MPI_VERSION >= 4
  if (k.large_count) return StartSharedLarge(k, fh, buf, count, t, st, req);
#endif
  return StartSharedInt(k, fh, buf, static_cast<int>(count), t, st, req);
}

int EndOrderedSplit(const SharedKind& k, MPI_File fh, void* buf, MPI_Status* status) {
  return k.write ? MPI_File_write_ordered_end(fh, buf, status)
                 : MPI_File_read_ordered_end(fh, buf, status);
}

// Native ints to external32 ones and back: external32 is big-endian. The driver moves only
// MPI_INT through external32 views.
void SwapInts(std::vector<uint8_t>* bytes) {
  const uint32_t one = 1;
  if (*reinterpret_cast<const uint8_t*>(&one) == 0) return;  // a big-endian host
  for (size_t i = 0; i + 4 <= bytes->size(); i += 4) {
    std::swap((*bytes)[i], (*bytes)[i + 3]);
    std::swap((*bytes)[i + 1], (*bytes)[i + 2]);
  }
}

// ---------------------------------------------------------------------------------------------
// File views
//
// In "view" epochs every rank's filetype selects a disjoint part of the file. The driver keeps
// its own description of that part (ViewLayout) to plan reads below the end of file; it is
// checked against the MPI datatype's size and extent when the view is set.

struct Block {
  int64_t offset;  // bytes from the start of a tile
  int64_t length;  // bytes
};

// One rank's view: the filetype tiled from `displacement`, `tile_extent` bytes per copy.
struct ViewLayout {
  int64_t displacement = 0;
  int64_t tile_extent = 0;
  std::vector<Block> blocks;  // in file order, adjacent ones merged
  int64_t tile_bytes = 0;     // sum of block lengths

  void AddBlock(int64_t offset, int64_t length) {
    if (!blocks.empty() && blocks.back().offset + blocks.back().length == offset) {
      blocks.back().length += length;
    } else {
      blocks.push_back({offset, length});
    }
    tile_bytes += length;
  }
  int64_t smallest_block() const {
    int64_t smallest = tile_bytes;
    for (const Block& block : blocks) smallest = std::min(smallest, block.length);
    return smallest;
  }
  // The absolute file offset of byte `stream_byte` of the view's data stream.
  int64_t FileOffsetOf(int64_t stream_byte) const {
    const int64_t tile = stream_byte / tile_bytes;
    int64_t within = stream_byte % tile_bytes;
    for (const Block& block : blocks) {
      if (within < block.length) return displacement + tile * tile_extent + block.offset + within;
      within -= block.length;
    }
    return -1;  // unreachable
  }
  // Appends the file extents (absolute offsets) holding stream bytes
  // [stream_byte, stream_byte + length).
  void MapStream(int64_t stream_byte, int64_t length, std::vector<Block>* out) const {
    int64_t tile = stream_byte / tile_bytes, within = stream_byte % tile_bytes;
    while (length > 0) {
      for (const Block& block : blocks) {
        if (length == 0) break;
        if (within >= block.length) {
          within -= block.length;
          continue;
        }
        const int64_t piece = std::min(block.length - within, length);
        out->push_back({displacement + tile * tile_extent + block.offset + within, piece});
        length -= piece;
        within = 0;
      }
      tile++;
    }
  }
  // How many stream bytes lie at file offsets below `file_limit`.
  int64_t StreamBytesBelow(int64_t file_limit) const {
    if (file_limit <= displacement) return 0;
    const int64_t tiles = (file_limit - displacement) / tile_extent;
    const int64_t rest = (file_limit - displacement) % tile_extent;
    int64_t bytes = tiles * tile_bytes;
    for (const Block& block : blocks) {
      bytes += std::clamp<int64_t>(rest - block.offset, 0, block.length);
    }
    return bytes;
  }
};

struct ViewSpec {
  enum class Shape : uint8_t { kVector, kSubarrayRows, kSubarrayColumns, kIndexed };
  Shape shape = Shape::kVector;
  Element etype = Element::kByte;
  int64_t displacement = 0;                  // bytes, before any rank's offset
  int64_t blocklength = 1, blocks_per_tile = 1;  // vector, in etypes
  int64_t rows = 1, columns = 1;             // subarray, in etypes
  std::vector<int64_t> lengths;              // indexed, in etypes; block i belongs to rank i % n
  int64_t gap = 0;                           // bytes added to each tile's extent (resized)

  std::string Describe() const {
    std::string text;
    switch (shape) {
      case Shape::kVector:
        text = Format("vector(b=%" PRId64 ",c=%" PRId64 ")", blocklength, blocks_per_tile);
        break;
      case Shape::kSubarrayRows:
      case Shape::kSubarrayColumns:
        text = Format("subarray-%s(%" PRId64 "x%" PRId64 ")",
                      shape == Shape::kSubarrayRows ? "rows" : "columns", rows, columns);
        break;
      case Shape::kIndexed:
        text = Format("indexed(%zu blocks)", lengths.size());
        break;
    }
    return text + Format(" etype=%s disp=%" PRId64 " gap=%" PRId64, ElementName(etype),
                         displacement, gap);
  }
};

ViewSpec RandomViewSpec(Rng& rng, int nranks) {
  ViewSpec spec;
  spec.etype = rng.Chance(0.4) ? Element::kInt : Element::kByte;
  const int64_t etype_bytes = ElementBytes(spec.etype);
  spec.displacement = rng.Chance(0.5) ? 0 : rng.Uniform(1, 5000);
  spec.gap = rng.Chance(0.3) ? rng.Uniform(1, 64) * etype_bytes : 0;
  switch (rng.Uniform(0, 3)) {
    case 0:
      spec.shape = ViewSpec::Shape::kVector;
      spec.blocklength = rng.LogUniform(1, 16384 / etype_bytes);
      spec.blocks_per_tile = rng.Uniform(1, 4);
      break;
    case 1:
    case 2:
      spec.shape = rng.Chance(0.5) ? ViewSpec::Shape::kSubarrayRows
                                   : ViewSpec::Shape::kSubarrayColumns;
      spec.rows = rng.Uniform(nranks, nranks + 40);
      spec.columns = rng.Uniform(nranks, 300);
      break;
    default: {
      spec.shape = ViewSpec::Shape::kIndexed;
      const int64_t blocks = nranks * rng.Uniform(1, 4) + rng.Uniform(0, nranks - 1);
      for (int64_t i = 0; i < blocks; i++) spec.lengths.push_back(rng.LogUniform(1, 2048));
      break;
    }
  }
  return spec;
}

// An external32 view: etype MPI_INT, a filetype of runs of MPI_INT dealt round-robin.
ViewSpec RandomExternal32ViewSpec(Rng& rng) {
  ViewSpec spec;
  spec.shape = ViewSpec::Shape::kVector;
  spec.etype = Element::kInt;
  spec.displacement = rng.Chance(0.5) ? 0 : rng.Uniform(1, 5000);
  spec.gap = rng.Chance(0.3) ? rng.Uniform(1, 64) * 4 : 0;
  spec.blocklength = rng.LogUniform(1, 4096);
  spec.blocks_per_tile = rng.Uniform(1, 3);
  return spec;
}

// The first and one-past-last of `total` items given to `rank` of `nranks` in block order.
std::pair<int64_t, int64_t> BlockPartition(int64_t total, int rank, int nranks) {
  return {total * rank / nranks, total * (rank + 1) / nranks};
}

ViewLayout LayoutOf(const ViewSpec& spec, int rank, int nranks) {
  const int64_t es = ElementBytes(spec.etype);
  ViewLayout layout;
  layout.displacement = spec.displacement;
  switch (spec.shape) {
    case ViewSpec::Shape::kVector: {
      const int64_t block_bytes = spec.blocklength * es;
      layout.displacement += rank * block_bytes;
      for (int64_t i = 0; i < spec.blocks_per_tile; i++) {
        layout.AddBlock(i * nranks * block_bytes, block_bytes);
      }
      layout.tile_extent = spec.blocks_per_tile * nranks * block_bytes;
      break;
    }
    case ViewSpec::Shape::kSubarrayRows: {
      const auto [first, last] = BlockPartition(spec.rows, rank, nranks);
      layout.AddBlock(first * spec.columns * es, (last - first) * spec.columns * es);
      layout.tile_extent = spec.rows * spec.columns * es;
      break;
    }
    case ViewSpec::Shape::kSubarrayColumns: {
      const auto [first, last] = BlockPartition(spec.columns, rank, nranks);
      for (int64_t row = 0; row < spec.rows; row++) {
        layout.AddBlock((row * spec.columns + first) * es, (last - first) * es);
      }
      layout.tile_extent = spec.rows * spec.columns * es;
      break;
    }
    case ViewSpec::Shape::kIndexed: {
      int64_t offset = 0;
      for (size_t i = 0; i < spec.lengths.size(); i++) {
        if (static_cast<int>(i % nranks) == rank) layout.AddBlock(offset, spec.lengths[i] * es);
        offset += spec.lengths[i] * es;
      }
      layout.tile_extent = offset;
      break;
    }
  }
  layout.tile_extent += spec.gap;
  return layout;
}

MPI_Datatype BuildFiletype(const ViewSpec& spec, int rank, int nranks) {
  const MPI_Datatype etype = ElementType(spec.etype);
  const int64_t es = ElementBytes(spec.etype);
  MPI_Datatype shape = MPI_DATATYPE_NULL;
  int64_t natural_extent = 0;  // the extent the tiling needs before the gap
  switch (spec.shape) {
    case ViewSpec::Shape::kVector:
      CHECK_MPI(MPI_Type_vector(static_cast<int>(spec.blocks_per_tile),
                                static_cast<int>(spec.blocklength),
                                static_cast<int>(spec.blocklength * nranks), etype, &shape));
      natural_extent = spec.blocks_per_tile * nranks * spec.blocklength * es;
      break;
    case ViewSpec::Shape::kSubarrayRows:
    case ViewSpec::Shape::kSubarrayColumns: {
      const bool by_rows = spec.shape == ViewSpec::Shape::kSubarrayRows;
      const auto [first, last] = BlockPartition(by_rows ? spec.rows : spec.columns, rank, nranks);
      const int sizes[2] = {static_cast<int>(spec.rows), static_cast<int>(spec.columns)};
      int subsizes[2] = {sizes[0], sizes[1]}, starts[2] = {0, 0};
      subsizes[by_rows ? 0 : 1] = static_cast<int>(last - first);
      starts[by_rows ? 0 : 1] = static_cast<int>(first);
      CHECK_MPI(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, etype, &shape));
      natural_extent = spec.rows * spec.columns * es;
      break;
    }
    case ViewSpec::Shape::kIndexed: {
      std::vector<int> lengths, displacements;
      int64_t offset = 0;
      for (size_t i = 0; i < spec.lengths.size(); i++) {
        if (static_cast<int>(i % nranks) == rank) {
          lengths.push_back(static_cast<int>(spec.lengths[i]));
          displacements.push_back(static_cast<int>(offset));
        }
        offset += spec.lengths[i];
      }
      CHECK_MPI(MPI_Type_indexed(static_cast<int>(lengths.size()), lengths.data(),
                                 displacements.data(), etype, &shape));
      natural_extent = offset * es;
      break;
    }
  }
  // Resizing sets lb 0 (an indexed type's lb is its first block) and the tile extent, gap
  // included; without it a vector tile would end right after its last block.
  MPI_Datatype filetype;
  CHECK_MPI(MPI_Type_create_resized(shape, 0, natural_extent + spec.gap, &filetype));
  CHECK_MPI(MPI_Type_free(&shape));
  CHECK_MPI(MPI_Type_commit(&filetype));
  return filetype;
}

// ---------------------------------------------------------------------------------------------
// Access spaces: where a rank may access in the current epoch, in units of the view (bytes in
// segment epochs, etypes in view epochs).

struct UnitRange {
  int64_t begin = 0;
  int64_t length = 0;
  int64_t end() const { return begin + length; }
  bool Overlaps(const UnitRange& other) const {
    return begin < other.end() && other.begin < end();
  }
};

UnitRange PickWithin(Rng& rng, int64_t begin, int64_t end, int64_t max_units) {
  const int64_t cap = std::min(end - begin, max_units);
  const int64_t length = rng.Chance(0.15) ? cap : rng.LogUniform(1, cap);
  return {rng.Uniform(begin, end - length), length};
}

class AccessSpace {
 public:
  virtual ~AccessSpace() = default;
  virtual int64_t unit_bytes() const = 0;
  // The largest access worth planning, in units.
  virtual int64_t max_units() const = 0;
  // A random range of `rank`'s own units whose file bytes all lie below `file_limit`.
  virtual std::optional<UnitRange> Pick(Rng& rng, int rank, int64_t file_limit) const = 0;
  // How many own units follow `position` (inclusive) below `file_limit`; 0 if not own.
  virtual int64_t RoomAt(int rank, int64_t position, int64_t file_limit) const = 0;
  // One past the last file byte `range` touches.
  virtual int64_t FileEnd(int rank, const UnitRange& range) const = 0;
  // Appends the file extents (absolute offsets, in stream order) that `range` covers.
  virtual void MapToFile(int rank, const UnitRange& range, std::vector<Block>* out) const = 0;
};

// Segment i = [i*S, (i+1)*S) of the file belongs to rank (i + epoch) % nranks.
class SegmentSpace : public AccessSpace {
 public:
  SegmentSpace(int nranks, int epoch, int64_t segment_bytes)
      : nranks_(nranks), epoch_(epoch), segment_(segment_bytes) {}

  int64_t unit_bytes() const override { return 1; }
  int64_t max_units() const override { return 200 << 10; }

  std::optional<UnitRange> Pick(Rng& rng, int rank, int64_t file_limit) const override {
    if (file_limit <= 0) return std::nullopt;
    if (nranks_ == 1) return PickWithin(rng, 0, file_limit, max_units());
    const int64_t segments = (file_limit + segment_ - 1) / segment_;
    const int64_t first = ((rank - epoch_) % nranks_ + nranks_) % nranks_;
    if (first >= segments) return std::nullopt;
    const int64_t index = first + nranks_ * rng.Uniform(0, (segments - 1 - first) / nranks_);
    const int64_t begin = index * segment_;
    return PickWithin(rng, begin, std::min(begin + segment_, file_limit), max_units());
  }
  int64_t RoomAt(int rank, int64_t position, int64_t file_limit) const override {
    if (nranks_ == 1) return std::max<int64_t>(0, file_limit - position);
    const int64_t index = position / segment_;
    if ((index + epoch_) % nranks_ != rank) return 0;
    return std::max<int64_t>(0, std::min((index + 1) * segment_, file_limit) - position);
  }
  int64_t FileEnd(int, const UnitRange& range) const override { return range.end(); }
  void MapToFile(int, const UnitRange& range, std::vector<Block>* out) const override {
    out->push_back({range.begin, range.length});
  }
  // The first byte of the segment holding `offset`, if `rank` owns it; else -1.
  int64_t OwnedSegmentStart(int rank, int64_t offset) const {
    if (nranks_ == 1) return 0;
    const int64_t index = offset / segment_;
    return (index + epoch_) % nranks_ == rank ? index * segment_ : -1;
  }

 private:
  int nranks_;
  int epoch_;
  int64_t segment_;
};

class ViewSpace : public AccessSpace {
 public:
  ViewSpace(const ViewSpec& spec, int nranks) : etype_bytes_(ElementBytes(spec.etype)) {
    for (int rank = 0; rank < nranks; rank++) layouts_.push_back(LayoutOf(spec, rank, nranks));
  }
  const ViewLayout& layout(int rank) const { return layouts_[rank]; }

  int64_t unit_bytes() const override { return etype_bytes_; }
  int64_t max_units() const override {
    // ROMIO writes a noncontiguous view piece by piece (data sieving is off), so accesses
    // over tiny blocks are kept short to bound the number of system calls.
    int64_t smallest = layouts_[0].smallest_block();
    for (const ViewLayout& layout : layouts_) {
      smallest = std::min(smallest, layout.smallest_block());
    }
    return std::max<int64_t>(1, std::min<int64_t>(64 << 10, smallest * 1500) / etype_bytes_);
  }
  std::optional<UnitRange> Pick(Rng& rng, int rank, int64_t file_limit) const override {
    const int64_t available = Available(rank, file_limit);
    if (available <= 0) return std::nullopt;
    return PickWithin(rng, 0, available, max_units());
  }
  int64_t RoomAt(int rank, int64_t position, int64_t file_limit) const override {
    return std::max<int64_t>(0, Available(rank, file_limit) - position);
  }
  int64_t FileEnd(int rank, const UnitRange& range) const override {
    return layouts_[rank].FileOffsetOf(range.end() * etype_bytes_ - 1) + 1;
  }
  void MapToFile(int rank, const UnitRange& range, std::vector<Block>* out) const override {
    layouts_[rank].MapStream(range.begin * etype_bytes_, range.length * etype_bytes_, out);
  }

 private:
  int64_t Available(int rank, int64_t file_limit) const {
    return layouts_[rank].StreamBytesBelow(file_limit) / etype_bytes_;
  }
  int64_t etype_bytes_;
  std::vector<ViewLayout> layouts_;
};

// ---------------------------------------------------------------------------------------------
// The file model
//
// Every write is planned on every rank and its data is reproducible, so each rank can keep
// the file contents byte for byte. Reads and the final file are checked against this model
// too: the plain-MPI reference is not infallible (MPICH 4.0.2's ROMIO has bugs this driver
// steps around), and a model mismatch names the byte, the expected value and its writer.

class FileModel {
 public:
  int64_t size() const { return static_cast<int64_t>(bytes_.size()); }

  // set_size and preallocate: truncate, or extend with a hole (zeros, as ROMIO and OMPIO's
  // set_size make it; the standard leaves the new bytes undefined, see kPreallocatePastEnd).
  void Resize(int64_t size) {
    bytes_.resize(size, 0);
    writers_.resize(size, 0);
  }

  void Write(const std::vector<Block>& extents, const uint8_t* data, uint32_t op, int rank) {
    for (const Block& extent : extents) {
      if (extent.offset + extent.length > size()) Resize(extent.offset + extent.length);
      memcpy(&bytes_[extent.offset], data, extent.length);
      std::fill_n(&writers_[extent.offset], extent.length, (op << 8) | static_cast<uint32_t>(rank));
      data += extent.length;
    }
  }

  // "" if `data` is what the model holds at `extents`; else the first difference.
  std::string Compare(const std::vector<Block>& extents, const uint8_t* data) const {
    int64_t differing = 0, total = 0, first_offset = -1;
    uint8_t first_actual = 0;
    for (const Block& extent : extents) {
      for (int64_t i = 0; i < extent.length; i++, total++) {
        const int64_t offset = extent.offset + i;
        const bool same = offset < size() && bytes_[offset] == data[total];
        if (same) continue;
        if (first_offset < 0) {
          first_offset = offset;
          first_actual = data[total];
        }
        differing++;
      }
    }
    if (first_offset < 0) return "";
    return Format("file offset %" PRId64 " holds 0x%02x, the model says %s; %" PRId64
                  " of %" PRId64 " bytes differ",
                  first_offset, first_actual, Describe(first_offset).c_str(), differing, total);
  }

  // The model's value of one byte and where it came from.
  std::string Describe(int64_t offset) const {
    if (offset >= size()) return Format("end of file (size %" PRId64 ")", size());
    const uint32_t writer = writers_[offset];
    if (writer == 0) return Format("0x%02x (never written: a hole)", bytes_[offset]);
    return Format("0x%02x (written by rank %u at op %u)", bytes_[offset], writer & 0xff,
                  writer >> 8);
  }

  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
  std::vector<uint32_t> writers_;  // (op << 8) | rank of each byte's last write; 0: never
};

// The bytes a buffer holds for `count` instances of `type`, in typemap order.
std::vector<uint8_t> PackedData(MPI_Datatype type, int64_t count, const void* origin) {
  int size = 0, position = 0;
  CHECK_MPI(MPI_Pack_size(static_cast<int>(count), type, MPI_COMM_SELF, &size));
  std::vector<uint8_t> packed(size);
  CHECK_MPI(MPI_Pack(origin, static_cast<int>(count), type, packed.data(), size, &position,
                     MPI_COMM_SELF));
  packed.resize(position);
  return packed;
}

// ---------------------------------------------------------------------------------------------
// Operations

enum class PointerMove : uint8_t { kNone, kSeekSet, kSeekCur };

// One rank's part of an operation.
struct RankAccess {
  bool active = false;  // inactive: independent calls are skipped, collectives pass count 0
  int64_t offset = 0;   // first unit accessed (explicit offset, or where the pointer will be)
  int64_t count = 0;    // instances of memtype
  MemTypeSpec memtype;
  PointerMove move = PointerMove::kNone;
  int64_t seek_argument = 0;

  int64_t units() const { return count * memtype.Units(); }
};

// Operation codes of the log's `kind` field besides AccessKind::Code() (100..163).
enum OpCode : uint16_t {
  kCodeEofRead = 1,
  kCodeEofReadC = 2,
  kCodePosition = 3,
  kCodeByteOffset = 4,
  kCodeSeekEnd = 5,
  kCodeGetSize = 6,
  kCodeTypeExtent = 7,
  kCodeTypeExtentC = 8,
  kCodeInit = 9,
  kCodeFinalFile = 10,
  kCodeSeed = 11,
  kCodePositionShared = 12,
  kCodeAtomicity = 13,
  kCodeErrorClass = 14,
  kCodeSequentialRead = 15,
  kCodeSequentialSize = 16,
};

struct Options {
  uint32_t first_seed = 0, last_seed = 0;
  std::string dir, log;
  int ops = 60;
};

// kShared: segments plus a region reserved for shared-file-pointer calls; kAtomic: segments,
// part of it in atomic mode; kExternal32: a view with the "external32" data representation.
enum class EpochMode : uint8_t { kSegments, kView, kShared, kAtomic, kExternal32 };

// Runs one seed. Every method named Plan* draws from plan_ and must be called identically on
// all ranks; Execute* methods perform this rank's part.
class SeedRun {
 public:
  SeedRun(uint32_t seed, const Options& options, Log& log, int rank, int nranks)
      : seed_(seed),
        options_(options),
        log_(log),
        rank_(rank),
        nranks_(nranks),
        plan_(MixSeed(seed, 0x5eed)),
        pointer_(nranks, 0),
        write_end_(nranks, 0),
        independent_write_end_(nranks, 0),
        preexec_(g_preexec, script_, g_preexec_totals) {
    path_ = Format("%s/seed_%u.dat", options.dir.c_str(), seed);
  }

  void Run() {
    if (g_preexec && !rehearsal_) Rehearse();
    g_context.seed = seed_;
    PlanSeed();
    OpenFile(/*create=*/true);
    Initialize();
    for (int epoch = 0; epoch < epochs_; epoch++) {
      MaybeChangeHints();
      RunEpoch(epoch);
      EnableCache();
      MaybeChangeSize();
    }
    if (rehearsal_) return rehearsal_->End(op_);  // the slices end here (diff_preexec.h)
    if (g_preexec && script_.ended_at() != op_) {
      Fail(Format("driver bug: the rehearsal ended its epochs at op %u", script_.ended_at()));
    }
    MaybeRunSequentialFile();
    Finish();
  }

 private:
  // ---- seed level --------------------------------------------------------------------------

  // Plans the seed again, without MPI-IO, recording the prefetch counterparts of this rank's
  // calls on the seed's file into script_.
  void Rehearse() {
    Log discarded("/dev/null");
    SeedRun rehearsal(seed_, options_, discarded, rank_, nranks_);
    rehearsal.rehearsal_ = &script_;
    rehearsal.Run();
  }

  void PlanSeed() {
    const int64_t bucket = plan_.Uniform(0, 99);
    if (bucket < 35) {
      size_ = plan_.Uniform(0, 64 << 10);
    } else if (bucket < 75) {
      size_ = plan_.Uniform(64 << 10, 1200 << 10);
    } else {
      size_ = plan_.Uniform(1200 << 10, 3 << 20);
    }
    epochs_ = static_cast<int>(plan_.Uniform(3, 6));
    block_hint_ = PlanBlockHint();
    const std::vector<const char*> cache_hints = {"", "", "", "", "96K", "300K", "2M"};
    cache_hint_ = plan_.Pick(cache_hints);
    NextOp("seed");
    log_.Write(DIFFLOG_SEED_BEGIN, kCodeSeed, seed_, op_, 0,
               Format("seed %u nranks=%d initial_size=%" PRId64 " epochs=%d block_hint=%s "
                      "cache_hint=%s",
                      seed_, nranks_, size_, epochs_, block_hint_.c_str(), cache_hint_.c_str()),
               nullptr, 0);
  }

  std::string PlanBlockHint() {
    // Small and odd block sizes put many block boundaries inside small files and accesses.
    const std::vector<const char*> hints = {"", "", "", "4096", "37K", "4K", "16K", "100000",
                                            "1M", "64K", "3000"};
    return plan_.Pick(hints);
  }

  MPI_Info MakeInfo() const {
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    // See the file comment: these keep plain MPICH a correct, deterministic reference.
    CHECK_MPI(MPI_Info_set(info, "romio_cb_write", "disable"));
    CHECK_MPI(MPI_Info_set(info, "romio_ds_write", "disable"));
    CHECK_MPI(MPI_Info_set(info, "romio_ds_read", "disable"));
    // Only for speed: two-phase collective reads cost ~50 ms each at 4 ranks on 2 cores.
    CHECK_MPI(MPI_Info_set(info, "romio_cb_read", "disable"));
    if (!block_hint_.empty()) {
      CHECK_MPI(MPI_Info_set(info, "stagio_block_size", block_hint_.c_str()));
    }
    if (!cache_hint_.empty()) {
      CHECK_MPI(MPI_Info_set(info, "stagio_cache_size", cache_hint_.c_str()));
    }
    return info;
  }

  void OpenFile(bool create) {
    if (rehearsal_) {
      rehearsal_->Open(op_);
      std::fill(pointer_.begin(), pointer_.end(), 0);
      return;
    }
    MPI_Info info = MakeInfo();
    const int exclusive = kExclusiveCreate ? MPI_MODE_EXCL : 0;
    const int amode = MPI_MODE_RDWR | (create ? MPI_MODE_CREATE | exclusive : 0);
    SetWhat(create ? "open(create)" : "open");
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path_.c_str(), amode, info, &file_));
    CHECK_MPI(MPI_Info_free(&info));
    std::fill(pointer_.begin(), pointer_.end(), 0);
    if (!preexec_.AfterOpen(&file_, op_)) Fail("driver bug: the rehearsal did not open here");
  }

  void CloseFile() {
    if (rehearsal_) return;
    preexec_.BeforeClose();
    SetWhat("close");
    CHECK_MPI(MPI_File_close(&file_));
  }

  // Rank 0 writes the initial contents in chunks of random sizes, leaving some holes.
  void Initialize() {
    int64_t position = 0;
    while (position < size_) {
      const int64_t length = std::min(plan_.LogUniform(1, 1 << 20), size_ - position);
      const bool last = position + length == size_;
      const bool hole = !last && plan_.Chance(0.15);  // the last chunk sets the size
      const bool large_count = PlanLargeCount(plan_, 0.3);
      NextOp(large_count ? "init write_at_c" : "init write_at");
      if (!hole) {
        std::vector<uint8_t> data(length);
        DataRng(0).Fill(data.data(), data.size());
        model_.Write({{position, length}}, data.data(), op_, 0);
        if (rank_ == 0) ExecuteInitWrite(position, data, large_count);
      }
      position += length;
    }
    SyncBarrierSync();
  }

  void ExecuteInitWrite(int64_t offset, const std::vector<uint8_t>& data, bool large_count) {
    const int64_t length = static_cast<int64_t>(data.size());
    if (rehearsal_) {
      rehearsal_->Add(diff_preexec::Step::Access(/*write=*/true, /*explicit_offset=*/true,
                                                 /*collective=*/false, offset, length, MPI_BYTE,
                                                 nullptr));
      return;
    }
    MPI_Status status;
#if MPI_VERSION >= 4
    if (large_count) {
      CHECK_MPI(MPI_File_write_at_c(file_, offset, data.data(), length, MPI_BYTE, &status));
    } else
#endif
    {
      CHECK_MPI(MPI_File_write_at(file_, offset, data.data(), static_cast<int>(length), MPI_BYTE,
                                  &status));
    }
    const uint64_t hash = difflog_hash(data.data(), data.size());
    log_.Write(DIFFLOG_WRITE, kCodeInit, seed_, op_, TransferredBytes(status, large_count),
               Format("init write offset=%" PRId64 " length=%" PRId64, offset, length), &hash,
               sizeof hash);
  }

  void Finish() {
    if (plan_.Chance(0.65)) {
      SyncBarrierSync();
      NextOp("final get_size");
      ExecuteGetSize();
    }  // else: close alone must make every write durable
    CloseFile();
    SetWhat("barrier after close");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    NextOp("final file");
    PauseBeforeDelete();
    if (rank_ == 0) {
      LogFinalFile();
      SetWhat("delete");
      CHECK_MPI(MPI_File_delete(path_.c_str(), MPI_INFO_NULL));
    }
    log_.Write(DIFFLOG_SEED_END, kCodeSeed, seed_, op_, 0, "seed end", nullptr, 0);
  }

  // The file as POSIX sees it after close; stagio does not intercept POSIX.
  void LogFinalFile() {
    const int fd = open(path_.c_str(), O_RDONLY);
    if (fd < 0) Fail(Format("open %s: %s", path_.c_str(), strerror(errno)));
    struct stat info;
    if (fstat(fd, &info) != 0) Fail(Format("fstat %s: %s", path_.c_str(), strerror(errno)));
    std::vector<uint8_t> contents(info.st_size);
    size_t done = 0;
    while (done < contents.size()) {
      const ssize_t got = read(fd, contents.data() + done, contents.size() - done);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) Fail(Format("read %s: %s", path_.c_str(), got ? strerror(errno) : "EOF"));
      done += got;
    }
    close(fd);
    log_.Write(DIFFLOG_FINAL_FILE, kCodeFinalFile, seed_, op_, info.st_size, "final file",
               contents.data(), contents.size());
    if (info.st_size != size_) {
      Fail(Format("final file has %lld bytes, the model expects %" PRId64,
                  static_cast<long long>(info.st_size), size_));
    }
    const std::string difference = model_.Compare({{0, size_}}, contents.data());
    if (!difference.empty()) Fail("final file: " + difference);
  }

  // ---- epochs ------------------------------------------------------------------------------

  EpochMode PlanEpochMode() {
    const int64_t roll = plan_.Uniform(0, 99);
    // Upper bounds of the rolls of shared, atomic, external32 and view epochs; segments above.
    const int64_t(&bounds)[4] = g_focus_collective ? kFocusedEpochBounds : kEpochBounds;
    if (roll < bounds[0]) return EpochMode::kShared;
    if (roll < bounds[1]) return EpochMode::kAtomic;
    if (roll < bounds[2]) return EpochMode::kExternal32;
    return roll < bounds[3] ? EpochMode::kView : EpochMode::kSegments;
  }
  static constexpr int64_t kEpochBounds[4] = {13, 23, 32, 59};
  static constexpr int64_t kFocusedEpochBounds[4] = {4, 8, 14, 80};

  void RunEpoch(int epoch) {
    const EpochMode mode = PlanEpochMode();
    const bool view = mode == EpochMode::kView || mode == EpochMode::kExternal32;
    extending_ = plan_.Chance(0.65);
    write_limit_ = size_ + (extending_ ? plan_.LogUniform(1, 400 << 10) : 0);
    access_cap_ = INT64_MAX;
    std::fill(write_end_.begin(), write_end_.end(), 0);
    std::fill(independent_write_end_.begin(), independent_write_end_.end(), 0);
    shared_write_end_ = 0;
    const int operations = PlanOperationCount();
    if (view) {
      const ViewSpec spec = mode == EpochMode::kExternal32 ? RandomExternal32ViewSpec(plan_)
                                                            : RandomViewSpec(plan_, nranks_);
      // Hints may come with the view too; plain MPICH ignores stagio's.
      const std::string block_hint = plan_.Chance(0.15) ? PlanRuntimeBlockSize() : "";
      external32_ = mode == EpochMode::kExternal32;
      const char* datarep = external32_ ? "external32" : "native";
      NextOp(Format("set_view %s %s%s", datarep, spec.Describe().c_str(),
                    block_hint.empty() ? "" : (" stagio_block_size=" + block_hint).c_str()));
      ExecuteSetView(spec, datarep, block_hint);
      space_ = std::make_unique<ViewSpace>(spec, nranks_);
      segments_ = nullptr;
      element_ = spec.etype;
      std::fill(pointer_.begin(), pointer_.end(), 0);  // set_view resets file pointers
    } else {
      const int64_t segment_bytes = plan_.LogUniform(1, 300 << 10);
      auto segments = std::make_unique<SegmentSpace>(nranks_, epoch, segment_bytes);
      segments_ = segments.get();
      space_ = std::move(segments);
      element_ = Element::kByte;
    }
    switch (mode) {
      case EpochMode::kShared: RunSharedEpoch(operations); break;
      case EpochMode::kAtomic: RunAtomicEpoch(operations); break;
      default:
        for (int i = 0; i < operations; i++) {
          PlanAndRunOperation(view ? EpochMode::kView : EpochMode::kSegments);
        }
        break;
    }
    if (view) {
      NextOp("set_view default");
      ExecuteDefaultView();
      std::fill(pointer_.begin(), pointer_.end(), 0);
      external32_ = false;
    }
    EndEpoch();
    for (int64_t end : write_end_) size_ = std::max(size_, end);
    if (model_.size() != size_) {
      Fail(Format("driver bug: file model has %" PRId64 " bytes, size model %" PRId64,
                  model_.size(), size_));
    }
  }

  int PlanOperationCount() {
    const int mean = std::max(1, options_.ops / epochs_);
    return static_cast<int>(std::max<int64_t>(1, plan_.Uniform(mean - mean / 3, mean + mean / 3)));
  }

  void EndEpoch() {
    if (plan_.Chance(0.12)) {  // a reopen costs as much as ~6 barriers
      NextOp("close+reopen");
      CloseFile();
      if (plan_.Chance(0.3)) block_hint_ = PlanBlockHint();
      OpenFile(/*create=*/false);
    } else {
      SyncBarrierSync();
    }
  }

  void SyncBarrierSync() {
    NextOp("sync-barrier-sync");
    if (rehearsal_) {
      rehearsal_->Add(diff_preexec::Step::Sync());
      rehearsal_->Add(diff_preexec::Step::Sync());
      return;
    }
    CHECK_MPI(MPI_File_sync(file_));
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_MPI(MPI_File_sync(file_));
  }

  // Size changes count as writes of every rank, so another epoch boundary follows them.
  void MaybeChangeSize() {
    const int64_t choice = plan_.Uniform(0, 99);
    if (choice < 12) {
      const int64_t new_size = plan_.Chance(0.5) ? plan_.Uniform(0, size_)
                                                 : size_ + plan_.LogUniform(1, 300 << 10);
      NextOp(Format("set_size %" PRId64, new_size));
      if (rehearsal_) {
        rehearsal_->Add(diff_preexec::Step::SetSize(new_size));
      } else {
        CHECK_MPI(MPI_File_set_size(file_, new_size));
      }
      size_ = new_size;
      model_.Resize(new_size);
      SyncBarrierSync();
    } else if (choice < 18) {
      int64_t reserve = plan_.Chance(0.4) ? plan_.Uniform(0, size_)
                                          : size_ + plan_.LogUniform(1, 200 << 10);
      if (!kPreallocatePastEnd) reserve = std::min(reserve, std::max<int64_t>(size_ - 1, 0));
      NextOp(Format("preallocate %" PRId64, reserve));
      if (!rehearsal_) CHECK_MPI(MPI_File_preallocate(file_, reserve));
      size_ = std::max(size_, reserve);
      model_.Resize(size_);
      SyncBarrierSync();
    }
  }

  void ExecuteDefaultView() {
    if (rehearsal_) {
      rehearsal_->Add(diff_preexec::Step::SetView(0, MPI_BYTE, MPI_BYTE, "native", nullptr));
      return;
    }
    SetWhat("set_view default");
    CHECK_MPI(MPI_File_set_view(file_, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  }

  void ExecuteSetView(const ViewSpec& spec, const char* datarep, const std::string& block_hint) {
    const ViewLayout layout = LayoutOf(spec, rank_, nranks_);
    MPI_Datatype filetype = BuildFiletype(spec, rank_, nranks_);
    if (rehearsal_) {
      auto owner = std::make_shared<OwnedType>(filetype, true);
      rehearsal_->Add(diff_preexec::Step::SetView(layout.displacement, ElementType(spec.etype),
                                                  filetype, datarep, owner));
      return;
    }
    MPI_Count size, lb, extent;
    CHECK_MPI(MPI_Type_size_x(filetype, &size));
    CHECK_MPI(MPI_Type_get_extent_x(filetype, &lb, &extent));
    if (size != layout.tile_bytes || lb != 0 || extent != layout.tile_extent) {
      Fail(Format("driver bug: filetype size %lld extent %lld, layout says %" PRId64 " %" PRId64,
                  static_cast<long long>(size), static_cast<long long>(extent), layout.tile_bytes,
                  layout.tile_extent));
    }
    MPI_Info info = MPI_INFO_NULL;
    if (!block_hint.empty()) {
      CHECK_MPI(MPI_Info_create(&info));
      CHECK_MPI(MPI_Info_set(info, "stagio_block_size", block_hint.c_str()));
    }
    CHECK_MPI(MPI_File_set_view(file_, layout.displacement, ElementType(spec.etype), filetype,
                                datarep, info));
    if (info != MPI_INFO_NULL) CHECK_MPI(MPI_Info_free(&info));
    CHECK_MPI(MPI_Type_free(&filetype));  // the view must hold on to its own copy
  }

  // ---- operations --------------------------------------------------------------------------

  enum class OpClass : uint8_t {
    kAccess, kPair, kEofRead, kPosition, kSeekEnd, kGetSize, kTypeExtent, kSetInfo
  };

  OpClass PlanOpClass(EpochMode mode) {
    // The size is known and constant only in epochs where nobody grows the file, and past
    // the end of file only contiguous reads have reliable counts.
    const bool stable_size = !extending_;
    const bool segments = mode == EpochMode::kSegments;
    for (;;) {
      const int64_t roll = plan_.Uniform(0, 99);
      if (roll < 78) return OpClass::kAccess;
      if (roll < 85) {
        if (!external32_) return OpClass::kPair;  // independent nonblocking: see PlanAccessKind
        continue;
      }
      if (roll < 90) {
        if (stable_size && segments) return OpClass::kEofRead;
        continue;
      }
      if (roll < 94) return OpClass::kPosition;
      if (roll < 96) {
        if (stable_size && segments) return OpClass::kSeekEnd;
        continue;
      }
      if (roll < 98) {
        if (stable_size) return OpClass::kGetSize;
        continue;
      }
      return roll == 98 ? OpClass::kTypeExtent : OpClass::kSetInfo;
    }
  }

  AccessKind PlanAccessKind(bool allow_collective) {
    AccessKind kind;
    kind.write = plan_.Chance(0.5);
    kind.explicit_offset = plan_.Chance(0.55);
    kind.collective = allow_collective && plan_.Chance(g_focus_collective ? 0.7 : 0.3);
    kind.large_count = PlanLargeCount(plan_, 0.25);
    const int64_t roll = plan_.Uniform(0, 99);
    if (roll < 55) {
      kind.completion = Completion::kBlocking;
    } else if (roll < 75) {
      kind.completion = Completion::kWait;
    } else if (roll < 90 || !kind.collective) {
      kind.completion = Completion::kTestLoop;
    } else {
      kind.completion = Completion::kSplit;
    }
    // MPICH 4.0.2's MPI_File_iwrite and MPI_File_iwrite_at write external32 data unconverted,
    // and MPI_File_iread and MPI_File_iread_at through a noncontiguous filetype do not convert.
    if (external32_ && kind.nonblocking() && !kind.collective) {
      kind.completion = Completion::kBlocking;
    }
    return kind;
  }

  void PlanAndRunOperation(EpochMode mode) {
    switch (PlanOpClass(mode)) {
      case OpClass::kAccess: PlanAndRunAccess(); break;
      case OpClass::kPair: PlanAndRunPair(); break;
      case OpClass::kEofRead: PlanAndRunEofRead(); break;
      case OpClass::kPosition:
        NextOp("get_position+get_byte_offset");
        ExecutePosition();
        break;
      case OpClass::kSeekEnd: PlanAndRunSeekEnd(); break;
      case OpClass::kGetSize:
        NextOp("get_size");
        ExecuteGetSize();
        break;
      case OpClass::kTypeExtent: {
        const MemTypeSpec memtype = RandomMemType(plan_, element_, 64);
        const bool large_count = PlanLargeCount(plan_, 0.5);
        NextOp(large_count ? "get_type_extent_c" : "get_type_extent");
        ExecuteTypeExtent(memtype, large_count);
        break;
      }
      case OpClass::kSetInfo: PlanAndRunSetInfo(); break;
    }
  }

  void PlanAndRunAccess() {
    const AccessKind kind = PlanAccessKind(/*allow_collective=*/true);
    // Freeing the memory type while the request is pending is legal MPI. Only for
    // independent requests: MPICH 4.0's ROMIO still uses the type in a pending
    // nonblocking collective and crashes.
    const bool free_early = kind.nonblocking() && !kind.collective && plan_.Chance(0.3);
    NextOp(kind.Name());
    std::vector<RankAccess> ranks = PlanAccessForAllRanks(kind);
    ExecuteAccess(kind, ranks[rank_], free_early);
  }

  int64_t ReadLimit(int rank) const { return std::max(size_, write_end_[rank]); }

  // Plans `kind` for every rank and applies its effects to the model.
  std::vector<RankAccess> PlanAccessForAllRanks(const AccessKind& kind) {
    std::vector<RankAccess> ranks(nranks_);
    for (int rank = 0; rank < nranks_; rank++) {
      ranks[rank] = PlanRankAccess(rank, kind);
      ApplyToModel(rank, kind, ranks[rank], 0);
    }
    return ranks;
  }

  RankAccess PlanRankAccess(int rank, const AccessKind& kind) {
    RankAccess access;
    if (!plan_.Chance(kind.collective ? 0.85 : 0.9)) return access;
    const int64_t limit = std::min(kind.write ? write_limit_ : ReadLimit(rank), access_cap_);
    std::optional<UnitRange> range;
    bool from_pointer = false;
    if (!kind.explicit_offset && (carry_on_ || plan_.Chance(0.35))) {
      // Carry on where the previous pointer access stopped, if that is still own ground.
      const int64_t room = space_->RoomAt(rank, pointer_[rank], limit);
      if (room > 0) {
        range = PickWithin(plan_, pointer_[rank], pointer_[rank] + room, space_->max_units());
        range->begin = pointer_[rank];
        from_pointer = true;
      }
    }
    if (!range) range = space_->Pick(plan_, rank, limit);
    if (!range) return access;
    access.active = true;
    access.offset = range->begin;
    if (external32_) {
      access.memtype = External32MemType(plan_, range->length);
      access.count = access.memtype.shape == MemTypeSpec::Shape::kVector ? 1 : range->length;
    } else {
      access.memtype = RandomMemType(plan_, element_, range->length);
      access.count = std::max<int64_t>(1, range->length / access.memtype.Units());
    }
    if (!kind.explicit_offset && !from_pointer) {
      const bool relative = plan_.Chance(0.4);
      access.move = relative ? PointerMove::kSeekCur : PointerMove::kSeekSet;
      access.seek_argument = relative ? access.offset - pointer_[rank] : access.offset;
    }
    return access;
  }

  // `stream` tells apart the accesses of one operation (see DataRng). `shared_pointer`: the
  // access is an ordered or shared one (at the explicit offset the shared pointer gives).
  void ApplyToModel(int rank, const AccessKind& kind, const RankAccess& access, int stream,
                    bool shared_pointer = false) {
    if (!access.active) return;
    const UnitRange range{access.offset, access.units()};
    if (!kind.explicit_offset) pointer_[rank] = range.end();
    if (!kind.write) return;
    const int64_t file_end = space_->FileEnd(rank, range);
    write_end_[rank] = std::max(write_end_[rank], file_end);
    int64_t& kind_end = shared_pointer ? shared_write_end_ : independent_write_end_[rank];
    kind_end = std::max(kind_end, file_end);
    std::vector<uint8_t> packed = PlannedWriteData(rank, access, stream);
    if (external32_) SwapInts(&packed);
    std::vector<Block> extents;
    space_->MapToFile(rank, range, &extents);
    model_.Write(extents, packed.data(), op_, rank);
  }

  // The bytes `rank` writes for `access`: the same buffer the writing rank builds, packed as MPI
  // sends it to the file (in the native representation).
  std::vector<uint8_t> PlannedWriteData(int rank, const RankAccess& access, int stream) const {
    std::unique_ptr<OwnedType> type = BuildMemType(access.memtype);
    TypedBuffer buffer(type->get(), access.count);
    Rng data = DataRng(rank, stream);
    buffer.FillRandom(data);
    return PackedData(type->get(), access.count, buffer.origin());
  }

  // Two nonblocking independent accesses in flight at once, on disjoint ranges.
  void PlanAndRunPair() {
    AccessKind first = PlanAccessKind(false), second = PlanAccessKind(false);
    for (AccessKind* kind : {&first, &second}) {
      kind->explicit_offset = true;
      kind->completion = Completion::kWait;
    }
    const int64_t how = plan_.Uniform(0, 2);  // waitall, test loops, waitany loop
    NextOp(Format("pair %s %s %s", first.Name().c_str(), second.Name().c_str(),
                  how == 0 ? "waitall" : how == 1 ? "test each" : "waitany"));
    std::vector<RankAccess> firsts(nranks_), seconds(nranks_);
    for (int rank = 0; rank < nranks_; rank++) {
      // Both are planned against the state before either: a read must not rely on the
      // concurrent write having extended the file.
      firsts[rank] = PlanRankAccess(rank, first);
      seconds[rank] = PlanRankAccess(rank, second);
      const UnitRange a{firsts[rank].offset, firsts[rank].units()};
      const UnitRange b{seconds[rank].offset, seconds[rank].units()};
      if (firsts[rank].active && seconds[rank].active && a.Overlaps(b)) {
        seconds[rank].active = false;
      }
      ApplyToModel(rank, first, firsts[rank], 1);
      ApplyToModel(rank, second, seconds[rank], 2);
    }
    ExecutePair(first, firsts[rank_], second, seconds[rank_], static_cast<int>(how));
  }

  // A contiguous read_at that crosses or starts beyond the end of file; only in epochs that
  // keep the size fixed, so the returned count is the same under every correct library.
  void PlanAndRunEofRead() {
    const bool large_count = plan_.Chance(0.4);
    NextOp(large_count ? "eof read_at_c" : "eof read_at");
    std::vector<std::pair<int64_t, int64_t>> reads(nranks_, {-1, 0});  // offset, length
    for (int rank = 0; rank < nranks_; rank++) {
      if (!plan_.Chance(0.8)) continue;
      const int64_t length = plan_.LogUniform(1, 64 << 10);
      // The bytes before the end of file must be the reader's own.
      const int64_t last_owned =
          size_ > 0 ? segments_->OwnedSegmentStart(rank, size_ - 1) : -1;
      if (last_owned >= 0 && plan_.Chance(0.8)) {
        reads[rank] = {plan_.Uniform(std::max(last_owned, size_ - length), size_), length};
      } else {
        reads[rank] = {size_ + plan_.Uniform(0, 10000), length};
      }
    }
    const auto [offset, length] = reads[rank_];
    if (offset >= 0) ExecuteEofRead(offset, length, large_count);
  }

  void PlanAndRunSeekEnd() {
    NextOp("seek_end+get_position");
    std::vector<int64_t> arguments(nranks_);
    for (int rank = 0; rank < nranks_; rank++) {
      arguments[rank] = plan_.Chance(0.8) ? -plan_.Uniform(0, std::min<int64_t>(size_, 5000))
                                          : plan_.Uniform(0, 100);
      pointer_[rank] = size_ + arguments[rank];
    }
    if (rehearsal_) {
      rehearsal_->Add(diff_preexec::Step::Seek(arguments[rank_], MPI_SEEK_END));
      return;
    }
    SetWhat("seek end");
    CHECK_MPI(MPI_File_seek(file_, arguments[rank_], MPI_SEEK_END));
    ExecutePosition();
  }

  // ---- hints -------------------------------------------------------------------------------
  //
  // stagio takes hints at set_info and set_view too: a new stagio_block_size makes it write
  // back and re-block the file, stagio_cache=disable sends the file's calls to PMPI until
  // stagio_cache=enable. Plain MPICH ignores both keys.

  std::string PlanRuntimeBlockSize() {
    const std::vector<const char*> sizes = {"4K", "37K", "64K", "1M"};
    return plan_.Pick(sizes);
  }

  void ExecuteSetInfo(const std::string& block_size, const char* cache) {
    if (rehearsal_) return;
    MPI_Info info;
    CHECK_MPI(MPI_Info_create(&info));
    if (!block_size.empty()) {
      CHECK_MPI(MPI_Info_set(info, "stagio_block_size", block_size.c_str()));
    }
    if (cache) CHECK_MPI(MPI_Info_set(info, "stagio_cache", cache));
    CHECK_MPI(MPI_File_set_info(file_, info));
    CHECK_MPI(MPI_Info_free(&info));
  }

  // Between epochs: a new block size, or no caching for the coming epoch.
  void MaybeChangeHints() {
    const std::string block_size = plan_.Chance(0.15) ? PlanRuntimeBlockSize() : "";
    const bool disable = plan_.Chance(0.08);
    if (block_size.empty() && !disable) return;
    NextOp(Format("set_info%s%s",
                  block_size.empty() ? "" : (" stagio_block_size=" + block_size).c_str(),
                  disable ? " stagio_cache=disable" : ""));
    ExecuteSetInfo(block_size, disable ? "disable" : nullptr);
    if (!block_size.empty()) block_hint_ = block_size;  // a reopen keeps it
    if (disable) cache_disabled_ = true;
  }

  // After an epoch that (partly) ran with caching disabled.
  void EnableCache() {
    if (!cache_disabled_) return;
    NextOp("set_info stagio_cache=enable");
    ExecuteSetInfo("", "enable");
    cache_disabled_ = false;
  }

  // Within an epoch, with this epoch's writes still cached.
  void PlanAndRunSetInfo() {
    if (plan_.Chance(0.6)) {
      const std::string block_size = PlanRuntimeBlockSize();
      NextOp("set_info stagio_block_size=" + block_size);
      ExecuteSetInfo(block_size, nullptr);
      block_hint_ = block_size;
    } else {
      cache_disabled_ = !cache_disabled_;
      NextOp(cache_disabled_ ? "set_info stagio_cache=disable" : "set_info stagio_cache=enable");
      ExecuteSetInfo("", cache_disabled_ ? "disable" : "enable");
      // Nonblocking writes made while the cache was off went to PMPI.
      if (!cache_disabled_) WorkAroundStaleSize();
    }
  }

  // See g_get_size_workaround. The size is not logged: other ranks' writes may be in it or not.
  void WorkAroundStaleSize() {
    if (!g_get_size_workaround || rehearsal_) return;
    MPI_Offset ignored = 0;
    CHECK_MPI(MPI_File_get_size(file_, &ignored));
  }

  // ---- atomic epochs -------------------------------------------------------------------------
  //
  // A segments epoch whose middle part runs in atomic mode, which stagio leaves to PMPI. Reads
  // through the individual file pointer right before and after each switch check that the
  // pointer carries across. In atomic mode, ranks also read what another rank just wrote.

  void RunAtomicEpoch(int operations) {
    const int before = static_cast<int>(plan_.Uniform(0, operations / 3));
    const int after = static_cast<int>(plan_.Uniform(0, operations / 3));
    const int during = std::max(1, operations - before - after);
    for (int i = 0; i < before; i++) PlanAndRunOperation(EpochMode::kSegments);
    PlanAndRunPointerProbe(/*carry_on=*/false);
    ExecuteSetAtomicity(1);
    PlanAndRunPointerProbe(/*carry_on=*/true);
    for (int i = 0; i < during; i++) {
      if (plan_.Chance(0.2)) {
        PlanAndRunAtomicHandoff();
      } else {
        PlanAndRunOperation(EpochMode::kSegments);
      }
    }
    PlanAndRunPointerProbe(/*carry_on=*/false);
    ExecuteSetAtomicity(0);
    PlanAndRunPointerProbe(/*carry_on=*/true);
    for (int i = 0; i < after; i++) PlanAndRunOperation(EpochMode::kSegments);
  }

  void ExecuteSetAtomicity(int flag) {
    NextOp(Format("set_atomicity %d", flag));
    if (rehearsal_) return;
    CHECK_MPI(MPI_File_set_atomicity(file_, flag));
    int actual = -1;
    CHECK_MPI(MPI_File_get_atomicity(file_, &actual));
    log_.Write(DIFFLOG_SCALAR, kCodeAtomicity, seed_, op_, actual, "get_atomicity", nullptr, 0);
    if (actual != flag) Fail(Format("get_atomicity returned %d after set_atomicity(%d)", actual, flag));
  }

  // In atomic mode a write is visible to the other ranks as soon as it completes: a read that a
  // barrier orders after it must see it (MPI 4.0, 14.6.1 and its example with MPI_Barrier). So
  // one rank writes in its segment and another reads those bytes; a barrier keeps the writer's
  // later writes away from the read.
  void PlanAndRunAtomicHandoff() {
    const int writer = static_cast<int>(plan_.Uniform(0, nranks_ - 1));
    const int reader =
        (writer + static_cast<int>(plan_.Uniform(nranks_ > 1 ? 1 : 0, nranks_ - 1))) % nranks_;
    AccessKind write_kind;
    write_kind.write = true;
    write_kind.large_count = PlanLargeCount(plan_, 0.25);
    AccessKind read_kind;
    read_kind.large_count = PlanLargeCount(plan_, 0.25);
    NextOp(Format("atomic handoff: rank %d writes", writer));
    const RankAccess written = PlanRankAccess(writer, write_kind);
    if (!written.active) return;
    ApplyToModel(writer, write_kind, written, 0);
    if (rank_ == writer) ExecuteAccess(write_kind, written, /*free_early=*/false);
    SharedBarrier();
    NextOp(Format("atomic handoff: rank %d reads", reader));
    RankAccess read;
    read.active = true;
    read.offset = written.offset;
    read.count = written.units();  // MPI_BYTE
    if (rank_ == reader) ExecuteAccess(read_kind, read, /*free_early=*/false);
    SharedBarrier();
  }

  // A read through the individual file pointer and the position after it. `carry_on`: read on
  // from where the pointer is (if that is still the rank's own ground), else seek first.
  void PlanAndRunPointerProbe(bool carry_on) {
    AccessKind kind;
    kind.explicit_offset = false;
    kind.large_count = PlanLargeCount(plan_, 0.25);
    NextOp("pointer probe " + kind.Name());
    carry_on_ = carry_on;
    std::vector<RankAccess> ranks = PlanAccessForAllRanks(kind);
    carry_on_ = false;
    ExecuteAccess(kind, ranks[rank_], /*free_early=*/false);
    NextOp("get_position+get_byte_offset");
    ExecutePosition();
  }

  // ---- shared-file-pointer epochs ------------------------------------------------------------
  //
  // The epoch reserves a region [region_begin_, region_begin_ + region_length_) for accesses
  // through the shared file pointer, mixed with independent accesses to the same bytes; the
  // usual segments lie below the region. In the region a byte belongs for the epoch to the first
  // rank that touches it (region_owner_), and a rank reads only bytes below the size at the
  // start of the epoch or bytes it wrote itself.
  //
  // Ordered calls are deterministic: rank r accesses at the shared pointer plus the counts of
  // ranks 0..r-1, and every rank plans every rank's count. Shared calls of several ranks race
  // for the pointer, so one rank at a time makes a burst of them while the others wait at a
  // barrier. ROMIO's ordered calls do not synchronize once collective buffering is disabled: a
  // rank may leave one and fetch-and-add the pointer for the next before a later rank took its
  // part of the first, and seek_shared sets the pointer on rank 0 without waiting for anybody.
  // So a barrier comes before every call that uses or moves the shared pointer, and after the
  // calls that read it.

  void RunSharedEpoch(int operations) {
    const bool inside = size_ > 0 && plan_.Chance(0.5);
    region_begin_ = inside ? plan_.Uniform(0, size_)
                           : size_ + (plan_.Chance(0.5) ? 0 : plan_.Uniform(1, 5000));
    region_length_ = plan_.LogUniform(256, 256 << 10);
    region_owner_.assign(region_length_, -1);
    region_written_.assign(region_length_, 0);
    region_marks_.clear();
    // The segments end where the region starts.
    write_limit_ = region_begin_;
    access_cap_ = region_begin_;
    NextOp(Format("shared region [%" PRId64 ", %" PRId64 ")", region_begin_,
                  region_begin_ + region_length_));
    PlanAndRunSeekShared(/*allow_relative=*/false);
    for (int i = 0; i < operations; i++) {
      const int64_t roll = plan_.Uniform(0, 99);
      if (roll < 26) {
        PlanAndRunAccess();
      } else if (roll < 44) {
        PlanAndRunRegionAccess();
      } else if (roll < 72) {
        // Rank 0's part starts at the pointer: send it back over its own bytes.
        if (plan_.Chance(0.35)) PlanAndRunSeekShared(/*allow_relative=*/true, /*favored=*/0);
        PlanAndRunOrdered();
      } else if (roll < 79) {
        NextOp("get_position_shared");
        SharedBarrier();
        ExecuteGetPositionShared(file_, shared_pointer_);
        SharedBarrier();
      } else if (roll < 88) {
        PlanAndRunSharedBurst();
      } else if (roll < 94) {
        NextOp("get_position+get_byte_offset");
        ExecutePosition();
      } else {
        PlanAndRunSeekShared(/*allow_relative=*/true);
      }
    }
  }

  void SharedBarrier() {
    if (rehearsal_) return;
    SetWhat(g_context.what + " (barrier)");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  }

  // How many bytes from `offset` on `rank` may access in the region (at most 64 KiB).
  int64_t RegionRun(int rank, int64_t offset, bool write) const {
    int64_t run = 0;
    for (int64_t i = offset - region_begin_; i >= 0 && i < region_length_ && run < (64 << 10);
         i++, run++) {
      const int owner = region_owner_[i];
      if (owner >= 0 && owner != rank) break;
      if (!write && region_begin_ + i >= size_ && !(owner == rank && region_written_[i])) break;
    }
    return run;
  }

  // An access of `rank` starting at `offset` in the region, claimed for it; inactive if the
  // rank may not access the byte at `offset`.
  RankAccess PlanRegionAccess(int rank, int64_t offset, bool write) {
    RankAccess access;
    access.offset = offset;
    const int64_t run = RegionRun(rank, offset, write);
    if (run == 0) return access;
    const int64_t length = plan_.Chance(0.15) ? run : plan_.LogUniform(1, run);
    access.active = true;
    access.memtype = RandomMemType(plan_, Element::kByte, length);
    access.count = std::max<int64_t>(1, length / access.memtype.Units());
    for (int64_t i = offset - region_begin_; i < offset - region_begin_ + access.units(); i++) {
      region_owner_[i] = static_cast<int16_t>(rank);
      if (write) region_written_[i] = 1;
    }
    region_marks_.push_back({rank, offset});
    return access;
  }

  // Where an access of `rank` (any rank if -1) started in the region this epoch, if any did:
  // accesses and seeks go back there so that one rank's bytes pass through both stagio's cache
  // and PMPI. Draws nothing if there is no such place.
  std::optional<int64_t> PickMark(int rank) {
    std::vector<int64_t> offsets;
    for (const auto& [owner, offset] : region_marks_) {
      if (rank < 0 || owner == rank) offsets.push_back(offset);
    }
    if (offsets.empty()) return std::nullopt;
    return plan_.Pick(offsets);
  }

  void ApplySharedToModel(int rank, bool write, const RankAccess& access) {
    AccessKind as_explicit;
    as_explicit.write = write;
    as_explicit.explicit_offset = true;
    ApplyToModel(rank, as_explicit, access, 0, /*shared_pointer=*/true);
  }

  // Explicit-offset and individual-pointer accesses in the region: they share blocks, and
  // bytes, with the shared-pointer calls of the same rank.
  void PlanAndRunRegionAccess() {
    const AccessKind kind = PlanAccessKind(/*allow_collective=*/true);
    NextOp(kind.Name() + " (shared region)");
    std::vector<RankAccess> ranks(nranks_);
    for (int rank = 0; rank < nranks_; rank++) {
      if (!plan_.Chance(0.85)) continue;
      std::optional<int64_t> start;
      if (plan_.Chance(0.6)) start = PickMark(rank);
      if (!start) start = region_begin_ + plan_.Uniform(0, region_length_ - 1);
      RankAccess access = PlanRegionAccess(rank, *start, kind.write);
      if (access.active && !kind.explicit_offset) {
        const bool relative = plan_.Chance(0.4);
        access.move = relative ? PointerMove::kSeekCur : PointerMove::kSeekSet;
        access.seek_argument = relative ? access.offset - pointer_[rank] : access.offset;
      }
      ApplyToModel(rank, kind, access, 0);
      ranks[rank] = access;
    }
    ExecuteAccess(kind, ranks[rank_], /*free_early=*/false);
  }

  // The end of file that ROMIO's seek_shared(MPI_SEEK_END) must find, if every correct library
  // agrees on it; else -1. ROMIO's rank 0 takes the size from storage after the barrier before
  // the seek, when it holds every rank's shared-pointer writes and rank 0's own others; other
  // ranks' cached writes may or may not be there, so they must not reach past that size.
  int64_t SharedSeekEndOfFile() const {
    int64_t end = std::max({size_, shared_write_end_, independent_write_end_[0]});
    for (int rank = 1; rank < nranks_; rank++) {
      if (independent_write_end_[rank] > end) return -1;
    }
    return end;
  }

  // Collective; every rank to the same place in the region, often where `favored` (any rank if
  // -1) accessed before.
  void PlanAndRunSeekShared(bool allow_relative, int favored = -1) {
    std::optional<int64_t> mark;
    if (plan_.Chance(0.6)) mark = PickMark(favored);
    const int64_t target = mark ? *mark : region_begin_ + plan_.Uniform(0, region_length_ - 1);
    const int64_t roll = plan_.Uniform(0, 99);
    const int64_t end_of_file = SharedSeekEndOfFile();
    int whence = MPI_SEEK_SET;
    int64_t argument = target;
    if (allow_relative && roll < 30) {
      whence = MPI_SEEK_CUR;
      argument = target - shared_pointer_;
    } else if (roll >= 70 && end_of_file >= 0 && g_seek_shared_end) {
      whence = MPI_SEEK_END;
      argument = target - end_of_file;
    }
    NextOp(Format("seek_shared(%" PRId64 ", %s)", argument,
                  whence == MPI_SEEK_CUR ? "cur" : whence == MPI_SEEK_END ? "end" : "set"));
    SharedBarrier();
    if (!rehearsal_) CHECK_MPI(MPI_File_seek_shared(file_, argument, whence));
    shared_pointer_ = target;
  }

  void PlanAndRunOrdered() {
    SharedKind kind;
    kind.ordered = true;
    kind.write = plan_.Chance(0.5);
    kind.large_count = PlanLargeCount(plan_, 0.25);
    kind.how = plan_.Chance(0.3) ? SharedKind::How::kSplit : SharedKind::How::kBlocking;
    NextOp(kind.Name());
    std::vector<RankAccess> ranks(nranks_);
    for (int rank = 0; rank < nranks_; rank++) {
      ranks[rank].offset = shared_pointer_;
      if (plan_.Chance(0.8)) ranks[rank] = PlanRegionAccess(rank, shared_pointer_, kind.write);
      ApplySharedToModel(rank, kind.write, ranks[rank]);
      if (ranks[rank].active) shared_pointer_ += ranks[rank].units();
    }
    SharedBarrier();
    ExecuteShared(file_, kind, ranks[rank_]);
  }

  // One rank's independent shared-pointer calls while the others wait.
  void PlanAndRunSharedBurst() {
    const int burster = static_cast<int>(plan_.Uniform(0, nranks_ - 1));
    const int calls = static_cast<int>(plan_.Uniform(1, 4));
    if (plan_.Chance(0.5)) PlanAndRunSeekShared(/*allow_relative=*/true, burster);
    NextOp(Format("shared burst of rank %d", burster));
    SharedBarrier();
    for (int i = 0; i < calls; i++) {
      SharedKind kind;
      kind.ordered = false;
      kind.write = plan_.Chance(0.5);
      kind.large_count = PlanLargeCount(plan_, 0.25);
      kind.how = plan_.Chance(0.35) ? SharedKind::How::kWait : SharedKind::How::kBlocking;
      NextOp(kind.Name());
      RankAccess access;
      access.offset = shared_pointer_;
      if (plan_.Chance(0.9)) access = PlanRegionAccess(burster, shared_pointer_, kind.write);
      ApplySharedToModel(burster, kind.write, access);
      if (access.active) shared_pointer_ += access.units();
      if (rank_ == burster) {
        ExecuteShared(file_, kind, access);
        if (kind.write && kind.how == SharedKind::How::kWait) WorkAroundStaleSize();
      }
      if (plan_.Chance(0.3)) {
        NextOp("get_position_shared");
        if (rank_ == burster) ExecuteGetPositionShared(file_, shared_pointer_);
      }
    }
    NextOp("end of shared burst");
    SharedBarrier();
  }

  void ExecuteShared(MPI_File file, const SharedKind& kind, const RankAccess& access) {
    if (rehearsal_) return;
    PreparedAccess prepared(kind.write, kind.Name(), access, Element::kByte, DataRng(rank_));
    MPI_Request request = MPI_REQUEST_NULL;
    CHECK_MPI(StartShared(kind, file, prepared.buffer.origin(), prepared.count,
                          prepared.type->get(), &prepared.status, &request));
    if (kind.how == SharedKind::How::kWait) {
      WaitOrTest(Completion::kWait, &request, &prepared.status);
    } else if (kind.how == SharedKind::How::kSplit) {
      CHECK_MPI(EndOrderedSplit(kind, file, prepared.buffer.origin(), &prepared.status));
    }
    LogTransfer(kind.Code(), kind.write, kind.large_count, prepared);
    if (!kind.write) CheckReadAgainstModel(access, prepared);
  }

  void ExecuteGetPositionShared(MPI_File file, int64_t expected) {
    if (rehearsal_) return;
    MPI_Offset position = -1;
    CHECK_MPI(MPI_File_get_position_shared(file, &position));
    log_.Write(DIFFLOG_SCALAR, kCodePositionShared, seed_, op_, position, "get_position_shared",
               nullptr, 0);
    if (position != expected) {
      Fail(Format("shared file pointer at %lld, expected %" PRId64,
                  static_cast<long long>(position), expected));
    }
  }

  // ---- a sequential-mode file ----------------------------------------------------------------
  //
  // stagio leaves files opened with MPI_MODE_SEQUENTIAL to PMPI. Some ranks append records
  // through the shared file pointer; then the file is reopened normally (through stagio) and
  // read back. ROMIO refuses MPI_MODE_SEQUENTIAL with MPI_MODE_RDWR, so the file is opened
  // write-only; the refused open is tried first, and its error class logged.

  void MaybeRunSequentialFile() {
    if (!plan_.Chance(0.3)) return;
    const std::string path = Format("%s/seed_%u.seq", options_.dir.c_str(), seed_);
    MPI_File file = MPI_FILE_NULL;
    NextOp("open(sequential|rdwr)");
    const int rc = MPI_File_open(MPI_COMM_WORLD, path.c_str(),
                                 MPI_MODE_SEQUENTIAL | MPI_MODE_CREATE | MPI_MODE_RDWR,
                                 MPI_INFO_NULL, &file);
    int error_class = MPI_SUCCESS;
    if (rc == MPI_SUCCESS) {
      CHECK_MPI(MPI_File_close(&file));
    } else {
      CHECK_MPI(MPI_Error_class(rc, &error_class));
    }
    log_.Write(DIFFLOG_SCALAR, kCodeErrorClass, seed_, op_, error_class,
               "open(sequential|rdwr) error class", nullptr, 0);

    NextOp("open(sequential)");
    MPI_Info info = MakeInfo();
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path.c_str(),
                            MPI_MODE_SEQUENTIAL | MPI_MODE_CREATE | MPI_MODE_WRONLY, info, &file));
    CHECK_MPI(MPI_Info_free(&info));
    FileModel model;
    int64_t pointer = 0;
    // A record of `rank` at `pointer`, applied to the model.
    auto plan_record = [&](int rank, double chance) {
      RankAccess access;
      access.offset = pointer;
      if (!plan_.Chance(chance)) return access;
      const int64_t length = plan_.LogUniform(1, 20000);
      access.active = true;
      access.memtype = RandomMemType(plan_, Element::kByte, length);
      access.count = std::max<int64_t>(1, length / access.memtype.Units());
      model.Write({{pointer, access.units()}}, PlannedWriteData(rank, access, 0).data(), op_,
                  rank);
      pointer += access.units();
      return access;
    };
    const int steps = static_cast<int>(plan_.Uniform(1, 6));
    for (int step = 0; step < steps; step++) {
      const int64_t roll = plan_.Uniform(0, 99);
      if (roll < 65) {
        SharedKind kind;
        kind.write = true;
        kind.ordered = true;
        kind.large_count = PlanLargeCount(plan_, 0.25);
        kind.how = plan_.Chance(0.3) ? SharedKind::How::kSplit : SharedKind::How::kBlocking;
        NextOp(kind.Name() + " (sequential file)");
        std::vector<RankAccess> ranks(nranks_);
        for (int rank = 0; rank < nranks_; rank++) ranks[rank] = plan_record(rank, 0.8);
        SharedBarrier();
        ExecuteShared(file, kind, ranks[rank_]);
      } else if (roll < 85) {
        const int burster = static_cast<int>(plan_.Uniform(0, nranks_ - 1));
        const int calls = static_cast<int>(plan_.Uniform(1, 3));
        NextOp(Format("shared burst of rank %d (sequential file)", burster));
        SharedBarrier();
        for (int i = 0; i < calls; i++) {
          SharedKind kind;
          kind.write = true;
          kind.ordered = false;
          kind.large_count = PlanLargeCount(plan_, 0.25);
          kind.how = plan_.Chance(0.35) ? SharedKind::How::kWait : SharedKind::How::kBlocking;
          NextOp(kind.Name() + " (sequential file)");
          const RankAccess access = plan_record(burster, 0.95);
          if (rank_ == burster) ExecuteShared(file, kind, access);
        }
        SharedBarrier();
      } else {
        // ROMIO refuses get_position_shared in sequential mode (MPI_ERR_UNSUPPORTED_OPERATION);
        // whatever it answers must come through unchanged.
        NextOp("get_position_shared (sequential file)");
        SharedBarrier();
        MPI_Offset position = -1;
        const int result = MPI_File_get_position_shared(file, &position);
        int error_class = MPI_SUCCESS;
        if (result != MPI_SUCCESS) CHECK_MPI(MPI_Error_class(result, &error_class));
        log_.Write(DIFFLOG_SCALAR, kCodeErrorClass, seed_, op_, error_class,
                   "get_position_shared error class (sequential file)", nullptr, 0);
        if (result == MPI_SUCCESS && position != pointer) {
          Fail(Format("shared file pointer at %lld, expected %" PRId64,
                      static_cast<long long>(position), pointer));
        }
        SharedBarrier();
      }
    }
    NextOp("close(sequential)");
    CHECK_MPI(MPI_File_close(&file));

    NextOp("reopen sequential file");
    info = MakeInfo();
    CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path.c_str(), MPI_MODE_RDWR, info, &file));
    CHECK_MPI(MPI_Info_free(&info));
    MPI_Offset size = -1;
    CHECK_MPI(MPI_File_get_size(file, &size));
    log_.Write(DIFFLOG_SCALAR, kCodeSequentialSize, seed_, op_, size, "get_size (sequential file)",
               nullptr, 0);
    if (size != model.size()) {
      Fail(Format("sequential file has %lld bytes, the model expects %" PRId64,
                  static_cast<long long>(size), model.size()));
    }
    // Every rank reads the whole file back in pieces, the last one across the end of file.
    for (int rank = 0; rank < nranks_; rank++) {
      int64_t offset = 0;
      do {
        NextOp("read_at (sequential file)");
        int64_t length = plan_.LogUniform(1, std::max<int64_t>(1, model.size()));
        if (offset + length >= model.size()) length = model.size() - offset + plan_.Uniform(0, 100);
        if (rank == rank_ && length > 0) {
          std::vector<uint8_t> buffer(length, 0x5A);
          MPI_Status status;
          CHECK_MPI(MPI_File_read_at(file, offset, buffer.data(), static_cast<int>(length),
                                     MPI_BYTE, &status));
          const int64_t bytes = TransferredBytes(status, false);
          const int64_t expected = std::clamp<int64_t>(model.size() - offset, 0, length);
          log_.Write(DIFFLOG_READ, kCodeSequentialRead, seed_, op_, bytes,
                     Format("read_at (sequential file) offset=%" PRId64 " length=%" PRId64,
                            offset, length),
                     buffer.data(), static_cast<uint64_t>(std::clamp<int64_t>(bytes, 0, length)));
          if (bytes != expected) {
            Fail(Format("read_at returned %" PRId64 " bytes, expected %" PRId64, bytes,
                        expected));
          }
          const std::string difference = model.Compare({{offset, bytes}}, buffer.data());
          if (!difference.empty()) Fail("sequential file read back: " + difference);
        }
        offset += length;
      } while (offset < model.size());
    }
    NextOp("close sequential file");
    CHECK_MPI(MPI_File_close(&file));
    SetWhat("barrier after close");
    CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
    PauseBeforeDelete();
    if (rank_ == 0) {
      SetWhat("delete sequential file");
      CHECK_MPI(MPI_File_delete(path.c_str(), MPI_INFO_NULL));
    }
  }

  // ---- execution ---------------------------------------------------------------------------

  // Write data: a stream per (seed, rank, operation, access within the operation).
  Rng DataRng(int rank, int access = 0) const {
    return Rng(MixSeed(seed_, 1000 + rank, uint64_t{op_} * 4 + access));
  }

  void ExecuteAccess(const AccessKind& kind, const RankAccess& access, bool free_early) {
    if (!access.active && !kind.collective) return;
    if (rehearsal_) return RehearseAccess(kind, access);
    PreparedAccess prepared(kind, access, element_, DataRng(rank_));
    MoveFilePointer(kind, access);
    MPI_Request request = MPI_REQUEST_NULL;
    CHECK_MPI(StartAccess(kind, file_, access.offset, prepared.buffer.origin(), prepared.count,
                          prepared.type->get(), &prepared.status, &request));
    if (free_early) prepared.type->Free();
    if (kind.nonblocking()) WaitOrTest(kind.completion, &request, &prepared.status);
    if (kind.completion == Completion::kSplit) {
      CHECK_MPI(EndSplit(kind, file_, prepared.buffer.origin(), &prepared.status));
    }
    LogAccess(kind, prepared);
    if (!kind.write) CheckReadAgainstModel(access, prepared);
  }

  void ExecutePair(const AccessKind& first, const RankAccess& first_access,
                   const AccessKind& second, const RankAccess& second_access, int how) {
    std::vector<std::unique_ptr<PreparedAccess>> prepared;
    std::vector<const AccessKind*> kinds;
    std::vector<const RankAccess*> accesses;
    std::vector<MPI_Request> requests;
    int index = 0;
    for (const auto& [kind, access] : {std::make_pair(&first, &first_access),
                                       std::make_pair(&second, &second_access)}) {
      ++index;
      if (!access->active) continue;
      if (rehearsal_) {
        RehearseAccess(*kind, *access);
        continue;
      }
      prepared.push_back(
          std::make_unique<PreparedAccess>(*kind, *access, element_, DataRng(rank_, index)));
      kinds.push_back(kind);
      accesses.push_back(access);
      requests.push_back(MPI_REQUEST_NULL);
      CHECK_MPI(StartAccess(*kind, file_, access->offset, prepared.back()->buffer.origin(),
                            prepared.back()->count, prepared.back()->type->get(),
                            &prepared.back()->status, &requests.back()));
    }
    if (requests.empty()) return;  // and always in a rehearsal
    std::vector<MPI_Status> statuses(requests.size());
    const int n = static_cast<int>(requests.size());
    if (how == 0) {
      CHECK_MPI(MPI_Waitall(n, requests.data(), statuses.data()));
    } else if (how == 1) {
      // Not MPI_Testall: MPICH 4.0.2 trips an assertion (request ref_count) in it on ROMIO's
      // generalized requests.
      for (int i = 0; i < n; i++) WaitOrTest(Completion::kTestLoop, &requests[i], &statuses[i]);
    } else {
      for (int completed = 0; completed < n; completed++) {
        int index = MPI_UNDEFINED;
        MPI_Status status;
        CHECK_MPI(MPI_Waitany(n, requests.data(), &index, &status));
        statuses[index] = status;
      }
    }
    for (size_t i = 0; i < prepared.size(); i++) {
      prepared[i]->status = statuses[i];
      LogAccess(*kinds[i], *prepared[i]);
      if (!kinds[i]->write) CheckReadAgainstModel(*accesses[i], *prepared[i]);
    }
  }

  // A datatype and a buffer ready for one access.
  struct PreparedAccess {
    PreparedAccess(const AccessKind& kind, const RankAccess& access, Element element, Rng data)
        : PreparedAccess(kind.write, kind.Name(), access, element, data) {}
    PreparedAccess(bool write, const std::string& name, const RankAccess& access,
                   Element element, Rng data)
        : type(access.active ? BuildMemType(access.memtype)
                             : std::make_unique<OwnedType>(ElementType(element), false)),
          count(access.active ? access.count : 0),
          buffer(type->get(), count) {
      if (write) {
        buffer.FillRandom(data);
      } else {
        buffer.FillSentinel();
      }
      description = Format("%s offset=%" PRId64 " count=%" PRId64 " type=%s",
                           name.c_str(), access.offset, count,
                           access.active ? access.memtype.Describe().c_str() : "none");
      if (access.move == PointerMove::kSeekSet) {
        description += Format(" seek_set(%" PRId64 ")", access.seek_argument);
      } else if (access.move == PointerMove::kSeekCur) {
        description += Format(" seek_cur(%" PRId64 ")", access.seek_argument);
      }
    }
    std::unique_ptr<OwnedType> type;
    int64_t count;
    TypedBuffer buffer;
    MPI_Status status{};
    std::string description;
  };

  // The seek an access makes first, if any: its whence.
  static std::optional<int> SeekBefore(const AccessKind& kind, const RankAccess& access) {
    if (kind.explicit_offset || !access.active || access.move == PointerMove::kNone) {
      return std::nullopt;
    }
    return access.move == PointerMove::kSeekSet ? MPI_SEEK_SET : MPI_SEEK_CUR;
  }

  void MoveFilePointer(const AccessKind& kind, const RankAccess& access) {
    if (const std::optional<int> whence = SeekBefore(kind, access)) {
      CHECK_MPI(MPI_File_seek(file_, access.seek_argument, *whence));
    }
  }

  // The prefetch counterparts of ExecuteAccess: the seek, then the access with the same
  // offset, count and memory type (count 0 for a rank with no part in a collective call).
  void RehearseAccess(const AccessKind& kind, const RankAccess& access) {
    if (const std::optional<int> whence = SeekBefore(kind, access)) {
      rehearsal_->Add(diff_preexec::Step::Seek(access.seek_argument, *whence));
    }
    std::shared_ptr<OwnedType> type =
        access.active ? BuildMemType(access.memtype)
                      : std::make_unique<OwnedType>(ElementType(element_), false);
    const MPI_Datatype handle = type->get();
    rehearsal_->Add(diff_preexec::Step::Access(kind.write, kind.explicit_offset, kind.collective,
                                               access.offset, access.active ? access.count : 0,
                                               handle, std::move(type)));
  }

  void LogAccess(const AccessKind& kind, const PreparedAccess& prepared) {
    LogTransfer(kind.Code(), kind.write, kind.large_count, prepared);
  }

  void LogTransfer(uint16_t code, bool write, bool large_count, const PreparedAccess& prepared) {
    const int64_t bytes = TransferredBytes(prepared.status, large_count);
    std::string detail = prepared.description;
    if (prepared.type->alive()) {
      // The count in the access's own datatype, as an application would query it.
      const int64_t typed = StatusCount(prepared.status, prepared.type->get());
      detail += Format(" typed_count=%lld", static_cast<long long>(typed));
    }
    if (write) {
      const std::vector<uint8_t>& buffer = prepared.buffer.bytes();
      const uint64_t hash = difflog_hash(buffer.data(), buffer.size());
      log_.Write(DIFFLOG_WRITE, code, seed_, op_, bytes, detail, &hash, sizeof hash);
    } else {
      log_.Write(DIFFLOG_READ, code, seed_, op_, bytes, detail, prepared.buffer.bytes().data(),
                 prepared.buffer.bytes().size());
    }
  }

  void CheckReadAgainstModel(const RankAccess& access, const PreparedAccess& prepared) {
    if (!access.active) return;
    std::unique_ptr<OwnedType> rebuilt;  // when the operation's own type was freed early
    MPI_Datatype type = prepared.type->get();
    if (!prepared.type->alive()) {
      rebuilt = BuildMemType(access.memtype);
      type = rebuilt->get();
    }
    std::vector<uint8_t> packed =
        PackedData(type, prepared.count, const_cast<TypedBuffer&>(prepared.buffer).origin());
    // Planned reads never reach past the end of file, so all of it must come back.
    const int64_t bytes = StatusCount(prepared.status, MPI_BYTE);
    if (bytes != static_cast<int64_t>(packed.size())) {
      Fail(Format("read returned %lld bytes, expected %zu [%s]", static_cast<long long>(bytes),
                  packed.size(), prepared.description.c_str()));
    }
    if (external32_) SwapInts(&packed);
    std::vector<Block> extents;
    space_->MapToFile(rank_, {access.offset, access.units()}, &extents);
    const std::string difference = model_.Compare(extents, packed.data());
    if (!difference.empty()) {
      Fail("read returned wrong data: " + difference + " [" + prepared.description + "]");
    }
  }

  void ExecuteEofRead(int64_t offset, int64_t length, bool large_count) {
    if (rehearsal_) {
      rehearsal_->Add(diff_preexec::Step::Access(/*write=*/false, /*explicit_offset=*/true,
                                                 /*collective=*/false, offset, length, MPI_BYTE,
                                                 nullptr));
      return;
    }
    std::vector<uint8_t> buffer(length);
    for (size_t i = 0; i < buffer.size(); i++) buffer[i] = static_cast<uint8_t>(0x5A ^ (i * 13));
    MPI_Status status;
#if MPI_VERSION >= 4
    if (large_count) {
      CHECK_MPI(MPI_File_read_at_c(file_, offset, buffer.data(), length, MPI_BYTE, &status));
    } else
#endif
    {
      CHECK_MPI(MPI_File_read_at(file_, offset, buffer.data(), static_cast<int>(length), MPI_BYTE,
                                 &status));
    }
    const int64_t bytes = TransferredBytes(status, large_count);
    const int64_t expected = std::clamp<int64_t>(size_ - offset, 0, length);
    // MPI leaves the buffer past the returned count undefined; only the count and the bytes
    // read are compared.
    log_.Write(DIFFLOG_READ, large_count ? kCodeEofReadC : kCodeEofRead, seed_, op_, bytes,
               Format("eof read_at offset=%" PRId64 " length=%" PRId64 " size=%" PRId64, offset,
                      length, size_),
               buffer.data(), static_cast<uint64_t>(std::clamp<int64_t>(bytes, 0, length)));
    if (bytes != expected) {
      Fail(Format("read_at past end of file at %" PRId64 " length %" PRId64 " returned %" PRId64
                  " bytes, expected %" PRId64 " (file size %" PRId64 ")",
                  offset, length, bytes, expected, size_));
    }
    const std::string difference = model_.Compare({{offset, bytes}}, buffer.data());
    if (!difference.empty()) Fail("read_at across the end of file: " + difference);
  }

  void ExecutePosition() {
    if (rehearsal_) return;
    MPI_Offset position = 0, byte_offset = 0;
    CHECK_MPI(MPI_File_get_position(file_, &position));
    CHECK_MPI(MPI_File_get_byte_offset(file_, position, &byte_offset));
    log_.Write(DIFFLOG_SCALAR, kCodePosition, seed_, op_, position, "get_position", nullptr, 0);
    log_.Write(DIFFLOG_SCALAR, kCodeByteOffset, seed_, op_, byte_offset, "get_byte_offset",
               nullptr, 0);
    if (position != pointer_[rank_]) {
      Fail(Format("file pointer at %lld, expected %" PRId64, static_cast<long long>(position),
                  pointer_[rank_]));
    }
  }

  void ExecuteGetSize() {
    if (rehearsal_) return;
    MPI_Offset size = 0;
    CHECK_MPI(MPI_File_get_size(file_, &size));
    log_.Write(DIFFLOG_SCALAR, kCodeGetSize, seed_, op_, size, "get_size", nullptr, 0);
    if (size != size_) {
      Fail(Format("get_size returned %lld, expected %" PRId64, static_cast<long long>(size),
                  size_));
    }
  }

  void ExecuteTypeExtent(const MemTypeSpec& memtype, bool large_count) {
    if (rehearsal_) return;
    std::unique_ptr<OwnedType> type = BuildMemType(memtype);
    int64_t extent = 0;
#if MPI_VERSION >= 4
    if (large_count) {
      MPI_Count value = 0;
      CHECK_MPI(MPI_File_get_type_extent_c(file_, type->get(), &value));
      extent = value;
    } else
#endif
    {
      MPI_Aint value = 0;
      CHECK_MPI(MPI_File_get_type_extent(file_, type->get(), &value));
      extent = value;
    }
    log_.Write(DIFFLOG_SCALAR, large_count ? kCodeTypeExtentC : kCodeTypeExtent, seed_, op_,
               extent, "get_type_extent " + memtype.Describe(), nullptr, 0);
  }

  // ---- bookkeeping -------------------------------------------------------------------------

  void NextOp(const std::string& what) {
    ++op_;
    g_context.op = op_;
    g_context.what = what;
    if (g_trace && !rehearsal_) {
      fprintf(stderr, "[%.6f rank %d seed %u op %u] %s\n", MPI_Wtime(), rank_, seed_, op_,
              what.c_str());
    }
  }
  void SetWhat(const std::string& what) { g_context.what = what; }

  const uint32_t seed_;
  const Options& options_;
  Log& log_;
  const int rank_, nranks_;
  Rng plan_;  // shared: seeded from the seed alone, drawn from identically on every rank
  std::string path_;
  MPI_File file_ = MPI_FILE_NULL;
  uint32_t op_ = 0;
  int epochs_ = 0;
  std::string block_hint_, cache_hint_;

  // The model every rank keeps of every rank.
  FileModel model_;                 // the file's contents, all writes planned so far applied
  int64_t size_ = 0;                // file size as of the last epoch boundary
  std::vector<int64_t> pointer_;    // individual file pointers, in units of the current view
  std::vector<int64_t> write_end_;  // one past each rank's last written byte this epoch

  bool cache_disabled_ = false;     // stagio_cache=disable is in force (through set_info)

  // The current epoch.
  bool extending_ = false;
  int64_t write_limit_ = 0;
  int64_t access_cap_ = INT64_MAX;  // no access planned through PlanRankAccess ends past this
  bool carry_on_ = false;           // PlanRankAccess: read on at the individual pointer if it can
  bool external32_ = false;         // the view's data representation is external32
  // Shared-pointer epochs (see RunSharedEpoch).
  int64_t region_begin_ = 0, region_length_ = 0;
  std::vector<int16_t> region_owner_;   // the rank that touched the byte this epoch, or -1
  std::vector<uint8_t> region_written_;  // ... and whether it wrote it
  std::vector<std::pair<int, int64_t>> region_marks_;  // (rank, offset) of region accesses
  int64_t shared_pointer_ = 0;           // in bytes (the view is the default one)
  // One past the last byte written this epoch by shared-pointer calls (any rank) and by other
  // calls (per rank): write_end_ split by path, for SharedSeekEndOfFile.
  int64_t shared_write_end_ = 0;
  std::vector<int64_t> independent_write_end_;
  std::unique_ptr<AccessSpace> space_;
  SegmentSpace* segments_ = nullptr;  // space_, in segment epochs
  Element element_ = Element::kByte;

  // Pre-execution (DIFF_PREEXEC). A rehearsal records into rehearsal_ (the real run's
  // script_) and makes no MPI-IO call; the real run plays script_ through preexec_.
  diff_preexec::Script* rehearsal_ = nullptr;
  diff_preexec::Script script_;
  diff_preexec::Runner preexec_;
};

// ---------------------------------------------------------------------------------------------
// --explain

struct Record {
  difflog_header header{};
  std::string detail;
  std::vector<uint8_t> payload;
};

enum class ReadResult { kRecord, kEnd, kTruncated };

ReadResult ReadRecord(FILE* file, Record* record) {
  const size_t got = fread(&record->header, 1, sizeof record->header, file);
  if (got == 0 && feof(file)) return ReadResult::kEnd;
  if (got != sizeof record->header || record->header.magic != DIFFLOG_MAGIC) {
    return ReadResult::kTruncated;
  }
  record->detail.resize(record->header.detail_len);
  record->payload.resize(record->header.payload_len);
  if (fread(&record->detail[0], 1, record->detail.size(), file) != record->detail.size() ||
      fread(record->payload.data(), 1, record->payload.size(), file) != record->payload.size()) {
    return ReadResult::kTruncated;
  }
  return ReadResult::kRecord;
}

std::string HexAround(const std::vector<uint8_t>& bytes, size_t position) {
  std::string text;
  const size_t from = position >= 8 ? position - 8 : 0;
  const size_t to = std::min(bytes.size(), position + 9);
  for (size_t i = from; i < to; i++) text += Format(i == position ? "[%02x]" : " %02x ", bytes[i]);
  return text;
}

void PrintRecord(const char* label, const Record& record) {
  printf("  %s: %s kind=%u value=%" PRId64 " payload=%" PRIu64 " bytes  \"%s\"\n", label,
         difflog_type_name(record.header.type), record.header.kind, record.header.value,
         record.header.payload_len, record.detail.c_str());
}

void DescribePayloadDifference(const Record& a, const Record& b) {
  const std::vector<uint8_t>& x = a.payload;
  const std::vector<uint8_t>& y = b.payload;
  const size_t common = std::min(x.size(), y.size());
  size_t first = common, differing = 0;
  for (size_t i = 0; i < common; i++) {
    if (x[i] != y[i]) {
      if (first == common) first = i;
      differing++;
    }
  }
  if (first == common) {
    printf("  payloads agree on their first %zu bytes; lengths %zu and %zu\n", common, x.size(),
           y.size());
    return;
  }
  const char* unit = "payload byte";
  std::string where;
  if (a.header.type == DIFFLOG_FINAL_FILE) unit = "file offset";
  if (a.header.type == DIFFLOG_READ && a.header.kind >= 100) {
    where = Format(" (buffer byte %" PRId64 " from the buffer origin, %d guard bytes first)",
                   static_cast<int64_t>(first) - TypedBuffer::kGuard,
                   static_cast<int>(TypedBuffer::kGuard));
  }
  printf("  first difference at %s %zu%s; %zu of %zu bytes differ\n", unit, first, where.c_str(),
         differing, common);
  printf("  A: %s\n  B: %s\n", HexAround(x, first).c_str(), HexAround(y, first).c_str());
}

int Explain(const char* path_a, const char* path_b) {
  FILE* a = fopen(path_a, "rb");
  FILE* b = fopen(path_b, "rb");
  if (!a || !b) {
    fprintf(stderr, "diff_driver --explain: cannot open %s\n", a ? path_b : path_a);
    return 2;
  }
  Record ra, rb;
  for (uint64_t index = 0;; index++) {
    const ReadResult got_a = ReadRecord(a, &ra), got_b = ReadRecord(b, &rb);
    if (got_a == ReadResult::kEnd && got_b == ReadResult::kEnd) {
      printf("logs are identical (%" PRIu64 " records)\n", index);
      return 0;
    }
    if (got_a != ReadResult::kRecord || got_b != ReadResult::kRecord) {
      const bool a_short = got_a != ReadResult::kRecord;
      const ReadResult short_result = a_short ? got_a : got_b;
      printf("log %s %s after %" PRIu64 " records (a run that died?)\n", a_short ? "A" : "B",
             short_result == ReadResult::kEnd ? "ends" : "is truncated", index);
      if ((a_short ? got_b : got_a) == ReadResult::kRecord) {
        const Record& more = a_short ? rb : ra;
        printf("  the other continues with seed %u op %u:\n", more.header.seed, more.header.op);
        PrintRecord(a_short ? "B" : "A", more);
      }
      return 1;
    }
    const bool same = memcmp(&ra.header, &rb.header, sizeof ra.header) == 0 &&
                      ra.detail == rb.detail && ra.payload == rb.payload;
    if (same) continue;
    printf("first difference in record %" PRIu64 ": seed %u op %u\n", index, ra.header.seed,
           ra.header.op);
    PrintRecord("A", ra);
    PrintRecord("B", rb);
    if (ra.header.seed != rb.header.seed || ra.header.op != rb.header.op) {
      printf("  (B is at seed %u op %u: the runs took different paths)\n", rb.header.seed,
             rb.header.op);
    }
    if (ra.header.value != rb.header.value) {
      printf("  value differs: A=%" PRId64 " B=%" PRId64 "\n", ra.header.value, rb.header.value);
    }
    if (ra.detail != rb.detail) printf("  detail differs\n");
    if (ra.payload != rb.payload) DescribePayloadDifference(ra, rb);
    return 1;
  }
}

// ---------------------------------------------------------------------------------------------
// main

// DIFF_PREEXEC: every helper's slice must have run (or the mode tested nothing), and how much
// of the rehearsed steps the slices got to play before they were joined.
void ReportPreexec(int rank) {
  const diff_preexec::Totals& mine = g_preexec_totals;
  uint64_t totals[4] = {mine.runs, mine.ran, mine.recorded, mine.played};
  CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, totals, 4, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD));
  if (rank == 0) {
    fprintf(stderr,
            "diff_driver: pre-execution: %" PRIu64 " of %" PRIu64 " slices ran, %" PRIu64
            " of %" PRIu64 " prefetch calls played\n",
            totals[1], totals[0], totals[3], totals[2]);
  }
  if (totals[1] != totals[0] || totals[0] == 0) {
    Fail("DIFF_PREEXEC=1: a pre-execution helper did not run its slice (stagio_preexec=off, or "
         "MPI without MPI_THREAD_MULTIPLE?)");
  }
}

[[noreturn]] void Usage() {
  fprintf(stderr,
          "usage: diff_driver --seeds A:B --dir DIR --log PREFIX [--ops N]\n"
          "       diff_driver --explain LOG_A LOG_B\n");
  exit(64);
}

Options ParseOptions(int argc, char** argv) {
  Options options;
  bool have_seeds = false;
  for (int i = 1; i < argc; i++) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage();
    const char* value = argv[++i];
    if (flag == "--seeds") {
      unsigned first = 0, last = 0;
      if (sscanf(value, "%u:%u", &first, &last) != 2 || last < first) Usage();
      options.first_seed = first;
      options.last_seed = last;
      have_seeds = true;
    } else if (flag == "--dir") {
      options.dir = value;
    } else if (flag == "--log") {
      options.log = value;
    } else if (flag == "--ops") {
      options.ops = atoi(value);
      if (options.ops < 1) Usage();
    } else {
      Usage();
    }
  }
  if (!have_seeds || options.dir.empty() || options.log.empty()) Usage();
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && strcmp(argv[1], "--explain") == 0) return Explain(argv[2], argv[3]);
  const Options options = ParseOptions(argc, argv);
  MPI_Init(&argc, &argv);
  int rank = 0, nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  g_context.rank = rank;
  const char* trace = getenv("DIFF_DRIVER_TRACE");
  g_trace = trace && *trace && strcmp(trace, "0") != 0;
  const char* seek_shared_end = getenv("DIFF_DRIVER_SEEK_SHARED_END");
  g_seek_shared_end = !(seek_shared_end && strcmp(seek_shared_end, "0") == 0);
  const char* workaround = getenv("DIFF_DRIVER_GET_SIZE_WORKAROUND");
  g_get_size_workaround = workaround && *workaround && strcmp(workaround, "0") != 0;
  const char* focus = getenv("DIFF_DRIVER_FOCUS");
  g_focus_collective = focus && strcmp(focus, "collective") == 0;
  if (focus && *focus && !g_focus_collective) Fail(Format("unknown DIFF_DRIVER_FOCUS=%s", focus));
  if (const char* pause = getenv("DIFF_DRIVER_PAUSE_MS"); pause && *pause) {
    char* end = nullptr;
    const long ms = strtol(pause, &end, 10);
    if (*end != '\0' || ms < 0 || ms > 60000) {
      Fail(Format("DIFF_DRIVER_PAUSE_MS must be 0 to 60000, got '%s'", pause));
    }
    g_pause_ms = static_cast<int>(ms);
  }
  report_interposition("diff_driver");
  const char* preexec = getenv("DIFF_PREEXEC");
  std::unique_ptr<diff_preexec::Api> preexec_api;
  if (preexec && *preexec && strcmp(preexec, "0") != 0) {
    preexec_api = diff_preexec::Api::Find();
    if (!preexec_api) Fail("DIFF_PREEXEC=1 needs libstagio's pre-execution API (not loaded)");
    g_preexec = preexec_api.get();
  }
  const double start = MPI_Wtime();
  {
    Log log(Format("%s.%d", options.log.c_str(), rank));
    for (uint64_t seed = options.first_seed; seed <= options.last_seed; seed++) {
      SeedRun(static_cast<uint32_t>(seed), options, log, rank, nranks).Run();
    }
  }
  const double seconds = MPI_Wtime() - start;
  const uint64_t seeds = uint64_t{options.last_seed} - options.first_seed + 1;
  if (g_preexec) ReportPreexec(rank);
  if (rank == 0) {
    fprintf(stderr, "diff_driver: seeds %u:%u on %d ranks: %.2f s (%.1f ms/seed)\n",
            options.first_seed, options.last_seed, nranks, seconds, 1000 * seconds / seeds);
  }
  MPI_Finalize();
  return 0;
}
