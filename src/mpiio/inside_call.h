// InsideCall: the application's thread inside one stagio MPI-IO call, for a scope. Meanwhile
// pre-execution helpers start no storage request (PPIS, preexec/io_priority_gate.h), and the
// time outside such calls is what the direct path weighs a write against
// (direct/application_time.h).
#pragma once

#include "direct/application_time.h"
#include "mpiio/runtime.h"
#include "preexec/io_priority_gate.h"

namespace stagio {

class InsideCall {
 public:
  // `runtime` may be null (an open before MPI_Init).
  explicit InsideCall(Runtime* runtime)
      : main_thread_io_(runtime ? runtime->preexec().gate() : nullptr),
        application_call_(runtime ? &runtime->application_time() : nullptr) {}
  InsideCall(const InsideCall&) = delete;
  InsideCall& operator=(const InsideCall&) = delete;

 private:
  MainThreadIo main_thread_io_;
  ApplicationCall application_call_;
};

}  // namespace stagio
