// The node cache's shared table across real MPI ranks: NodeSegment gives the ranks of each
// (real or pretend) node, as NodeMap finds them, one shared segment, and the table in it must
// behave as one cache per node on this MPI.
//
//   node_table_test [--pretend-node-size N]
//
// Checks, with every rank reaching storage through its own file descriptor:
//  1. the ranks of a node that read the same block at once read it from storage once per
//     node, not once per rank;
//  2. a rank reads what its node-mates wrote, straight from the shared memory, before any
//     write-back; after every rank flushed, storage holds every rank's writes;
//  3. random reads of every rank, with eviction, return the file's bytes.
// Exit status 0 if every check passed on every rank.
#include <fcntl.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/stats.h"
#include "node/node_map.h"
#include "node/node_segment.h"

namespace {

constexpr uint64_t kBlock = 8192;
constexpr uint64_t kFileBlocks = 32;

char PatternByte(uint64_t offset) { return static_cast<char>((offset * 89 + 3) % 241); }

class DiskBackend : public stagio::BlockBackend {
 public:
  explicit DiskBackend(int fd) : fd_(fd) {}
  stagio::Status ReadRange(uint64_t index, uint64_t offset_in_block, uint64_t length,
                           char* buffer, uint64_t* bytes_read) override {
    ++reads_;
    const ssize_t n = pread(fd_, buffer, length, static_cast<off_t>(index * kBlock + offset_in_block));
    if (n < 0) return stagio::Status::IOError("pread failed");
    *bytes_read = static_cast<uint64_t>(n);
    return stagio::Status::OK();
  }
  stagio::Status WriteRange(uint64_t index, uint64_t offset_in_block, const char* data,
                            uint64_t length) override {
    const ssize_t n = pwrite(fd_, data, length, static_cast<off_t>(index * kBlock + offset_in_block));
    return n == static_cast<ssize_t>(length) ? stagio::Status::OK()
                                             : stagio::Status::IOError("pwrite failed");
  }
  void RecordWriteBackError(const stagio::Status&) override {}
  stagio::FileStats* stats() override { return &stats_; }
  uint64_t reads() const { return reads_; }

 private:
  int fd_;
  uint64_t reads_ = 0;
  stagio::FileStats stats_;
};

int failures = 0;

void Check(bool ok, int rank, const std::string& what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int pretend_node_size = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--pretend-node-size") == 0) pretend_node_size = std::atoi(argv[i + 1]);
  }

  // The storage file, with a known pattern.
  char path[64] = "/tmp/stagio_node_table_mpi_XXXXXX";
  if (rank == 0) {
    const int fd = mkstemp(path);
    std::vector<char> content(kFileBlocks * kBlock);
    for (size_t i = 0; i < content.size(); ++i) content[i] = PatternByte(i);
    if (fd < 0 || pwrite(fd, content.data(), content.size(), 0) != static_cast<ssize_t>(content.size())) {
      std::fprintf(stderr, "cannot write %s\n", path);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    close(fd);
  }
  MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, MPI_COMM_WORLD);
  const int fd = open(path, O_RDWR);
  DiskBackend storage(fd);

  // The node map, as stagio learns it at MPI_Init, and each node's segment made without a
  // collective: the leader creates it, its node-mates attach.
  const stagio::NodeMap map = stagio::NodeMap::Learn(pretend_node_size);
  std::vector<int> world_ranks(static_cast<size_t>(size));
  for (int i = 0; i < size; ++i) world_ranks[i] = i;
  const stagio::NodeMates mates = map.MatesAmong(world_ranks);
  stagio::NodeSegment::Place place;
  place.name = stagio::NodeSegment::NameFor(map.job_tag(), mates.leader_world_rank, 0, 1);
  place.is_leader = mates.is_leader;
  place.node_size = static_cast<int>(mates.comm_ranks.size());
  // Four blocks per rank: at most half the file, so random reads evict.
  stagio::Status status;
  std::unique_ptr<stagio::NodeSegment> segment =
      stagio::NodeSegment::Create(place, kBlock, 4 * kBlock, &status);
  if (!segment) {
    std::fprintf(stderr, "rank %d: %s\n", rank, status.ToString().c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  // The node's ranks, for the test's own barriers.
  MPI_Comm node_comm = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, map.node_of(rank), rank, &node_comm);
  {
    // Every node-mate attached, so the name is gone: nothing outlives the job in /dev/shm.
    MPI_Barrier(MPI_COMM_WORLD);
    const std::string shm_path = "/dev/shm" + place.name;
    Check(access(shm_path.c_str(), F_OK) != 0, rank, shm_path + " is still there");
  }
  stagio::NodeBlockTable& table = segment->table();
  int nodes = segment->made_it() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (pretend_node_size > 0) {
    Check(segment->node_size() <= pretend_node_size, rank, "a pretend node larger than asked");
  }

  // 1. One storage read per node for a block all of the node's ranks read at once.
  std::vector<char> out(kBlock);
  MPI_Barrier(MPI_COMM_WORLD);
  Check(table.Read(storage, 2, 0, kBlock, out.data()).ok(), rank, "read of block 2");
  for (uint64_t i = 0; i < kBlock; ++i) {
    if (out[i] != PatternByte(2 * kBlock + i)) {
      Check(false, rank, "block 2 has wrong bytes");
      break;
    }
  }
  uint64_t reads = storage.reads();
  MPI_Allreduce(MPI_IN_PLACE, &reads, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  Check(reads == static_cast<uint64_t>(nodes), rank,
        "block 2 read from storage " + std::to_string(reads) + " times for " +
            std::to_string(nodes) + " nodes");

  // 2. Node-mates' writes are visible in the shared memory at once; storage gets all of them.
  const uint64_t slice = kBlock / static_cast<uint64_t>(size);
  const std::string mine(slice, static_cast<char>('a' + rank % 26));
  Check(table.Write(storage, 5, rank * slice, slice, mine.data()).ok(), rank, "write to block 5");
  MPI_Barrier(node_comm);
  Check(table.Read(storage, 5, 0, kBlock, out.data()).ok(), rank, "read of block 5");
  std::vector<int> node_world_ranks(static_cast<size_t>(segment->node_size()));
  MPI_Allgather(&rank, 1, MPI_INT, node_world_ranks.data(), 1, MPI_INT, node_comm);
  for (int mate : node_world_ranks) {
    Check(out[mate * slice] == static_cast<char>('a' + mate % 26), rank,
          "does not see the write of node-mate " + std::to_string(mate));
  }
  Check(table.FlushAll(storage).ok(), rank, "flush");
  MPI_Barrier(MPI_COMM_WORLD);
  for (int writer = 0; writer < size; ++writer) {
    char byte = 0;
    pread(fd, &byte, 1, static_cast<off_t>(5 * kBlock + writer * slice));
    Check(byte == static_cast<char>('a' + writer % 26), rank,
          "storage lacks the write of rank " + std::to_string(writer));
  }
  MPI_Barrier(MPI_COMM_WORLD);

  // 3. Random reads with eviction (block 5 was rewritten; the others hold the pattern).
  std::mt19937_64 random(static_cast<uint64_t>(rank) + 11);
  for (int i = 0; i < 2000 && failures == 0; ++i) {
    uint64_t block = random() % kFileBlocks;
    if (block == 5) continue;
    const uint64_t offset = random() % kBlock;
    const uint64_t length = 1 + random() % (kBlock - offset);
    const stagio::FetchScope scope =
        random() % 2 ? stagio::FetchScope::kWholeBlock : stagio::FetchScope::kRequestedBytes;
    Check(table.Read(storage, block, offset, length, out.data(), scope).ok(), rank, "random read");
    for (uint64_t b = 0; b < length; ++b) {
      if (out[b] != PatternByte(block * kBlock + offset + b)) {
        Check(false, rank, "random read of block " + std::to_string(block) + " has wrong bytes");
        break;
      }
    }
  }
  Check(table.frames() == 4u * static_cast<uint32_t>(segment->node_size()), rank,
        "the table is not four frames per rank of the node");
  Check(table.BlocksHeld() <= table.frames(), rank, "the table holds more blocks than frames");

  MPI_Barrier(node_comm);
  if (segment->made_it()) table.DiscardAll(storage);
  MPI_Barrier(node_comm);
  segment.reset();
  MPI_Comm_free(&node_comm);
  close(fd);
  int failed = failures;
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    unlink(path);
    std::printf("%s: %d node(s) of %d rank(s)%s\n", failed ? "FAILED" : "passed", nodes, size,
                pretend_node_size > 0 ? " (pretend nodes)" : "");
  }
  MPI_Finalize();
  return failed ? 1 : 0;
}
