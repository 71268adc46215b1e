// The shared-memory segment of one emulated run: the device state, the lock that guards it and
// the counters, in one POSIX shared-memory object that every process of the run maps (the
// `stagio-emu` launcher, mpiexec and its proxies, every rank, every thread). One segment means
// one device: requests from all ranks queue on the same servers and share the same bandwidth.
//
// Creation is lazy and race-free: any process may create the object; the size is set by
// whoever finds it empty, and exactly one process initializes it, the one that moves
// `init_state` from kUninitialized to kInitializing with a compare-exchange. The others wait
// until it reads kReady. The parameters of the process that initializes the segment win; the
// others' are ignored (OpenSegment tells them whether they created it).
//
// The mutex is process-shared and robust: a rank killed while holding it leaves at worst one
// request half-charged, and the next locker marks it consistent and goes on.
// Nothing here allocates or calls a function the shim interposes.
#pragma once

#include <pthread.h>

#include <cstdint>

#include "device_model.h"

namespace stagio::emu {

enum class RequestKind { kRead, kWrite, kSync };

struct EmuCounters {
  uint64_t requests;
  uint64_t read_requests;
  uint64_t write_requests;
  uint64_t sync_requests;
  uint64_t bytes_read;
  uint64_t bytes_written;
  uint64_t charged_ns;  // sum over requests of (finish - arrival)
};

struct EmuSegment {
  uint32_t init_state;   // a SegmentInitState, accessed only with atomic builtins
  uint32_t magic;        // kSegmentMagic once ready, so a segment of another layout is refused
  pthread_mutex_t lock;  // guards device and counters
  DeviceParams params;   // as configured; read-only once ready
  DeviceState device;
  EmuCounters counters;
};

enum class SegmentMode {
  kCreateNew,        // fail if the name exists: stagio-emu's own fresh segment
  kCreateOrAttach,   // the shim: whoever comes first creates
  kAttachExisting,   // readers (tests, tools)
};

struct SegmentOpenResult {
  EmuSegment* segment = nullptr;  // nullptr on failure
  bool created = false;           // this call initialized it with `params_if_created`
  const char* failed_step = nullptr;  // on failure: "shm_open", "mmap", ...
  int error = 0;                      // on failure: an errno value
};

// `params_if_created` must be valid (DeviceParamsError returns nullptr).
SegmentOpenResult OpenSegment(const char* name, SegmentMode mode,
                              const DeviceParams& params_if_created);
void CloseSegment(EmuSegment* segment);
// Removes the name; processes that have it mapped keep using it.
int UnlinkSegment(const char* name);

// Admits a request that arrived at `now_ns` (CLOCK_MONOTONIC) with `bytes` moved, counts it,
// and returns when the emulated device finishes it.
int64_t ChargeSegment(EmuSegment* segment, RequestKind kind, int64_t now_ns, uint64_t bytes);

EmuCounters ReadSegmentCounters(EmuSegment* segment);

}  // namespace stagio::emu
