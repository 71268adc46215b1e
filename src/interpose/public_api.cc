// The public C API (include/stagio/stagio.h): a thin layer over the runtime.
#include "stagio/stagio.h"

#include "common/log.h"
#include "interpose/mpi_file_symbols.h"
#include "mpiio/runtime.h"
#include "storage/fault_driver.h"

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

}  // extern "C"
