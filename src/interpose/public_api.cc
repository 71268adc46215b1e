// The public C API (include/stagio/stagio.h): a thin layer over the runtime. The pre-execution
// calls go to the pre-execution runtime (PreexecRuntime: preexec/preexec.h, preexec_helper.h).
#include "stagio/stagio.h"

#include <memory>
#include <optional>

#include "common/log.h"
#include "interpose/mpi_file_symbols.h"
#include "preexec/preexec.h"
#include "mpiio/runtime.h"
#include "storage/fault_driver.h"

// A pre-execution runner as the application holds it. `run` is null when no helper started
// (pre-execution off, stagio inactive): join then has nothing to wait for.
struct stagio_preexec {
  std::shared_ptr<stagio::HelperRun> run;
};

namespace {

// The prefetch calls come from the helper thread of a run (Preexec::Start); from any other thread
// (or with stagio inactive) they do nothing, silently, as every prefetch call does on error.
template <typename Call>
void OnHelper(Call call) {
  if (stagio::HelperRun* run = stagio::HelperRun::Current()) call(*run);
}

}  // namespace

extern "C" {

STAGIO_EXPORT const char* stagio_version(void) { return STAGIO_VERSION_STRING; }

STAGIO_EXPORT int stagio_is_active(void) { return stagio::Runtime::Get() != nullptr ? 1 : 0; }

STAGIO_EXPORT int stagio_inject_faults(const char* spec) {
  stagio::Runtime* runtime = stagio::Runtime::Get();
  if (!runtime || !runtime->fault_driver() || !spec) return -1;
  stagio::Status status = runtime->fault_driver()->SetFaults(spec);
  if (!status.ok()) {
    stagio::LogError("stagio_inject_faults: " + status.ToString());
    return -1;
  }
  return 0;
}

STAGIO_EXPORT stagio_preexec* stagio_preexec_start(void (*slice)(void* arg), void* arg,
                                                   const MPI_File* files, int nfiles) {
  auto* runner = new stagio_preexec;
  if (stagio::Runtime* runtime = stagio::Runtime::Get()) {
    runner->run = runtime->preexec().Start(slice, arg, files, nfiles);
  }
  return runner;
}

STAGIO_EXPORT void stagio_preexec_join(stagio_preexec* runner) {
  if (!runner) return;
  stagio::Runtime* runtime = stagio::Runtime::Get();
  if (runtime) {
    runtime->preexec().Join(runner->run);
  } else if (runner->run) {
    runner->run->Join();  // after MPI_Finalize, which joined it already
  }
  delete runner;
}

STAGIO_EXPORT void stagio_prefetch_open(MPI_Comm, const char* filename, int, MPI_Info,
                                        MPI_File* file) {
  if (file) *file = MPI_FILE_NULL;
  OnHelper([&](stagio::HelperRun& run) { run.Open(filename, file); });
}

STAGIO_EXPORT void stagio_prefetch_close(MPI_File* file) {
  OnHelper([&](stagio::HelperRun& run) { run.Close(file); });
  if (file) *file = MPI_FILE_NULL;
}

STAGIO_EXPORT void stagio_prefetch_sync(MPI_File file) {
  OnHelper([&](stagio::HelperRun& run) { run.SyncPoint(file); });
}

STAGIO_EXPORT void stagio_prefetch_set_size(MPI_File file, MPI_Offset) {
  OnHelper([&](stagio::HelperRun& run) { run.SyncPoint(file); });
}

STAGIO_EXPORT void stagio_prefetch_set_view(MPI_File file, MPI_Offset disp, MPI_Datatype etype,
                                            MPI_Datatype filetype, const char* datarep,
                                            MPI_Info) {
  OnHelper([&](stagio::HelperRun& run) { run.SetView(file, disp, etype, filetype, datarep); });
}

STAGIO_EXPORT void stagio_prefetch_seek(MPI_File file, MPI_Offset offset, int whence) {
  OnHelper([&](stagio::HelperRun& run) { run.Seek(file, offset, whence); });
}

// The collective forms are the helper's own part of the collective call: helpers never
// communicate with each other, so they are the same as the independent forms.
STAGIO_EXPORT void stagio_prefetch_read_at(MPI_File file, MPI_Offset offset, MPI_Count count,
                                           MPI_Datatype datatype) {
  OnHelper([&](stagio::HelperRun& run) { run.Read(file, offset, count, datatype); });
}

STAGIO_EXPORT void stagio_prefetch_read_at_all(MPI_File file, MPI_Offset offset,
                                               MPI_Count count, MPI_Datatype datatype) {
  stagio_prefetch_read_at(file, offset, count, datatype);
}

STAGIO_EXPORT void stagio_prefetch_read(MPI_File file, MPI_Count count, MPI_Datatype datatype) {
  OnHelper([&](stagio::HelperRun& run) { run.Read(file, std::nullopt, count, datatype); });
}

STAGIO_EXPORT void stagio_prefetch_read_all(MPI_File file, MPI_Count count,
                                            MPI_Datatype datatype) {
  stagio_prefetch_read(file, count, datatype);
}

STAGIO_EXPORT void stagio_prefetch_write_at(MPI_File file, MPI_Offset offset, MPI_Count count,
                                            MPI_Datatype datatype) {
  OnHelper([&](stagio::HelperRun& run) { run.Write(file, offset, count, datatype); });
}

STAGIO_EXPORT void stagio_prefetch_write_at_all(MPI_File file, MPI_Offset offset,
                                                MPI_Count count, MPI_Datatype datatype) {
  stagio_prefetch_write_at(file, offset, count, datatype);
}

STAGIO_EXPORT void stagio_prefetch_write(MPI_File file, MPI_Count count, MPI_Datatype datatype) {
  OnHelper([&](stagio::HelperRun& run) { run.Write(file, std::nullopt, count, datatype); });
}

STAGIO_EXPORT void stagio_prefetch_write_all(MPI_File file, MPI_Count count,
                                             MPI_Datatype datatype) {
  stagio_prefetch_write(file, count, datatype);
}

}  // extern "C"
