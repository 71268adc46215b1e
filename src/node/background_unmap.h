// BackgroundUnmap: returns mappings to the kernel on a thread of its own, off the caller's path.
//
// The last process to unmap a node segment frees its pages: 110 ms for a full 232 MiB cache on
// the benchmark machine, which close would wait for, and every rank after it. Nothing needs the
// memory back at once. One thread per process does the unmapping, started at the first request
// and kept: a thread per close cost a thread creation each (a job that opens and closes a
// thousand small files paid for a thousand).
#pragma once

#include <cstddef>

namespace stagio {

// Unmaps [mapping, mapping + bytes) soon, on the process's unmapping thread; unmaps it at once
// if that thread cannot be started. The caller must not touch the mapping again.
void UnmapInBackground(void* mapping, size_t bytes);

}  // namespace stagio
