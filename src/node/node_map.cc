#include "node/node_map.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <utility>

namespace stagio {

namespace {

// The kernel's boot id, or the host name where /proc does not say: two processes with the
// same one run under the same kernel.
uint64_t KernelIdentity() {
  std::string id;
  std::ifstream boot_id("/proc/sys/kernel/random/boot_id");
  if (!std::getline(boot_id, id) || id.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    id = host;
  }
  return std::hash<std::string>{}(id);
}

}  // namespace

NodeKey LocalNodeKey() {
  NodeKey key;
  key.kernel = KernelIdentity();
  struct stat shm {};
  if (stat("/dev/shm", &shm) == 0) key.shm_device = static_cast<uint64_t>(shm.st_dev);
  std::random_device entropy;
  key.nonce = (static_cast<uint64_t>(entropy()) << 32) ^ entropy() ^
              static_cast<uint64_t>(getpid()) ^
              static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return key;
}

NodeMap NodeMap::Learn(int pretend_node_size) {
  static_assert(sizeof(NodeKey) == 3 * sizeof(uint64_t), "NodeKey travels as three uint64s");
  int world_rank = 0, world_size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const NodeKey mine = LocalNodeKey();
  std::vector<NodeKey> keys(static_cast<size_t>(world_size));
  PMPI_Allgather(&mine, 3, MPI_UINT64_T, keys.data(), 3, MPI_UINT64_T, MPI_COMM_WORLD);
  return NodeMap(keys, world_rank, pretend_node_size);
}

NodeMap::NodeMap(const std::vector<NodeKey>& keys, int world_rank, int pretend_node_size)
    : node_of_world_rank_(keys.size(), 0), world_rank_(world_rank) {
  // The world ranks that see each /dev/shm, ascending.
  std::map<std::pair<uint64_t, uint64_t>, std::vector<int>> ranks_of_node;
  for (size_t rank = 0; rank < keys.size(); ++rank) {
    ranks_of_node[{keys[rank].kernel, keys[rank].shm_device}].push_back(static_cast<int>(rank));
  }
  for (const auto& [key, ranks] : ranks_of_node) {
    const size_t group = pretend_node_size > 0 ? static_cast<size_t>(pretend_node_size)
                                               : ranks.size();
    for (size_t i = 0; i < ranks.size(); ++i) {
      node_of_world_rank_[ranks[i]] = ranks[i / group * group];
    }
  }
  char tag[17];
  std::snprintf(tag, sizeof(tag), "%016llx",
                static_cast<unsigned long long>(keys.empty() ? 0 : keys[0].nonce));
  job_tag_ = tag;
}

namespace {

// The world rank of every rank of `comm`; none if one is not in MPI_COMM_WORLD.
std::optional<std::vector<int>> WorldRanksOf(MPI_Comm comm, int world_size) {
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  PMPI_Comm_group(comm, &group);
  PMPI_Comm_group(MPI_COMM_WORLD, &world);
  int size = 0;
  PMPI_Group_size(group, &size);
  std::vector<int> comm_ranks(static_cast<size_t>(size)), world_ranks(comm_ranks.size());
  for (int i = 0; i < size; ++i) comm_ranks[i] = i;
  PMPI_Group_translate_ranks(group, size, comm_ranks.data(), world, world_ranks.data());
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  for (int rank : world_ranks) {
    if (rank == MPI_UNDEFINED || rank < 0 || rank >= world_size) return std::nullopt;
  }
  return world_ranks;
}

}  // namespace

std::optional<NodeMates> NodeMap::MatesIn(MPI_Comm comm) const {
  const std::optional<std::vector<int>> world_ranks = WorldRanksOf(comm, world_size());
  if (!world_ranks) return std::nullopt;
  return MatesAmong(*world_ranks);
}

std::optional<std::vector<int>> NodeMap::NodesIn(MPI_Comm comm) const {
  std::optional<std::vector<int>> nodes = WorldRanksOf(comm, world_size());
  if (!nodes) return std::nullopt;
  for (int& rank : *nodes) rank = node_of(rank);
  return nodes;
}

NodeMates NodeMap::MatesAmong(const std::vector<int>& world_rank_of_comm_rank) const {
  NodeMates mates;
  const int my_node = node_of(world_rank_);
  for (size_t i = 0; i < world_rank_of_comm_rank.size(); ++i) {
    if (node_of(world_rank_of_comm_rank[i]) == my_node) {
      mates.comm_ranks.push_back(static_cast<int>(i));
    }
  }
  if (!mates.comm_ranks.empty()) {
    mates.leader_world_rank = world_rank_of_comm_rank[mates.comm_ranks.front()];
    mates.is_leader = mates.leader_world_rank == world_rank_;
  }
  return mates;
}

}  // namespace stagio
