// Datatype flattening: walks a datatype's constructor tree (MPI_Type_get_envelope/_contents)
// and lists the byte extents of its typemap in typemap order.
//
// Every MPI call here goes through its PMPI_ name: stagio may be the library that wraps MPI_*,
// and its own bookkeeping must not be seen (or counted, or intercepted) as application calls.
#include "mpiio/flatten.h"

#include <algorithm>
#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <utility>

// The MPI-1 Fortran combiners (MPI_TYPE_HVECTOR etc. called from Fortran, addresses passed as
// INTEGER) were removed in MPI-3. MPICH still defines them; Open MPI only when built with MPI-1
// compatibility (otherwise the enum slots are renamed OMPI_WAS_...). They are enum values, not
// macros, so the implementation's own switches tell whether the names exist.
#if defined(MPICH_VERSION) || \
    (defined(OMPI_OMIT_MPI1_COMPAT_DECLS) && !OMPI_OMIT_MPI1_COMPAT_DECLS)
#define STAGIO_HAVE_INTEGER_COMBINERS 1
#else
#define STAGIO_HAVE_INTEGER_COMBINERS 0
#endif

namespace stagio {

void FlatType::BuildPrefix() {
  prefix.resize(extents.size());
  uint64_t before = 0;
  for (size_t i = 0; i < extents.size(); ++i) {
    prefix[i] = before;
    before += extents[i].length;
  }
}

StreamPosition FlatType::Locate(uint64_t stream_offset) const {
  if (extents.empty()) return {0, 0};
  if (prefix.size() == extents.size()) {
    // The last extent whose first stream byte is <= stream_offset; prefix[0] == 0, so the
    // upper bound is never the first element.
    auto after = std::upper_bound(prefix.begin(), prefix.end(), stream_offset);
    size_t index = static_cast<size_t>(after - prefix.begin()) - 1;
    return {index, stream_offset - prefix[index]};
  }
  uint64_t before = 0;
  for (size_t i = 0; i < extents.size(); ++i) {
    if (stream_offset < before + extents[i].length) return {i, stream_offset - before};
    before += extents[i].length;
  }
  // Out of range (a caller bug): point at the end of the last extent rather than past it.
  return {extents.size() - 1, extents.back().length};
}

namespace {

// ---------------------------------------------------------------------------------------------
// Reading what MPI knows about a type.

struct Envelope {
  int combiner = MPI_COMBINER_NAMED;
  int64_t num_integers = 0;
  int64_t num_addresses = 0;
  int64_t num_large_counts = 0;  // always 0 before MPI 4
  int64_t num_datatypes = 0;

  bool operator==(const Envelope& other) const {
    return combiner == other.combiner && num_integers == other.num_integers &&
           num_addresses == other.num_addresses && num_large_counts == other.num_large_counts &&
           num_datatypes == other.num_datatypes;
  }
};

Envelope ReadEnvelope(MPI_Datatype type) {
  Envelope envelope;
#if MPI_VERSION >= 4
  // The _c form is the only one that can describe types built by the large-count (_c)
  // constructors; for the others it reports num_large_counts == 0 and the classic layout.
  MPI_Count integers = 0, addresses = 0, large_counts = 0, datatypes = 0;
  PMPI_Type_get_envelope_c(type, &integers, &addresses, &large_counts, &datatypes,
                           &envelope.combiner);
  envelope.num_large_counts = large_counts;
#else
  int integers = 0, addresses = 0, datatypes = 0;
  PMPI_Type_get_envelope(type, &integers, &addresses, &datatypes, &envelope.combiner);
#endif
  envelope.num_integers = integers;
  envelope.num_addresses = addresses;
  envelope.num_datatypes = datatypes;
  return envelope;
}

// Predefined types must never be freed: the named ones, and the F90 parameterized types, which
// the standard also calls predefined although their combiner is not MPI_COMBINER_NAMED.
bool IsPredefined(MPI_Datatype type) {
  const int combiner = ReadEnvelope(type).combiner;
  return combiner == MPI_COMBINER_NAMED || combiner == MPI_COMBINER_F90_REAL ||
         combiner == MPI_COMBINER_F90_COMPLEX || combiner == MPI_COMBINER_F90_INTEGER;
}

struct Bounds {
  uint64_t size = 0;
  int64_t lb = 0;
  int64_t extent = 0;
  int64_t true_lb = 0;
  int64_t true_extent = 0;

  bool operator==(const Bounds& other) const {
    return size == other.size && lb == other.lb && extent == other.extent &&
           true_lb == other.true_lb && true_extent == other.true_extent;
  }
};

Bounds ReadBounds(MPI_Datatype type) {
  MPI_Count size = 0, lb = 0, extent = 0, true_lb = 0, true_extent = 0;
  PMPI_Type_size_x(type, &size);
  PMPI_Type_get_extent_x(type, &lb, &extent);
  PMPI_Type_get_true_extent_x(type, &true_lb, &true_extent);
  Bounds bounds;
  // MPI_UNDEFINED (a size that does not fit MPI_Count) is negative: treat it as empty.
  bounds.size = size > 0 ? static_cast<uint64_t>(size) : 0;
  bounds.lb = lb;
  bounds.extent = extent;
  bounds.true_lb = true_lb;
  bounds.true_extent = true_extent;
  return bounds;
}

// The arguments a derived datatype was built from (MPI_Type_get_contents). Owns the datatype
// handles MPI returns: the standard makes derived ones new references that the caller frees,
// while predefined ones must not be freed.
class TypeContents {
 public:
  TypeContents(MPI_Datatype type, const Envelope& envelope)
      : integers_(static_cast<size_t>(envelope.num_integers)),
        large_counts_(static_cast<size_t>(envelope.num_large_counts)),
        types_(static_cast<size_t>(envelope.num_datatypes)) {
    std::vector<MPI_Aint> addresses(static_cast<size_t>(envelope.num_addresses));
#if MPI_VERSION >= 4
    PMPI_Type_get_contents_c(type, envelope.num_integers, envelope.num_addresses,
                             envelope.num_large_counts, envelope.num_datatypes, integers_.data(),
                             addresses.data(), large_counts_.data(), types_.data());
#else
    PMPI_Type_get_contents(type, static_cast<int>(envelope.num_integers),
                           static_cast<int>(envelope.num_addresses),
                           static_cast<int>(envelope.num_datatypes), integers_.data(),
                           addresses.data(), types_.data());
#endif
    // A large-count constructor puts every count, blocklength and displacement in the large
    // counts, in parameter order; the classic ones put counts in the integers and byte
    // displacements in the addresses, which concatenated give the same parameter order.
    // (SUBARRAY and DARRAY mix small integers with counts and are decoded separately.)
    if (!large_counts_.empty()) {
      args_.assign(large_counts_.begin(), large_counts_.end());
    } else {
      args_.assign(integers_.begin(), integers_.end());
      args_.insert(args_.end(), addresses.begin(), addresses.end());
    }
  }

  ~TypeContents() {
    for (MPI_Datatype& type : types_) {
      if (type != MPI_DATATYPE_NULL && !IsPredefined(type)) PMPI_Type_free(&type);
    }
  }

  TypeContents(const TypeContents&) = delete;
  TypeContents& operator=(const TypeContents&) = delete;

  const std::vector<int64_t>& args() const { return args_; }
  const std::vector<int>& integers() const { return integers_; }
  const std::vector<MPI_Count>& large_counts() const { return large_counts_; }
  bool has_large_counts() const { return !large_counts_.empty(); }
  size_t num_types() const { return types_.size(); }
  MPI_Datatype type(size_t i) const { return types_[i]; }

 private:
  std::vector<int> integers_;
  std::vector<MPI_Count> large_counts_;
  std::vector<MPI_Datatype> types_;
  std::vector<int64_t> args_;
};

// ---------------------------------------------------------------------------------------------
// Building the extent list.

// Appends extents in typemap order, merging each with the previous one when it starts exactly
// where that one ends (only then: a typemap may go backwards, and reordering would change the
// packed stream).
class ExtentBuilder {
 public:
  void Append(int64_t offset, uint64_t length) {
    if (length == 0) return;
    total_ += length;
    if (!extents_.empty()) {
      Extent& last = extents_.back();
      if (last.offset + static_cast<int64_t>(last.length) == offset) {
        last.length += length;
        return;
      }
    }
    extents_.push_back({offset, length});
  }

  // `copies` consecutive copies of `element`, copy j at displacement + j * element.extent.
  void AppendCopies(int64_t displacement, int64_t copies, const FlatType& element) {
    if (copies <= 0 || element.size == 0) return;
    if (element.tiles_contiguously()) {
      // One extent however large the count: contiguous(1e9, MPI_BYTE) must not loop 1e9 times.
      Append(displacement + element.extents[0].offset,
             static_cast<uint64_t>(copies) * element.extents[0].length);
      return;
    }
    for (int64_t copy = 0; copy < copies; ++copy) {
      const int64_t origin = displacement + copy * element.extent;
      for (const Extent& extent : element.extents) Append(origin + extent.offset, extent.length);
    }
  }

  uint64_t total() const { return total_; }

  std::vector<Extent> Take() {
    extents_.shrink_to_fit();  // the list may live long in the cache
    return std::move(extents_);
  }

 private:
  std::vector<Extent> extents_;
  uint64_t total_ = 0;
};

FlatType FlattenUncached(MPI_Datatype type, const Bounds& bounds);

FlatType FlattenChild(MPI_Datatype child) { return FlattenUncached(child, ReadBounds(child)); }

// Predefined types are one run of bytes, except the C "value + index" pairs of MPI_MINLOC and
// MPI_MAXLOC, which MPI lays out like struct { T value; int index; } and may hold a hole between
// the members (MPI_SHORT_INT) or padding after them (MPI_DOUBLE_INT).
template <typename Value>
std::vector<Extent> PairExtents() {
  struct Pair {
    Value value;
    int index;
  };
  ExtentBuilder out;
  out.Append(static_cast<int64_t>(offsetof(Pair, value)), sizeof(Value));
  out.Append(static_cast<int64_t>(offsetof(Pair, index)), sizeof(int));
  return out.Take();
}

std::vector<Extent> NamedExtents(MPI_Datatype type, const Bounds& bounds) {
  std::vector<Extent> pair;
  if (type == MPI_FLOAT_INT) pair = PairExtents<float>();
  else if (type == MPI_DOUBLE_INT) pair = PairExtents<double>();
  else if (type == MPI_LONG_INT) pair = PairExtents<long>();
  else if (type == MPI_SHORT_INT) pair = PairExtents<short>();
  else if (type == MPI_LONG_DOUBLE_INT) pair = PairExtents<long double>();
  if (!pair.empty()) {
    uint64_t pair_size = 0;
    for (const Extent& extent : pair) pair_size += extent.length;
    // Trust the C layout only if MPI agrees on its size (it would not if the MPI library were
    // built with a different long double, say).
    if (pair_size == bounds.size) return pair;
  }
  return {{0, bounds.size}};
}

// Places `count` blocks: block i is blocklength(i) copies of `element` at byte displacement(i).
template <typename BlockLength, typename Displacement>
void AppendBlocks(int64_t count, BlockLength blocklength, Displacement displacement,
                  const FlatType& element, ExtentBuilder* out) {
  for (int64_t i = 0; i < count; ++i) out->AppendCopies(displacement(i), blocklength(i), element);
}

// A run of consecutive indices along one array dimension.
struct IndexRun {
  int64_t first;
  int64_t length;
};

// One dimension of a SUBARRAY or DARRAY: the indices this type covers and how many elements
// apart consecutive indices are in the full array.
struct ArrayDimension {
  int64_t stride_in_elements = 1;
  std::vector<IndexRun> runs;  // increasing
};

// Emits the elements of an array section, `dimensions` ordered slowest-varying first (so the
// last has stride 1): the typemap order of both SUBARRAY and DARRAY.
void AppendArrayLevel(const std::vector<ArrayDimension>& dimensions, size_t level,
                      int64_t first_element, const FlatType& element, ExtentBuilder* out) {
  const ArrayDimension& dimension = dimensions[level];
  const bool fastest = level + 1 == dimensions.size();
  for (const IndexRun& run : dimension.runs) {
    if (fastest) {
      const int64_t start = first_element + run.first * dimension.stride_in_elements;
      out->AppendCopies(start * element.extent, run.length, element);
      continue;
    }
    for (int64_t index = run.first; index < run.first + run.length; ++index) {
      AppendArrayLevel(dimensions, level + 1,
                       first_element + index * dimension.stride_in_elements, element, out);
    }
  }
}

// `sizes` are the full array's dimensions and `runs` what the type covers in each, both in the
// caller's dimension order; `order` (MPI_ORDER_C or MPI_ORDER_FORTRAN) says which varies fastest.
void AppendArraySection(const std::vector<int64_t>& sizes, std::vector<std::vector<IndexRun>> runs,
                        int order, const FlatType& element, ExtentBuilder* out) {
  const size_t ndims = sizes.size();
  if (ndims == 0) return;
  std::vector<ArrayDimension> slowest_first(ndims);
  int64_t stride = 1;
  for (size_t step = 0; step < ndims; ++step) {
    // Walk from the fastest dimension outwards, filling slowest_first from its end.
    const size_t dim = order == MPI_ORDER_FORTRAN ? step : ndims - 1 - step;
    ArrayDimension& target = slowest_first[ndims - 1 - step];
    target.stride_in_elements = stride;
    target.runs = std::move(runs[dim]);
    stride *= sizes[dim];
  }
  AppendArrayLevel(slowest_first, 0, 0, element, out);
}

bool AppendSubarray(const TypeContents& contents, const FlatType& element, ExtentBuilder* out) {
  const std::vector<int>& integers = contents.integers();
  if (integers.empty()) return false;
  const size_t ndims = static_cast<size_t>(integers[0]);
  // Classic: ints = ndims, sizes[], subsizes[], starts[], order.
  // Large:   ints = ndims, order; large counts = sizes[], subsizes[], starts[].
  std::vector<int64_t> numbers;
  int order = 0;
  if (contents.has_large_counts()) {
    if (integers.size() < 2 || contents.large_counts().size() < 3 * ndims) return false;
    numbers.assign(contents.large_counts().begin(), contents.large_counts().end());
    order = integers[1];
  } else {
    if (integers.size() < 2 + 3 * ndims) return false;
    numbers.assign(integers.begin() + 1, integers.end());
    order = integers[1 + 3 * ndims];
  }
  std::vector<int64_t> sizes(ndims);
  std::vector<std::vector<IndexRun>> runs(ndims);
  for (size_t d = 0; d < ndims; ++d) {
    sizes[d] = numbers[d];
    const int64_t subsize = numbers[ndims + d];
    const int64_t start = numbers[2 * ndims + d];
    if (subsize > 0) runs[d].push_back({start, subsize});
  }
  AppendArraySection(sizes, std::move(runs), order, element, out);
  return true;
}

// The indices of one dimension that process coordinate `coord` owns under an MPI darray
// distribution (MPI standard, "Distributed Array Datatype Constructor").
std::vector<IndexRun> OwnedIndices(int64_t global_size, int distribution, int darg, int psize,
                                   int coord) {
  std::vector<IndexRun> runs;
  if (global_size <= 0) return runs;
  if (distribution == MPI_DISTRIBUTE_NONE) {
    runs.push_back({0, global_size});
    return runs;
  }
  if (psize <= 0) return runs;
  if (distribution == MPI_DISTRIBUTE_BLOCK) {
    // Default block: ceil(gsize / psize), so the last processes may own fewer (or none).
    const int64_t block =
        darg == MPI_DISTRIBUTE_DFLT_DARG ? (global_size + psize - 1) / psize : darg;
    const int64_t first = coord * block;
    const int64_t end = std::min(first + block, global_size);
    if (block > 0 && first < end) runs.push_back({first, end - first});
    return runs;
  }
  // MPI_DISTRIBUTE_CYCLIC(k): blocks of k dealt round-robin; the default k is 1.
  const int64_t block = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
  if (block <= 0) return runs;
  for (int64_t first = coord * block; first < global_size; first += psize * block) {
    runs.push_back({first, std::min(block, global_size - first)});
  }
  return runs;
}

bool AppendDarray(const TypeContents& contents, const FlatType& element, ExtentBuilder* out) {
  const std::vector<int>& integers = contents.integers();
  if (integers.size() < 3) return false;
  const int rank = integers[1];
  const size_t ndims = static_cast<size_t>(integers[2]);
  // Classic: ints = size, rank, ndims, gsizes[], distribs[], dargs[], psizes[], order.
  // Large:   ints = size, rank, ndims, distribs[], dargs[], psizes[], order; counts = gsizes[].
  std::vector<int64_t> global_sizes(ndims);
  size_t next = 3;
  if (contents.has_large_counts()) {
    if (contents.large_counts().size() < ndims || integers.size() < 4 + 3 * ndims) return false;
    for (size_t d = 0; d < ndims; ++d) global_sizes[d] = contents.large_counts()[d];
  } else {
    if (integers.size() < 4 + 4 * ndims) return false;
    for (size_t d = 0; d < ndims; ++d) global_sizes[d] = integers[next + d];
    next += ndims;
  }
  const int* distributions = &integers[next];
  const int* dargs = &integers[next + ndims];
  const int* psizes = &integers[next + 2 * ndims];
  const int order = integers[next + 3 * ndims];

  // The process grid is numbered row-major whatever the array order (as MPI_Cart_create).
  std::vector<int> coords(ndims);
  int remaining = rank;
  for (size_t d = ndims; d-- > 0;) {
    const int psize = psizes[d] > 0 ? psizes[d] : 1;
    coords[d] = remaining % psize;
    remaining /= psize;
  }
  std::vector<std::vector<IndexRun>> runs(ndims);
  for (size_t d = 0; d < ndims; ++d) {
    runs[d] = OwnedIndices(global_sizes[d], distributions[d], dargs[d], psizes[d], coords[d]);
  }
  AppendArraySection(global_sizes, std::move(runs), order, element, out);
  return true;
}

bool AppendStruct(const TypeContents& contents, ExtentBuilder* out) {
  const std::vector<int64_t>& a = contents.args();  // count, blocklengths[], displacements[]
  if (a.empty()) return false;
  const int64_t count = a[0];
  if (a.size() < static_cast<size_t>(1 + 2 * count) ||
      contents.num_types() < static_cast<size_t>(count)) {
    return false;
  }
  for (int64_t i = 0; i < count; ++i) {
    const FlatType member = FlattenChild(contents.type(static_cast<size_t>(i)));
    out->AppendCopies(a[1 + count + i], a[1 + i], member);
  }
  return true;
}

// Appends the typemap of a derived `type` (relative to its origin). False if the envelope is
// one this code does not understand.
bool AppendDerived(MPI_Datatype type, const Envelope& envelope, const Bounds& bounds,
                   ExtentBuilder* out) {
  const int combiner = envelope.combiner;
  // F90 parameterized types are predefined types under another name: no contents to walk.
  if (combiner == MPI_COMBINER_F90_REAL || combiner == MPI_COMBINER_F90_COMPLEX ||
      combiner == MPI_COMBINER_F90_INTEGER) {
    out->Append(0, bounds.size);
    return true;
  }

  const TypeContents contents(type, envelope);
  if (contents.num_types() == 0) return false;
  const bool is_struct = combiner == MPI_COMBINER_STRUCT
#if STAGIO_HAVE_INTEGER_COMBINERS
                         || combiner == MPI_COMBINER_STRUCT_INTEGER
#endif
      ;
  if (is_struct) return AppendStruct(contents, out);

  const FlatType element = FlattenChild(contents.type(0));
  const std::vector<int64_t>& a = contents.args();
  const int64_t count = a.empty() ? 0 : a[0];
  // Enough arguments for a combiner that takes `per_block` per block plus `fixed` more?
  auto has_args = [&](int64_t fixed, int64_t per_block) {
    return !a.empty() && count >= 0 && static_cast<int64_t>(a.size()) >= fixed + per_block * count;
  };
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:  // same typemap; only lb and extent (read from MPI) change
      out->AppendCopies(0, 1, element);
      return true;
    case MPI_COMBINER_CONTIGUOUS:  // count
      if (!has_args(1, 0)) return false;
      out->AppendCopies(0, count, element);
      return true;
    case MPI_COMBINER_VECTOR:  // count, blocklength, stride (elements)
      if (!has_args(3, 0)) return false;
      AppendBlocks(
          count, [&](int64_t) { return a[1]; },
          [&](int64_t i) { return i * a[2] * element.extent; }, element, out);
      return true;
#if STAGIO_HAVE_INTEGER_COMBINERS
    case MPI_COMBINER_HVECTOR_INTEGER:
#endif
    case MPI_COMBINER_HVECTOR:  // count, blocklength, stride (bytes)
      if (!has_args(3, 0)) return false;
      AppendBlocks(
          count, [&](int64_t) { return a[1]; }, [&](int64_t i) { return i * a[2]; }, element,
          out);
      return true;
    case MPI_COMBINER_INDEXED:  // count, blocklengths[], displacements[] (elements)
      if (!has_args(1, 2)) return false;
      AppendBlocks(
          count, [&](int64_t i) { return a[1 + i]; },
          [&](int64_t i) { return a[1 + count + i] * element.extent; }, element, out);
      return true;
#if STAGIO_HAVE_INTEGER_COMBINERS
    case MPI_COMBINER_HINDEXED_INTEGER:
#endif
    case MPI_COMBINER_HINDEXED:  // count, blocklengths[], displacements[] (bytes)
      if (!has_args(1, 2)) return false;
      AppendBlocks(
          count, [&](int64_t i) { return a[1 + i]; }, [&](int64_t i) { return a[1 + count + i]; },
          element, out);
      return true;
    case MPI_COMBINER_INDEXED_BLOCK:  // count, blocklength, displacements[] (elements)
      if (!has_args(2, 1)) return false;
      AppendBlocks(
          count, [&](int64_t) { return a[1]; },
          [&](int64_t i) { return a[2 + i] * element.extent; }, element, out);
      return true;
    case MPI_COMBINER_HINDEXED_BLOCK:  // count, blocklength, displacements[] (bytes)
      if (!has_args(2, 1)) return false;
      AppendBlocks(
          count, [&](int64_t) { return a[1]; }, [&](int64_t i) { return a[2 + i]; }, element,
          out);
      return true;
    case MPI_COMBINER_SUBARRAY:
      return AppendSubarray(contents, element, out);
    case MPI_COMBINER_DARRAY:
      return AppendDarray(contents, element, out);
    default:
      return false;
  }
}

FlatType FlattenUncached(MPI_Datatype type, const Bounds& bounds) {
  FlatType flat;
  flat.size = bounds.size;
  flat.lb = bounds.lb;
  flat.extent = bounds.extent;
  if (flat.size == 0) return flat;  // MPI_LB, MPI_UB, zero counts: nothing to move

  const Envelope envelope = ReadEnvelope(type);
  if (envelope.combiner == MPI_COMBINER_NAMED) {
    flat.extents = NamedExtents(type, bounds);
    return flat;
  }
  ExtentBuilder out;
  if (AppendDerived(type, envelope, bounds, &out) && out.total() == flat.size) {
    flat.extents = out.Take();
  } else {
    // A combiner from a newer standard, or a walk that disagrees with MPI's size. There is no
    // right answer to give; one run of `size` bytes at the true lower bound at least keeps
    // every caller's byte counts consistent with MPI's.
    flat.extents = {{bounds.true_lb, flat.size}};
  }
  return flat;
}

// ---------------------------------------------------------------------------------------------
// The cache.
//
// MPI reuses the handles of freed datatypes, so a map keyed by handle could hand a new type the
// flattening of an old one. Derived types therefore carry their flattening as an MPI attribute:
// MPI_Type_free runs the delete callback, and a reused handle starts without it. Predefined
// types are never freed; they live in a plain map.

using CachedFlattening = std::shared_ptr<const FlatType>;

int DropCachedFlattening(MPI_Datatype /*type*/, int /*keyval*/, void* attribute,
                         void* /*extra_state*/) {
  delete static_cast<CachedFlattening*>(attribute);
  return MPI_SUCCESS;
}

int FlatteningKeyval() {
  // Created on first use, after MPI_Init; MPI_Type_dup'ed types start without the attribute.
  static const int keyval = [] {
    int created = MPI_KEYVAL_INVALID;
    PMPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, DropCachedFlattening, &created, nullptr);
    return created;
  }();
  return keyval;
}

struct PredefinedCache {
  std::mutex mutex;
  std::unordered_map<MPI_Datatype, CachedFlattening> entries;
};

PredefinedCache& Predefined() {
  static PredefinedCache* cache = new PredefinedCache;  // never destroyed: usable from atexit
  return *cache;
}

CachedFlattening FlattenNow(MPI_Datatype type) {
  FlatType flat = FlattenUncached(type, ReadBounds(type));
  flat.BuildPrefix();
  return std::make_shared<const FlatType>(std::move(flat));
}

}  // namespace

std::shared_ptr<const FlatType> Flatten(MPI_Datatype type) {
  if (ReadEnvelope(type).combiner == MPI_COMBINER_NAMED) {
    PredefinedCache& cache = Predefined();
    std::lock_guard<std::mutex> lock(cache.mutex);
    CachedFlattening& entry = cache.entries[type];
    if (!entry) entry = FlattenNow(type);
    return entry;
  }
  const int keyval = FlatteningKeyval();
  void* attribute = nullptr;
  int found = 0;
  if (keyval != MPI_KEYVAL_INVALID) PMPI_Type_get_attr(type, keyval, &attribute, &found);
  if (found) return *static_cast<CachedFlattening*>(attribute);
  CachedFlattening flat = FlattenNow(type);
  if (keyval != MPI_KEYVAL_INVALID) {
    PMPI_Type_set_attr(type, keyval, new CachedFlattening(flat));
  }
  return flat;
}

void ClearFlattenCache() {
  PredefinedCache& cache = Predefined();
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.entries.clear();
}

}  // namespace stagio
