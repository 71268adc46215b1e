#include "common/stats.h"

#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace stagio {
namespace {

using json = nlohmann::json;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/stagio_stats_test.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf '" + path_ + "'").c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(StatsTest, CounterNamesComeFromTheList) {
  EXPECT_STREQ(CounterName(Counter::cache_hits), "cache_hits");
  EXPECT_STREQ(CounterName(Counter::dirty_bytes_flushed), "dirty_bytes_flushed");
  EXPECT_STREQ(CounterName(Counter::blocked_ns), "blocked_ns");
  std::set<std::string> names;
  for (size_t i = 0; i < static_cast<size_t>(Counter::kCount); ++i) {
    names.insert(CounterName(static_cast<Counter>(i)));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(Counter::kCount));  // distinct
}

TEST(StatsTest, CountersAddUp) {
  FileStats stats;
  EXPECT_EQ(stats.Get(Counter::cache_hits), 0u);
  stats.Add(Counter::cache_hits, 3);
  stats.Add(Counter::cache_hits, 4);
  stats.Add(Counter::storage_read_bytes, 1 << 20);
  EXPECT_EQ(stats.Get(Counter::cache_hits), 7u);
  EXPECT_EQ(stats.Get(Counter::storage_read_bytes), 1u << 20);
  EXPECT_EQ(stats.Get(Counter::cache_misses), 0u);
}

TEST(StatsTest, RecordCallGroupsByKind) {
  FileStats stats;
  stats.RecordCall("read_at_all", 100);
  stats.RecordCall("read_at_all", 50);
  stats.RecordCall("iwrite_c", 0);
  const json j = stats.ToJson();
  EXPECT_EQ(j["calls"]["read_at_all"]["calls"], 2u);
  EXPECT_EQ(j["calls"]["read_at_all"]["bytes"], 150u);
  EXPECT_EQ(j["calls"]["iwrite_c"]["calls"], 1u);
  EXPECT_EQ(j["calls"]["iwrite_c"]["bytes"], 0u);
  EXPECT_EQ(j["calls"].size(), 2u);
}

TEST(StatsTest, ToJsonHasEveryCounterByName) {
  FileStats stats;
  stats.Add(Counter::write_back_errors, 2);
  const json j = stats.ToJson();
  for (size_t i = 0; i < static_cast<size_t>(Counter::kCount); ++i) {
    const char* name = CounterName(static_cast<Counter>(i));
    ASSERT_TRUE(j.contains(name)) << name;
    EXPECT_TRUE(j[name].is_number_unsigned());
  }
  EXPECT_EQ(j["write_back_errors"], 2u);
  EXPECT_TRUE(j["calls"].is_object());
  EXPECT_EQ(j.size(), static_cast<size_t>(Counter::kCount) + 1);
}

TEST(StatsTest, MergeFromAddsCountersAndCalls) {
  FileStats a;
  FileStats b;
  a.Add(Counter::cache_hits, 1);
  a.RecordCall("write_at", 10);
  b.Add(Counter::cache_hits, 2);
  b.Add(Counter::cache_misses, 5);
  b.RecordCall("write_at", 20);
  b.RecordCall("read", 7);
  a.MergeFrom(b);
  EXPECT_EQ(a.Get(Counter::cache_hits), 3u);
  EXPECT_EQ(a.Get(Counter::cache_misses), 5u);
  const json j = a.ToJson();
  EXPECT_EQ(j["calls"]["write_at"]["calls"], 2u);
  EXPECT_EQ(j["calls"]["write_at"]["bytes"], 30u);
  EXPECT_EQ(j["calls"]["read"]["bytes"], 7u);
  EXPECT_EQ(b.Get(Counter::cache_hits), 2u);  // source unchanged

  a.MergeFrom(a);  // merging into itself is a no-op, not a deadlock
  EXPECT_EQ(a.Get(Counter::cache_hits), 3u);
}

TEST(StatsTest, JobStatsJsonShape) {
  JobStats job;
  FileStats first;
  first.Add(Counter::cache_hits, 4);
  first.RecordCall("read_at", 100);
  FileStats second;
  second.Add(Counter::cache_hits, 6);
  second.RecordCall("read_at", 50);
  FileStats other;
  other.Add(Counter::storage_writes, 1);
  other.RecordCall("write", 8);
  job.AddClosedFile("/data/a", first);
  job.AddClosedFile("/data/a", second);  // reopened: folds into the same entry
  job.AddClosedFile("/data/b", other);

  const json j = job.ToJson();
  ASSERT_TRUE(j["files"].is_object());
  EXPECT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["files"]["/data/a"]["cache_hits"], 10u);
  EXPECT_EQ(j["files"]["/data/a"]["calls"]["read_at"]["calls"], 2u);
  EXPECT_EQ(j["files"]["/data/b"]["storage_writes"], 1u);
  EXPECT_EQ(j["total"]["cache_hits"], 10u);
  EXPECT_EQ(j["total"]["storage_writes"], 1u);
  EXPECT_EQ(j["total"]["calls"]["read_at"]["bytes"], 150u);
  EXPECT_EQ(j["total"]["calls"]["write"]["bytes"], 8u);

  const json empty = JobStats().ToJson();
  EXPECT_TRUE(empty["files"].empty());
  EXPECT_EQ(empty["total"]["cache_hits"], 0u);
}

TEST(StatsTest, WriteJobStatsWritesTheJobDocument) {
  JobStats job;
  FileStats file;
  file.Add(Counter::cache_hits, 3);
  file.Add(Counter::cache_misses, 1);
  file.Add(Counter::dirty_bytes_flushed, 4096);
  file.RecordCall("write_at_all", 4096);
  file.RecordCall("read_at", 1024);
  job.AddClosedFile("/data/out", file);
  job.SetRun(2.5, "node17", {{"stagio_cache_size", "64M"}, {"stagio_node_cache", "auto"}});

  TempDir dir;
  const std::string path = dir.path() + "/stats.json";
  testing::internal::CaptureStdout();
  WriteJobStats(MPI_COMM_WORLD, job, path, /*summary=*/true);
  const std::string printed = testing::internal::GetCapturedStdout();

  const json document = json::parse(ReadFile(path), nullptr, false);
  ASSERT_FALSE(document.is_discarded());
  EXPECT_EQ(document["stagio_version"], STAGIO_VERSION_STRING);
  EXPECT_EQ(document["ranks"], 1);
  ASSERT_EQ(document["per_rank"].size(), 1u);
  EXPECT_EQ(document["per_rank"][0]["rank"], 0);
  EXPECT_EQ(document["per_rank"][0]["files"]["/data/out"]["cache_hits"], 3u);
  EXPECT_EQ(document["per_rank"][0]["total"]["cache_hits"], 3u);
  EXPECT_EQ(document["per_rank"][0]["run_s"], 2.5);
  EXPECT_EQ(document["per_rank"][0]["host"], "node17");
  EXPECT_FALSE(document["per_rank"][0].contains("settings"));  // once, at the top
  EXPECT_EQ(document["settings"]["stagio_cache_size"], "64M");
  EXPECT_EQ(document["settings"].size(), 2u);
  const json& total = document["total"];
  EXPECT_EQ(total["cache_hits"], 3u);
  EXPECT_EQ(total["dirty_bytes_flushed"], 4096u);
  EXPECT_EQ(total["calls"]["write_at_all"]["bytes"], 4096u);
  EXPECT_EQ(total["files"]["/data/out"]["cache_misses"], 1u);
  EXPECT_EQ(access((path + ".tmp").c_str(), F_OK), -1);  // renamed into place

  EXPECT_NE(printed.find("stagio: 1 read calls, 1.0 KiB read; 1 write calls, 4.0 KiB written"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("cache hit ratio 75.0%"), std::string::npos) << printed;
  EXPECT_NE(printed.find(path), std::string::npos) << printed;
  std::istringstream lines(printed);
  for (std::string line; std::getline(lines, line);) EXPECT_EQ(line.rfind("stagio:", 0), 0u);
}

TEST(StatsTest, WriteJobStatsWithoutPathOrSummaryIsQuiet) {
  JobStats job;
  testing::internal::CaptureStdout();
  WriteJobStats(MPI_COMM_WORLD, job, "", /*summary=*/false);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
}

TEST(StatsTest, UnwritablePathIsReportedNotFatal) {
  JobStats job;
  testing::internal::CaptureStderr();
  WriteJobStats(MPI_COMM_WORLD, job, "/nonexistent-dir/stats.json", /*summary=*/false);
  const std::string errors = testing::internal::GetCapturedStderr();
  EXPECT_NE(errors.find("stagio: "), std::string::npos);
  EXPECT_NE(errors.find("/nonexistent-dir/stats.json"), std::string::npos) << errors;
  EXPECT_NE(errors.find("No such file or directory"), std::string::npos) << errors;
}

}  // namespace
}  // namespace stagio
