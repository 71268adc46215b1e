// SegmentStoreStats: what the segment store did, for the daemon's stats file and stagio's
// report. Reads are the storage reads that reached the store (the daemon's cache misses and
// prefetches); a hit took every byte from segments, a partial hit some.
#pragma once

#include <atomic>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace stagio {
namespace segstore {

struct SegmentStoreStats {
  std::atomic<uint64_t> reads{0};
  std::atomic<uint64_t> read_hits{0};
  std::atomic<uint64_t> read_partial_hits{0};
  std::atomic<uint64_t> read_misses{0};
  std::atomic<uint64_t> bytes_from_segments{0};
  std::atomic<uint64_t> bytes_from_storage{0};
  std::atomic<uint64_t> segment_cache_hits{0};  // a segment found in memory
  std::atomic<uint64_t> segment_loads{0};       // a segment read from the segment file
  std::atomic<uint64_t> segments_written{0};
  std::atomic<uint64_t> bytes_grouped{0};
  std::atomic<uint64_t> grouping_runs{0};    // finished
  std::atomic<uint64_t> grouping_yields{0};  // stopped for demand I/O
  std::atomic<uint64_t> grouping_retries{0};  // ended early: a file had changed; run again
  std::atomic<uint64_t> invalidated_segments{0};  // by writes, or a file changed behind
  std::atomic<uint64_t> evicted_segments{0};      // to make room on disk
  std::atomic<uint64_t> corrupt_segments{0};      // short or failing their checksum
  std::atomic<uint64_t> write_errors{0};
  // The reads once the store held a first group, and their hits: the hit rate of the passes
  // after the first (seed 002's "group hit rate" after its first pass).
  std::atomic<uint64_t> reads_after_first_group{0};
  std::atomic<uint64_t> read_hits_after_first_group{0};

  static void Add(std::atomic<uint64_t>& counter, uint64_t amount = 1) {
    counter.fetch_add(amount, std::memory_order_relaxed);
  }
  // The counters, with "group_hit_rate" (hits per read), "group_hit_rate_after_first_group"
  // and "byte_hit_rate" (bytes from segments per byte read) added.
  nlohmann::json ToJson() const {
    const auto rate = [](uint64_t part, uint64_t whole) {
      return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
    };
    const uint64_t bytes = bytes_from_segments.load() + bytes_from_storage.load();
    return {
        {"reads", reads.load()},
        {"read_hits", read_hits.load()},
        {"read_partial_hits", read_partial_hits.load()},
        {"read_misses", read_misses.load()},
        {"group_hit_rate", rate(read_hits.load(), reads.load())},
        {"bytes_from_segments", bytes_from_segments.load()},
        {"bytes_from_storage", bytes_from_storage.load()},
        {"byte_hit_rate", rate(bytes_from_segments.load(), bytes)},
        {"segment_cache_hits", segment_cache_hits.load()},
        {"segment_loads", segment_loads.load()},
        {"segments_written", segments_written.load()},
        {"bytes_grouped", bytes_grouped.load()},
        {"grouping_runs", grouping_runs.load()},
        {"grouping_yields", grouping_yields.load()},
        {"grouping_retries", grouping_retries.load()},
        {"invalidated_segments", invalidated_segments.load()},
        {"evicted_segments", evicted_segments.load()},
        {"corrupt_segments", corrupt_segments.load()},
        {"write_errors", write_errors.load()},
        {"reads_after_first_group", reads_after_first_group.load()},
        {"read_hits_after_first_group", read_hits_after_first_group.load()},
        {"group_hit_rate_after_first_group",
         rate(read_hits_after_first_group.load(), reads_after_first_group.load())},
    };
  }
};

}  // namespace segstore
}  // namespace stagio
