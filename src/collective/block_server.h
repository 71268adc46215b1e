// BlockServer: the thread that serves this rank's blocks to the other ranks of a file in
// collective-cache mode (seed 004, V-A: "the application accesses the client-side cache of
// other processes"). Every block has one owner; a rank that reads or writes a block it does not
// own sends the owner a request (block_protocol.h), and the owner's server answers it from its
// cache, fetching what is missing as a demand read would.
//
// Why a thread of its own rather than the I/O thread: the I/O thread spends whole storage
// requests on prefetches and write-back, and another rank's demand read must not queue behind
// them. The server calls MPI, so it exists only when MPI provides MPI_THREAD_MULTIPLE.
//
// The thread polls with MPI_Improbe, backing off to kMaxIdleSleep when nothing comes: a blocking
// receive would spin a core in MPICH, and these jobs run more ranks than cores. A request thus
// waits at most that long before it is seen. While no file is served (files in the node cache
// of one node need no server), the thread sleeps until one is.
//
// Threading: Serve and Forget are called on the application thread; Forget returns only after
// any request of that file being handled has been answered, and the server never touches the
// communicator again.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cache/block_cache.h"
#include "mpiio/file_backend.h"
#include "cache/io_thread.h"

namespace stagio {

class BlockServer {
 public:
  static constexpr std::chrono::microseconds kMaxIdleSleep{200};

  BlockServer(BlockCache* cache, IoThread* io_thread);
  ~BlockServer();
  BlockServer(const BlockServer&) = delete;
  BlockServer& operator=(const BlockServer&) = delete;

  // Starts answering requests for the file on `comm` (its private communicator).
  void Serve(MPI_Comm comm, uint64_t file_id, std::shared_ptr<FileBackend> backend);
  // Stops answering them.
  void Forget(MPI_Comm comm);

 private:
  struct ServedFile {
    MPI_Comm comm;
    uint64_t file_id;
    std::shared_ptr<FileBackend> backend;
  };

  void Run();
  // Receives and answers at most one request per file; true if there was any.
  bool PollOnce();
  void Handle(const ServedFile& file, const std::vector<char>& request, int source);

  BlockCache* cache_;
  IoThread* io_thread_;
  std::mutex mutex_;  // guards files_; held while a request is handled
  std::condition_variable has_files_;  // Serve added a file, or the server stops
  std::vector<ServedFile> files_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace stagio
