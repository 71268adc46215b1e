// Finding a node's ranks (NodeMap) and making its shared segment without a collective
// (NodeSegment): the leader creates, node-mates attach in real processes (fork), the name is
// gone once all have attached, and a leader that fails or never comes does not hang anyone.
#include "node/node_segment.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/stats.h"
#include "node/node_budget.h"
#include "node/node_map.h"

namespace stagio {
namespace {

using std::chrono::milliseconds;

constexpr uint64_t kBlock = 4096;

// Storage nobody should reach: these tests write into the table and never flush.
class NoStorage : public BlockBackend {
 public:
  Status ReadRange(uint64_t, uint64_t, uint64_t, char*, uint64_t*) override {
    return Status::IOError("no storage here");
  }
  Status WriteRange(uint64_t, uint64_t, const char*, uint64_t) override {
    return Status::IOError("no storage here");
  }
  void RecordWriteBackError(const Status&) override {}
  FileStats* stats() override { return &stats_; }

 private:
  FileStats stats_;
};

std::vector<NodeKey> Keys(const std::vector<uint64_t>& node_of_rank) {
  std::vector<NodeKey> keys;
  for (uint64_t node : node_of_rank) keys.push_back(NodeKey{node, 7, 0xabc + keys.size()});
  return keys;
}

std::vector<int> Identity(int size) {
  std::vector<int> ranks;
  for (int i = 0; i < size; ++i) ranks.push_back(i);
  return ranks;
}

TEST(NodeMap, RanksThatSeeTheSameShmAreANode) {
  // Ranks 0, 2, 3 on one machine, 1 and 4 on another.
  const std::vector<NodeKey> keys = Keys({10, 20, 10, 10, 20});
  const NodeMap map(keys, 3, 0);
  EXPECT_EQ(map.node_of(0), 0);
  EXPECT_EQ(map.node_of(2), 0);
  EXPECT_EQ(map.node_of(3), 0);
  EXPECT_EQ(map.node_of(1), 1);
  EXPECT_EQ(map.node_of(4), 1);
  const NodeMates mates = map.MatesAmong(Identity(5));
  EXPECT_EQ(mates.comm_ranks, (std::vector<int>{0, 2, 3}));
  EXPECT_EQ(mates.leader_world_rank, 0);
  EXPECT_FALSE(mates.is_leader);
  // The job's tag is rank 0's nonce, the same on every rank.
  EXPECT_EQ(map.job_tag(), NodeMap(keys, 1, 0).job_tag());
}

TEST(NodeMap, SameKernelButAnotherShmMountIsAnotherNode) {
  std::vector<NodeKey> keys = Keys({10, 10});
  keys[1].shm_device = 8;  // a container with its own /dev/shm
  const NodeMap map(keys, 0, 0);
  EXPECT_NE(map.node_of(0), map.node_of(1));
}

TEST(NodeMap, PretendNodesCutEachNodeIntoConsecutiveRanks) {
  // One machine of 5 ranks in pretend nodes of 2: {0,1} {2,3} {4}.
  const std::vector<NodeKey> keys = Keys({1, 1, 1, 1, 1});
  EXPECT_EQ(NodeMap(keys, 3, 2).MatesAmong(Identity(5)).comm_ranks, (std::vector<int>{2, 3}));
  const NodeMates last = NodeMap(keys, 4, 2).MatesAmong(Identity(5));
  EXPECT_EQ(last.comm_ranks, (std::vector<int>{4}));
  EXPECT_TRUE(last.is_leader);
}

TEST(NodeMap, MatesAreRankedInTheFilesCommunicator) {
  // A file communicator of world ranks 4, 1, 3 (in that order); 1 and 3 share this node.
  const NodeMap map(Keys({5, 6, 5, 6, 5}), 3, 0);
  const NodeMates mates = map.MatesAmong({4, 1, 3});
  EXPECT_EQ(mates.comm_ranks, (std::vector<int>{1, 2}));
  EXPECT_EQ(mates.leader_world_rank, 1);
  EXPECT_FALSE(mates.is_leader);
}

class NodeSegmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = NodeSegment::NameFor("test" + std::to_string(getpid()), 0, serial_++, 7);
  }
  void TearDown() override { shm_unlink(name_.c_str()); }
  NodeSegment::Place Place(bool leader, int node_size) const {
    NodeSegment::Place place;
    place.name = name_;
    place.is_leader = leader;
    place.node_size = node_size;
    return place;
  }
  bool NameExists() const { return access(("/dev/shm" + name_).c_str(), F_OK) == 0; }

  static uint64_t serial_;
  std::string name_;
};
uint64_t NodeSegmentTest::serial_ = 0;

// Forked processes, each running `child(i)`; Succeeded waits for them.
class Children {
 public:
  template <typename Child>
  Children(int count, Child child) {
    for (int i = 0; i < count; ++i) {
      const pid_t pid = fork();
      if (pid == 0) _exit(child(i) ? 0 : 1);
      pids_.push_back(pid);
    }
  }
  // True if every child exited 0.
  bool Succeeded() {
    bool ok = true;
    for (pid_t pid : pids_) {
      int wstatus = 0;
      waitpid(pid, &wstatus, 0);
      ok = ok && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    }
    pids_.clear();
    return ok;
  }
  ~Children() { Succeeded(); }

 private:
  std::vector<pid_t> pids_;
};

TEST_F(NodeSegmentTest, NodeMatesAttachToTheLeadersTableAndTheNameGoes) {
  // Three node-mates start before the leader and wait for it; each writes 100 bytes of its own
  // block into the table, and the leader sees all of them in its view.
  Children mates(3, [&](int i) {
    Status status;
    auto mate = NodeSegment::Create(Place(false, 4), kBlock, 4 * kBlock, &status);
    if (!mate || mate->table().frames() != 16) return false;
    NoStorage storage;
    const std::string bytes(100, static_cast<char>('a' + i));
    return mate->table().Write(storage, static_cast<uint64_t>(i), 0, 100, bytes.data()).ok();
  });
  Status status;
  auto leader = NodeSegment::Create(Place(true, 4), kBlock, 4 * kBlock, &status);
  ASSERT_TRUE(leader) << status.ToString();
  EXPECT_TRUE(mates.Succeeded());
  EXPECT_EQ(leader->table().dirty_bytes(), 300u);
  NoStorage storage;
  char byte = 0;
  ASSERT_TRUE(leader->table().Read(storage, 2, 99, 1, &byte).ok());
  EXPECT_EQ(byte, 'c');
  EXPECT_FALSE(NameExists()) << "the last node-mate to attach removes the name";
}

TEST_F(NodeSegmentTest, TheNameStaysUntilEveryNodeMateHasAttached) {
  Status status;
  auto leader = NodeSegment::Create(Place(true, 3), kBlock, 4 * kBlock, &status);
  ASSERT_TRUE(leader) << status.ToString();
  EXPECT_TRUE(NameExists());
  Children mate(1, [&](int) {
    Status attach;
    return NodeSegment::Create(Place(false, 3), kBlock, 4 * kBlock, &attach) != nullptr;
  });
  EXPECT_TRUE(mate.Succeeded());
  EXPECT_TRUE(NameExists()) << "one node-mate has yet to attach";
  leader.reset();
  EXPECT_FALSE(NameExists()) << "the leader removes it when its segment goes";
}

TEST_F(NodeSegmentTest, ANodeMateGivesUpOnALeaderThatNeverComes) {
  Status status;
  const auto began = std::chrono::steady_clock::now();
  auto mate = NodeSegment::Create(Place(false, 2), kBlock, 4 * kBlock, &status, milliseconds(200));
  EXPECT_FALSE(mate);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("did not make"), std::string::npos) << status.message();
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(5));
}

TEST_F(NodeSegmentTest, ALeaderRefusesMoreMemoryThanDevShmHasAndItsNodeMateLearnsAtOnce) {
  // Memory a tmpfs cannot supply would kill a rank on first touch instead of failing here.
  // The node-mate waits with a long timeout: it must learn of the failure from the door.
  const uint64_t huge = uint64_t{1} << 50;
  Children mate(1, [&](int) {
    Status attach;
    const auto began = std::chrono::steady_clock::now();
    const bool failed =
        !NodeSegment::Create(Place(false, 2), kBlock, huge, &attach, milliseconds(20000));
    return failed && attach.message().find("could not make") != std::string::npos &&
           std::chrono::steady_clock::now() - began < std::chrono::seconds(5);
  });
  Status status;
  auto leader = NodeSegment::Create(Place(true, 2), kBlock, huge, &status);
  EXPECT_FALSE(leader);
  EXPECT_NE(status.message().find("/dev/shm has"), std::string::npos) << status.message();
  EXPECT_TRUE(mate.Succeeded()) << "the node-mate waited out its timeout";
  EXPECT_FALSE(NameExists()) << "the last rank to see the failed door removes the name";
}

// First comers: a name that goes away while a rank waits for its door (its maker closed a
// read-only file, which needs no collective) is made anew rather than waited for; and a rank
// that only wants to drop finds no name without waiting.
TEST_F(NodeSegmentTest, AFirstComerMakesTheSegmentAnewWhenTheNameItWaitsForGoes) {
  Status status;
  EXPECT_FALSE(NodeSegment::AttachIfThere(Place(false, 2), &status, milliseconds(20000)));
  EXPECT_TRUE(status.ok());
  // A name whose door never opens, removed while a first comer waits for it.
  const int fd = shm_open(name_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  close(fd);
  std::thread remover([this] {
    std::this_thread::sleep_for(milliseconds(50));
    shm_unlink(name_.c_str());
  });
  NodeSegment::Place place = Place(false, 2);
  place.first_comer_makes = true;
  bool created = false;
  // Without making it anew, this would give up after the timeout, with no segment.
  auto segment =
      NodeSegment::Create(place, kBlock, 4 * kBlock, &status, milliseconds(20000), &created);
  remover.join();
  ASSERT_TRUE(segment) << status.ToString();
  EXPECT_TRUE(segment->made_it());
  EXPECT_TRUE(created);
}

TEST_F(NodeSegmentTest, ATakenNameIsAnErrorNotSomeoneElsesMemory) {
  Status status;
  auto first = NodeSegment::Create(Place(true, 2), kBlock, 4 * kBlock, &status);
  ASSERT_TRUE(first);
  auto second = NodeSegment::Create(Place(true, 2), kBlock, 4 * kBlock, &status);
  EXPECT_FALSE(second);
  EXPECT_NE(status.message().find("cannot create"), std::string::npos) << status.message();
  EXPECT_TRUE(NameExists()) << "the failed leader removed the first segment's name";
}

TEST_F(NodeSegmentTest, ANodeMateMapsTheTableTheLeaderMadeWhateverItsOwnBudget) {
  Status status;
  auto leader = NodeSegment::Create(Place(true, 2), kBlock, 4 * kBlock, &status);
  ASSERT_TRUE(leader);
  Children mate(1, [&](int) {
    Status attach;
    auto view = NodeSegment::Create(Place(false, 2), kBlock, 16 * kBlock, &attach);
    return view && view->table().frames() == 8;
  });
  EXPECT_TRUE(mate.Succeeded());
}

TEST_F(NodeSegmentTest, ANodeMateSeesTheLeadersFailureWithoutWaitingOutTheTimeout) {
  // A door marked failed, as a leader leaves it when it cannot size or map the memory.
  const int fd = shm_open(name_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 64 * 1024), 0);
  const uint32_t failed[4] = {2, 1, 0, 0};  // failed, the leader counted
  ASSERT_EQ(pwrite(fd, failed, sizeof(failed), 0), static_cast<ssize_t>(sizeof(failed)));
  close(fd);
  Status status;
  const auto began = std::chrono::steady_clock::now();
  auto mate = NodeSegment::Create(Place(false, 2), kBlock, 4 * kBlock, &status, milliseconds(5000));
  EXPECT_FALSE(mate);
  EXPECT_NE(status.message().find("could not make"), std::string::npos) << status.message();
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(2));
  EXPECT_FALSE(NameExists()) << "the last node-mate to see the failed door removes the name";
}

TEST_F(NodeSegmentTest, TheLeaderCountsItsTableInTheNodesBudgetUntilItGoes) {
  const std::string account = NodeBudget::NameFor("test" + std::to_string(getpid()), 9);
  Status status;
  std::shared_ptr<NodeBudget> budget = NodeBudget::Attach(account, &status);
  ASSERT_TRUE(budget) << status.ToString();
  NodeSegment::Place place = Place(true, 1);
  place.budget = budget;
  auto leader = NodeSegment::Create(place, kBlock, 4 * kBlock, &status);
  ASSERT_TRUE(leader) << status.ToString();
  EXPECT_EQ(budget->tables(), 1u);
  NoStorage storage;
  const std::vector<char> bytes(kBlock, 'x');
  ASSERT_TRUE(leader->table().Write(storage, 2, 0, kBlock, bytes.data()).ok());
  EXPECT_EQ(budget->held_bytes(), kBlock);
  leader.reset();
  EXPECT_EQ(budget->tables(), 0u);
  EXPECT_EQ(budget->held_bytes(), 0u);
}

}  // namespace
}  // namespace stagio
