// diff_preexec.h: diff_driver's pre-execution mode (DIFF_PREEXEC=1).
//
// A pre-execution helper must never change a byte the program reads, however its slice runs:
// ahead, behind, waiting at sync points, or cancelled. In this mode each seed is rehearsed
// first: a second SeedRun makes the same plan (it depends on the seed alone) but performs no
// MPI-IO; where the real run will call an MPI_File_* function on the seed's file, the
// rehearsal records the prefetch counterpart instead (a Step). The steps from one open of the
// file to its close form a Span. The real run then starts a helper right after each open, whose
// slice plays that span's steps with the stagio_prefetch_* calls, ahead of the program, and
// joins it right before the close. The comparison with plain MPI-IO is the test.
//
// Counterparts: reads and writes (nonblocking and split collective ones too) become
// stagio_prefetch_read*/write* with the same offsets, counts and datatypes; seeks, views, syncs
// and set_size their prefetch forms. Calls without a counterpart (shared-pointer and ordered
// accesses, seek_shared, set_info, preallocate, atomicity, queries) are left out: the slice's
// numbering then drifts from the program's, which must cost fetches, never bytes. The rehearsal
// stops at the last epoch's end, before the sequential-mode file and the final close.
//
// libstagio's functions are found with dlsym, so that the same binary runs plain.
#pragma once

#include <dlfcn.h>
#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace diff_preexec {

// One prefetch call of the slice.
struct Step {
  enum class Kind : uint8_t { kRead, kWrite, kSeek, kSetView, kSync, kSetSize };
  Kind kind = Kind::kSync;
  bool explicit_offset = false;  // reads and writes: the _at forms
  bool collective = false;       // reads and writes: the _all forms
  MPI_Offset offset = 0;         // explicit offset, seek offset, view displacement or new size
  int whence = MPI_SEEK_SET;
  MPI_Count count = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;  // the memory type, or the view's etype
  MPI_Datatype filetype = MPI_DATATYPE_NULL;
  std::string datarep;
  std::vector<std::shared_ptr<const void>> keep;  // owners of the datatypes above

  static Step Access(bool write, bool explicit_offset, bool collective, MPI_Offset offset,
                     MPI_Count count, MPI_Datatype datatype, std::shared_ptr<const void> owner) {
    Step step;
    step.kind = write ? Kind::kWrite : Kind::kRead;
    step.explicit_offset = explicit_offset;
    step.collective = collective;
    step.offset = offset;
    step.count = count;
    step.datatype = datatype;
    step.keep.push_back(std::move(owner));
    return step;
  }
  static Step Seek(MPI_Offset offset, int whence) {
    Step step;
    step.kind = Kind::kSeek;
    step.offset = offset;
    step.whence = whence;
    return step;
  }
  static Step SetView(MPI_Offset displacement, MPI_Datatype etype, MPI_Datatype filetype,
                      const char* datarep, std::shared_ptr<const void> owner) {
    Step step;
    step.kind = Kind::kSetView;
    step.offset = displacement;
    step.datatype = etype;
    step.filetype = filetype;
    step.datarep = datarep;
    step.keep.push_back(std::move(owner));
    return step;
  }
  static Step Sync() { return Step(); }
  static Step SetSize(MPI_Offset size) {
    Step step;
    step.kind = Kind::kSetSize;
    step.offset = size;
    return step;
  }
};

using Span = std::vector<Step>;

// The rehearsal's record: one span per open of the seed's file, and the operation number of
// each open and of the end, by which the real run checks that it makes the same plan.
class Script {
 public:
  void Open(uint32_t op) {
    spans_.emplace_back();
    opened_at_.push_back(op);
  }
  void Add(Step step) {
    if (!spans_.empty()) spans_.back().push_back(std::move(step));
  }
  void End(uint32_t op) { ended_at_ = op; }
  size_t span_count() const { return spans_.size(); }
  const Span& span(size_t index) const { return spans_[index]; }
  uint32_t opened_at(size_t index) const { return opened_at_[index]; }
  uint32_t ended_at() const { return ended_at_; }

 private:
  std::vector<Span> spans_;
  std::vector<uint32_t> opened_at_;
  uint32_t ended_at_ = 0;
};

// libstagio's pre-execution API, found at run time.
struct Api {
  using Slice = void (*)(void*);
  void* (*start)(Slice, void*, const MPI_File*, int);
  void (*join)(void*);
  void (*read_at)(MPI_File, MPI_Offset, MPI_Count, MPI_Datatype);
  void (*read_at_all)(MPI_File, MPI_Offset, MPI_Count, MPI_Datatype);
  void (*read)(MPI_File, MPI_Count, MPI_Datatype);
  void (*read_all)(MPI_File, MPI_Count, MPI_Datatype);
  void (*write_at)(MPI_File, MPI_Offset, MPI_Count, MPI_Datatype);
  void (*write_at_all)(MPI_File, MPI_Offset, MPI_Count, MPI_Datatype);
  void (*write)(MPI_File, MPI_Count, MPI_Datatype);
  void (*write_all)(MPI_File, MPI_Count, MPI_Datatype);
  void (*seek)(MPI_File, MPI_Offset, int);
  void (*set_view)(MPI_File, MPI_Offset, MPI_Datatype, MPI_Datatype, const char*, MPI_Info);
  void (*sync)(MPI_File);
  void (*set_size)(MPI_File, MPI_Offset);

  // Null if libstagio (or any of these functions) is not loaded.
  static std::unique_ptr<Api> Find() {
    auto api = std::make_unique<Api>();
    bool found = true;
    auto get = [&found](auto& function, const char* name) {
      void* symbol = dlsym(RTLD_DEFAULT, name);
      found = found && symbol != nullptr;
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(symbol);
    };
    get(api->start, "stagio_preexec_start");
    get(api->join, "stagio_preexec_join");
    get(api->read_at, "stagio_prefetch_read_at");
    get(api->read_at_all, "stagio_prefetch_read_at_all");
    get(api->read, "stagio_prefetch_read");
    get(api->read_all, "stagio_prefetch_read_all");
    get(api->write_at, "stagio_prefetch_write_at");
    get(api->write_at_all, "stagio_prefetch_write_at_all");
    get(api->write, "stagio_prefetch_write");
    get(api->write_all, "stagio_prefetch_write_all");
    get(api->seek, "stagio_prefetch_seek");
    get(api->set_view, "stagio_prefetch_set_view");
    get(api->sync, "stagio_prefetch_sync");
    get(api->set_size, "stagio_prefetch_set_size");
    return found ? std::move(api) : nullptr;
  }

  void Play(MPI_File file, const Step& step) const {
    using Kind = Step::Kind;
    switch (step.kind) {
      case Kind::kRead:
        if (step.explicit_offset) {
          (step.collective ? read_at_all : read_at)(file, step.offset, step.count, step.datatype);
        } else {
          (step.collective ? read_all : read)(file, step.count, step.datatype);
        }
        break;
      case Kind::kWrite:
        if (step.explicit_offset) {
          (step.collective ? write_at_all : write_at)(file, step.offset, step.count,
                                                      step.datatype);
        } else {
          (step.collective ? write_all : write)(file, step.count, step.datatype);
        }
        break;
      case Kind::kSeek: seek(file, step.offset, step.whence); break;
      case Kind::kSetView:
        set_view(file, step.offset, step.datatype, step.filetype, step.datarep.c_str(),
                 MPI_INFO_NULL);
        break;
      case Kind::kSync: sync(file); break;
      case Kind::kSetSize: set_size(file, step.offset); break;
    }
  }
};

// What the helpers of one rank did, over all seeds.
struct Totals {
  uint64_t runs = 0;       // helpers started
  uint64_t ran = 0;        // ... whose slice ran
  uint64_t recorded = 0;   // steps rehearsed
  uint64_t played = 0;     // steps the slices played before they were joined
};

// Starts a helper after each open of the seed's file, playing the span of that open, and joins
// it before the file's close. Does nothing without an Api.
class Runner {
 public:
  Runner(const Api* api, const Script& script, Totals& totals)
      : api_(api), script_(script), totals_(totals) {}
  ~Runner() { BeforeClose(); }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // `*file` was just opened (the n-th open of the seed's file) at operation `op`. False if the
  // rehearsal did not open it there: then it planned something else.
  bool AfterOpen(const MPI_File* file, uint32_t op) {
    const size_t index = opens_++;
    if (!api_) return true;
    if (index >= script_.span_count() || script_.opened_at(index) != op) return false;
    run_ = std::make_unique<Run>(*api_, script_.span(index), *file);
    run_->handle = api_->start(&Run::Slice, run_.get(), file, 1);
    totals_.runs++;
    totals_.recorded += run_->span.size();
    return true;
  }
  void BeforeClose() {
    if (!run_) return;
    api_->join(run_->handle);
    totals_.ran += run_->ran.load() ? 1 : 0;
    totals_.played += run_->played.load();
    run_.reset();
  }

 private:
  struct Run {
    Run(const Api& api, const Span& span, MPI_File file) : api(api), span(span), file(file) {}
    static void Slice(void* self) {
      Run& run = *static_cast<Run*>(self);
      run.ran.store(true);
      for (const Step& step : run.span) {
        run.api.Play(run.file, step);
        run.played.fetch_add(1);
      }
    }
    const Api& api;
    const Span& span;
    const MPI_File file;
    void* handle = nullptr;
    std::atomic<bool> ran{false};
    std::atomic<uint64_t> played{0};
  };

  const Api* api_;
  const Script& script_;
  Totals& totals_;
  size_t opens_ = 0;
  std::unique_ptr<Run> run_;
};

}  // namespace diff_preexec
