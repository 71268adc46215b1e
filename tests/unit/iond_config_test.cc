// stagio-iond's configuration: defaults, the config file, the command line and their
// precedence, and sets of invalid settings, each refused with a message naming the setting.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <sstream>
#include <string>
#include <vector>

#include "iond/command_line.h"
#include "iond/config.h"
#include "support/iond_fixture.h"

namespace stagio {
namespace iond {
namespace {

using iond_test::TempDir;
using iond_test::WriteFile;
using json = nlohmann::json;

class IondConfigTest : public ::testing::Test {
 protected:
  // Resolves with `file` as the config file "cfg.json" and `cli` as the command line; a root
  // is added to the command line unless either gives one.
  Status Resolve(json file, json cli, IondConfig* config, const char* env_token = nullptr) {
    ConfigSources sources;
    sources.file = std::move(file);
    sources.file_name = "cfg.json";
    sources.command_line = std::move(cli);
    if (!sources.file.is_object() || (!sources.file.contains("root") &&
                                      !sources.command_line.contains("root"))) {
      sources.command_line["root"] = dir_.path();
    }
    sources.env_token = env_token;
    return ResolveConfig(sources, config);
  }
  std::string Path(const std::string& name) const { return dir_.path() + "/" + name; }

  TempDir dir_;
};

TEST_F(IondConfigTest, TheSegmentStoreIsOffUntilNamedAndFollowsSeed002) {
  IondConfig config;
  ASSERT_OK(Resolve(json::object(), json::object(), &config));
  EXPECT_TRUE(config.segstore.empty());
  EXPECT_EQ(config.segstore_segment_size, uint64_t{16} << 20);
  EXPECT_EQ(config.segstore_idle, 5.0);
  EXPECT_TRUE(ConfigToJson(config)["segstore"].is_null());
  // From the file, with the command line on top; --print-config shows them and loads back.
  ASSERT_OK(Resolve({{"segstore", "/scratch/segments"}, {"segstore_size", "4G"},
                     {"segstore_popularity_j", 2}},
                    {{"segstore_segment_size", "1M"}, {"segstore_idle", "0.5s"},
                     {"segstore_popularity_k", "8"}, {"segstore_cache", "1M"}},
                    &config));
  EXPECT_EQ(config.segstore, "/scratch/segments");
  EXPECT_EQ(config.segstore_size, uint64_t{4} << 30);
  EXPECT_EQ(config.segstore_segment_size, uint64_t{1} << 20);
  EXPECT_EQ(config.segstore_cache, uint64_t{1} << 20);
  EXPECT_EQ(config.segstore_popularity_j, 2u);
  EXPECT_EQ(config.segstore_popularity_k, 8u);
  EXPECT_EQ(config.segstore_idle, 0.5);
  json shown = ConfigToJson(config);
  shown.erase("token");
  IondConfig again;
  ASSERT_OK(Resolve(shown, json::object(), &again));
  EXPECT_EQ(ConfigToJson(again), ConfigToJson(config));
}

TEST_F(IondConfigTest, BadSegmentStoreSettingsAreNamed) {
  IondConfig config;
  Status status = Resolve(json::object(), {{"segstore_popularity_j", "5"},
                                           {"segstore_popularity_k", "4"}}, &config);
  EXPECT_NE(status.message().find("segstore_popularity_j (5) is above segstore_popularity_k (4)"),
            std::string::npos) << status.message();
  status = Resolve(json::object(), {{"segstore_segment_size", "1K"}}, &config);
  EXPECT_NE(status.message().find("--segstore-segment-size: expected a size from 4096"),
            std::string::npos) << status.message();
  status = Resolve({{"segstore_idle", 0}}, json::object(), &config);
  EXPECT_NE(status.message().find("segstore_idle in config file cfg.json"), std::string::npos)
      << status.message();
  status = Resolve(json::object(), {{"segstore_cache", "1M"}}, &config);
  EXPECT_NE(status.message().find("segstore_cache (1048576 bytes) is smaller than one segment"),
            std::string::npos) << status.message();
  status = Resolve(json::object(),
                   {{"segstore_size", "35184372088832"}, {"segstore_segment_size", "4K"}},
                   &config);
  EXPECT_NE(status.message().find("segments of 4096 bytes: give a larger"), std::string::npos)
      << status.message();
  status = Resolve({{"segstore", ""}}, json::object(), &config);
  EXPECT_NE(status.message().find("expected a path"), std::string::npos) << status.message();
}

TEST_F(IondConfigTest, DefaultsFollowSeed004) {
  IondConfig config;
  ASSERT_OK(Resolve(json::object(), json::object(), &config));
  ASSERT_EQ(config.listen.size(), 1u);
  EXPECT_EQ(config.listen[0].ToString(), "127.0.0.1:7070");
  EXPECT_EQ(config.cache_size, uint64_t{512} << 20);
  EXPECT_EQ(config.block_size, uint64_t{1} << 20);
  EXPECT_EQ(config.write_back_high, 0.0);
  EXPECT_EQ(config.write_back_low, 0.0);
  EXPECT_EQ(config.prefetch_blocks, 4u);
  EXPECT_EQ(config.io_threads, 4u);
  EXPECT_EQ(config.request_threads, 8u);
  EXPECT_EQ(config.hello_timeout, 10.0);
  EXPECT_EQ(config.hello_max_bytes, 4096u);
  EXPECT_EQ(config.max_unauthenticated, 128u);
  EXPECT_EQ(config.max_connections, 4096u);
  EXPECT_TRUE(config.token.empty());
  EXPECT_EQ(ConfigToJson(config)["token"], "unset");
}

TEST_F(IondConfigTest, FileValuesAndCommandLineOverrides) {
  const json file = {{"listen", {"unix:/tmp/a.sock", "127.0.0.1:0"}},
                     {"cache_size", "64M"},
                     {"block_size", 65536},
                     {"write_back_high", 50},
                     {"write_back_low", 12.5},
                     {"prefetch_blocks", 0},
                     {"io_threads", 2},
                     {"request_threads", "3"},
                     {"stats", "/tmp/s.json"},
                     {"ready_file", nullptr},
                     {"hello_timeout", 2.5},
                     {"hello_max_bytes", "8K"},
                     {"max_unauthenticated", 16},
                     {"max_connections", 100}};
  const json cli = {{"cache_size", "1G"},
                    {"write_back_high", "75%"},
                    {"listen", {"[::1]:9"}},
                    {"hello_timeout", "0.5s"},
                    {"max_connections", "300"}};
  IondConfig config;
  ASSERT_OK(Resolve(file, cli, &config));
  ASSERT_EQ(config.listen.size(), 1u);  // the command line's list replaces the file's
  EXPECT_EQ(config.listen[0].ToString(), "[::1]:9");
  EXPECT_EQ(config.cache_size, uint64_t{1} << 30);
  EXPECT_EQ(config.block_size, 65536u);
  EXPECT_EQ(config.write_back_high, 75.0);
  EXPECT_EQ(config.write_back_low, 12.5);
  EXPECT_EQ(config.prefetch_blocks, 0u);
  EXPECT_EQ(config.io_threads, 2u);
  EXPECT_EQ(config.request_threads, 3u);
  EXPECT_EQ(config.stats, "/tmp/s.json");
  EXPECT_TRUE(config.ready_file.empty());
  EXPECT_EQ(config.hello_timeout, 0.5);
  EXPECT_EQ(config.hello_max_bytes, 8192u);
  EXPECT_EQ(config.max_unauthenticated, 16u);
  EXPECT_EQ(config.max_connections, 300u);
}

TEST_F(IondConfigTest, PrintedConfigurationLoadsBack) {
  IondConfig config;
  ASSERT_OK(Resolve({{"cache_size", "3M"}, {"write_back_high", 6.25}}, json::object(), &config));
  json printed = ConfigToJson(config);
  EXPECT_EQ(printed["cache_size"], 3u << 20);
  EXPECT_EQ(printed["hello_timeout"], 10.0);
  EXPECT_EQ(printed["hello_max_bytes"], 4096u);
  EXPECT_EQ(printed["max_unauthenticated"], 128u);
  EXPECT_EQ(printed["max_connections"], 4096u);
  EXPECT_EQ(printed["root"], config.root);
  printed.erase("token");  // shown as set/unset only; the secret comes from a file or the env
  IondConfig again;
  ASSERT_OK(Resolve(printed, json::object(), &again));
  EXPECT_EQ(ConfigToJson(again), ConfigToJson(config));
}

TEST_F(IondConfigTest, TokenFromFileOrEnvironment) {
  WriteFile(Path("token"), "s3cret\n");
  IondConfig config;
  ASSERT_OK(Resolve({{"token_file", Path("token")}}, {{"listen", {"0.0.0.0:0"}}}, &config,
                    "from-env"));
  EXPECT_EQ(config.token, "s3cret");  // the file wins, without its newline
  EXPECT_EQ(ConfigToJson(config)["token"], "set");
  EXPECT_EQ(ConfigToJson(config).dump().find("s3cret"), std::string::npos);

  ASSERT_OK(Resolve(json::object(), {{"listen", {"0.0.0.0:0"}}}, &config, "from-env\r\n"));
  EXPECT_EQ(config.token, "from-env");
}

struct BadCase {
  const char* name;
  json file;
  json cli;
  std::string expected;  // part of the error message
};

TEST_F(IondConfigTest, InvalidConfigurationsNameTheSetting) {
  WriteFile(Path("empty_token"), "\n");
  WriteFile(Path("large_token"), std::string(2000, 't'));
  WriteFile(Path("plain_file"), "x");
  WriteFile(Path("long_token"), std::string(1000, 'k'));
  const std::vector<BadCase> cases = {
      {"file is not an object", json::array({1}), json::object(), "expected a JSON object"},
      {"unknown key", {{"cache_sise", "1M"}}, json::object(),
       "config file cfg.json: unknown key 'cache_sise'"},
      {"negative size", {{"cache_size", -1}}, json::object(),
       "cache_size in config file cfg.json: expected a positive size in bytes"},
      {"zero size", json::object(), {{"cache_size", "0"}}, "--cache-size: expected a positive"},
      {"size with a bad suffix", json::object(), {{"cache_size", "12Q"}}, "got \"12Q\""},
      {"fractional size", {{"cache_size", 1.5}}, json::object(), "expected a positive size"},
      {"block too small", json::object(), {{"block_size", "100"}},
       "--block-size: expected a size from 512 to 1073741824 bytes"},
      {"cache below a block", {{"cache_size", "1K"}, {"block_size", "4K"}}, json::object(),
       "cache_size (1024 bytes) is smaller than one block"},
      {"percent above 100", {{"write_back_high", 101}}, json::object(),
       "write_back_high in config file cfg.json: expected a percentage from 0 to 100, got 101"},
      {"negative percent", json::object(), {{"write_back_low", "-1"}},
       "--write-back-low: expected a percentage"},
      {"percent not a number", json::object(), {{"write_back_high", "nan"}},
       "--write-back-high: expected a percentage"},
      {"low above high", {{"write_back_high", 5}, {"write_back_low", 10}}, json::object(),
       "write_back_low (10.0%) is above write_back_high (5.0%)"},
      {"zero io threads", {{"io_threads", 0}}, json::object(),
       "io_threads in config file cfg.json: expected a whole number from 1 to 64, got 0"},
      {"fractional threads", json::object(), {{"request_threads", "4.5"}},
       "--request-threads: expected a whole number from 1 to 256"},
      {"boolean count", {{"prefetch_blocks", true}}, json::object(), "prefetch_blocks in"},
      {"too many prefetch blocks", json::object(), {{"prefetch_blocks", "5000"}},
       "from 0 to 1024"},
      {"address without port", json::object(), {{"listen", {"nohost"}}}, "'nohost': no port"},
      {"empty listen list", {{"listen", json::array()}}, json::object(),
       "listen in config file cfg.json: expected a list of addresses"},
      {"address not a string", {{"listen", {7070}}}, json::object(), "expected an address"},
      {"root not a string", {{"root", 3}}, json::object(), "root in config file cfg.json"},
      {"missing root directory", json::object(), {{"root", "/nonexistent/stagio"}},
       "root: root directory /nonexistent/stagio"},
      {"root is a file", json::object(), {{"root", Path("plain_file")}}, "not a directory"},
      {"open listener without token", json::object(), {{"listen", {"0.0.0.0:7070"}}},
       "listener 0.0.0.0:7070 can be reached from other machines, and no token is set"},
      {"unreadable token file", {{"token_file", Path("missing_token")}}, json::object(),
       "token_file: token file " + Path("missing_token") + ": No such file or directory"},
      // Names of no file must not hang the daemon's start or fill its memory.
      {"token file is a device", {{"token_file", "/dev/zero"}}, json::object(),
       "token_file: token file /dev/zero is a character device, not a file"},
      {"token file too large", json::object(), {{"token_file", Path("large_token")}},
       "holds more than 1024 bytes"},
      {"empty token file", json::object(), {{"token_file", Path("empty_token")}}, "is empty"},
      {"no Hello deadline", json::object(), {{"hello_timeout", "0"}},
       "--hello-timeout: expected a number of seconds from 0.1 to 3600, got \"0\""},
      {"Hello deadline not a number", {{"hello_timeout", "ten"}}, json::object(),
       "hello_timeout in config file cfg.json: expected a number of seconds"},
      {"Hello deadline too long", {{"hello_timeout", 86400}}, json::object(),
       "from 0.1 to 3600, got 86400"},
      {"Hello limit too small", json::object(), {{"hello_max_bytes", "100"}},
       "--hello-max-bytes: expected a size from 512 to 1048576 bytes"},
      {"Hello limit too large", {{"hello_max_bytes", "64M"}}, json::object(),
       "hello_max_bytes in config file cfg.json: expected a size from 512"},
      {"Hello limit below the token", {{"hello_max_bytes", 512}},
       {{"token_file", Path("long_token")}},
       "hello_max_bytes (512 bytes) cannot hold a client's Hello with this token"},
      {"no unauthenticated connections", {{"max_unauthenticated", 0}}, json::object(),
       "max_unauthenticated in config file cfg.json: expected a whole number from 1 to 65536, "
       "got 0"},
      {"too many connections", json::object(), {{"max_connections", "100000"}},
       "--max-connections: expected a whole number from 1 to 65536"},
      {"connections not a number", json::object(), {{"max_connections", "many"}},
       "--max-connections: expected a whole number"},
  };
  for (const BadCase& bad : cases) {
    SCOPED_TRACE(bad.name);
    IondConfig config;
    const Status status = Resolve(bad.file, bad.cli, &config);
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.message().find(bad.expected), std::string::npos) << status.message();
  }
  IondConfig config;
  ConfigSources no_root;
  const Status status = ResolveConfig(no_root, &config);
  EXPECT_NE(status.message().find("no root directory: give --root DIR"), std::string::npos)
      << status.message();
}

// ---- The command line.

int Parse(std::vector<const char*> args, CommandLine* line, std::string* out = nullptr,
          std::string* err = nullptr) {
  args.insert(args.begin(), "stagio-iond");
  std::ostringstream out_stream;
  std::ostringstream err_stream;
  const int status = ParseCommandLine(static_cast<int>(args.size()), args.data(), line,
                                      out_stream, err_stream);
  if (out) *out = out_stream.str();
  if (err) *err = err_stream.str();
  return status;
}

TEST_F(IondConfigTest, CommandLineCollectsGivenOptionsByKey) {
  CommandLine line;
  ASSERT_EQ(Parse({"--listen", "unix:/tmp/x.sock", "--listen", "127.0.0.1:0", "--root", "/r",
                   "--cache-size", "2G", "--write-back-high", "6.25", "--print-config",
                   "--config", "c.json", "--hello-timeout", "3", "--hello-max-bytes", "2K",
                   "--max-unauthenticated", "64", "--max-connections", "512"},
                  &line),
            -1);
  EXPECT_EQ(line.settings["hello_timeout"], "3");
  EXPECT_EQ(line.settings["hello_max_bytes"], "2K");
  EXPECT_EQ(line.settings["max_unauthenticated"], "64");
  EXPECT_EQ(line.settings["max_connections"], "512");
  EXPECT_EQ(line.settings["listen"], json({"unix:/tmp/x.sock", "127.0.0.1:0"}));
  EXPECT_EQ(line.settings["cache_size"], "2G");
  EXPECT_EQ(line.settings["write_back_high"], "6.25");
  EXPECT_EQ(line.settings["root"], "/r");
  EXPECT_FALSE(line.settings.contains("block_size")) << "options not given are left out";
  EXPECT_TRUE(line.print_config);
  EXPECT_EQ(line.config_file, "c.json");
}

TEST_F(IondConfigTest, CommandLineHelpAndUsageErrors) {
  CommandLine line;
  std::string out;
  std::string err;
  EXPECT_EQ(Parse({"--help"}, &line, &out), 0);
  for (const ConfigKey& key : ConfigKeys()) {
    EXPECT_NE(out.find(OptionName(key.key)), std::string::npos) << key.key;
  }
  EXPECT_EQ(Parse({"--cache-sise", "1M"}, &line, nullptr, &err), 2);
  EXPECT_NE(err.find("--cache-sise"), std::string::npos) << err;
  EXPECT_EQ(Parse({"--root"}, &line, nullptr, &err), 2);
}

TEST_F(IondConfigTest, LoadConfigReadsTheFileAndLetsTheCommandLineWin) {
  WriteFile(Path("cfg.json"),
            "{\"root\": \"" + dir_.path() + "\", \"io_threads\": 3, \"request_threads\": 5}");
  CommandLine line;
  ASSERT_EQ(Parse({"--config", "", "--io-threads", "7"}, &line), -1);
  line.config_file = Path("cfg.json");
  IondConfig config;
  ASSERT_OK(LoadConfig(line, nullptr, &config));
  EXPECT_EQ(config.io_threads, 7u);
  EXPECT_EQ(config.request_threads, 5u);

  WriteFile(Path("broken.json"), "{\"root\": ");
  line.config_file = Path("broken.json");
  Status status = LoadConfig(line, nullptr, &config);
  EXPECT_NE(status.message().find("broken.json: not valid JSON"), std::string::npos)
      << status.message();
  line.config_file = Path("absent.json");
  status = LoadConfig(line, nullptr, &config);
  EXPECT_NE(status.message().find("absent.json: No such file or directory"), std::string::npos)
      << status.message();
  // A FIFO nobody writes: refused at once instead of waiting for a writer.
  ASSERT_EQ(::mkfifo(Path("fifo.json").c_str(), 0600), 0);
  line.config_file = Path("fifo.json");
  status = LoadConfig(line, nullptr, &config);
  EXPECT_NE(status.message().find("fifo.json is a FIFO, not a file"), std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace iond
}  // namespace stagio
