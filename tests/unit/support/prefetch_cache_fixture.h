// The fixture of the cache's prefetch and run-fetch tests: a BlockCache with one registered
// file over a ReadLoggingBackend whose storage holds a known pattern, and helpers that read,
// write and prefetch through the cache and check their status.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cache/block_cache.h"
#include "read_logging_backend.h"
#include "test_helpers.h"

namespace stagio {
namespace test_support {

class PrefetchCacheFixture : public ::testing::Test {
 protected:
  static constexpr uint64_t kBlock = 4096;
  static constexpr uint64_t kFile = 1;

  // A cache of `capacity_bytes` (fewer than 32 blocks: a single shard, so exact LRU), with one
  // file whose storage holds `storage_bytes` of a known pattern.
  void Init(uint64_t capacity_bytes, uint64_t storage_bytes) {
    original_ = Pattern(storage_bytes, 777);
    backend_ = MakeBackend(original_);
    cache_ = std::make_unique<BlockCache>(capacity_bytes, kBlock);
    cache_->RegisterFile(kFile, backend_, kBlock);
  }
  // The backend Init registers; a fixture that needs more observations derives its own.
  virtual std::shared_ptr<ReadLoggingBackend> MakeBackend(const std::vector<char>& content) {
    return std::make_shared<ReadLoggingBackend>(kBlock, content);
  }
  void TearDown() override {
    if (backend_) {
      EXPECT_FALSE(backend_->gate_timed_out()) << "a gated call was never released";
    }
  }

  uint64_t Epoch() { return cache_->InvalidationEpoch(kFile); }
  PrefetchResult Prefetch(uint64_t index) { return cache_->Prefetch(kFile, index, Epoch()); }
  std::string ReadString(uint64_t index, uint64_t offset, uint64_t length,
                         FetchScope scope = FetchScope::kWholeBlock) {
    std::string out(length, '\x5a');
    Status status = cache_->Read(kFile, index, offset, length, out.data(), scope);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return out;
  }
  void WriteString(uint64_t index, uint64_t offset, const std::string& bytes) {
    Status status = cache_->Write(kFile, index, offset, bytes.size(), bytes.data());
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  // Someone else (another rank) changes the storage file behind the cache.
  void WriteStorageBehindTheCache(uint64_t index, uint64_t offset, const std::string& bytes) {
    ASSERT_OK(backend_->WriteRange(index, offset, bytes.data(), bytes.size()));
  }
  uint64_t Stat(Counter counter) { return backend_->stats()->Get(counter); }

  std::vector<char> original_;
  std::shared_ptr<ReadLoggingBackend> backend_;
  std::unique_ptr<BlockCache> cache_;
};

}  // namespace test_support
}  // namespace stagio
