#include "common/config.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace stagio {
namespace {

// A fake environment: only the variables a test puts in it exist.
class FakeEnv {
 public:
  void Set(const std::string& name, const std::string& value) { vars_[name] = value; }
  EnvLookup Lookup() const {
    return [this](const char* name) -> const char* {
      const auto it = vars_.find(name);
      return it == vars_.end() ? nullptr : it->second.c_str();
    };
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& [name, value] : vars_) names.push_back(name);
    return names;
  }

 private:
  std::map<std::string, std::string> vars_;
};

// A file under a fresh temporary directory, removed at the end of the test.
class TempFile {
 public:
  TempFile() {
    char pattern[] = "/tmp/stagio_config_test.XXXXXX";
    dir_ = mkdtemp(pattern);
    path_ = dir_ + "/hints";
  }
  ~TempFile() {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  void Write(const std::string& text) {
    FILE* file = std::fopen(path_.c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs(text.c_str(), file);
    std::fclose(file);
  }
  const std::string& path() const { return path_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string path_;
};

// Every setting, formatted: equal strings mean equal settings.
std::string Describe(const Settings& settings) {
  std::string text;
  for (const std::string& key : KnownHintKeys()) {
    text += key + "=" + FormatSetting(settings, key) + "\n";
  }
  return text;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// True if some warning contains every one of `parts`.
bool AnyWarningHas(const std::vector<std::string>& warnings,
                   const std::vector<std::string>& parts) {
  for (const std::string& warning : warnings) {
    bool all = true;
    for (const std::string& part : parts) all = all && Contains(warning, part);
    if (all) return true;
  }
  return false;
}

TEST(ConfigTest, Defaults) {
  Settings settings;
  EXPECT_FALSE(settings.disable);
  EXPECT_TRUE(settings.cache_enabled);
  EXPECT_EQ(settings.block_size, 1u << 20);
  EXPECT_EQ(settings.cache_size, 64ull << 20);
  EXPECT_DOUBLE_EQ(settings.write_back_high, 6.25);
  EXPECT_DOUBLE_EQ(settings.write_back_low, 3.125);
  EXPECT_EQ(settings.driver, "posix");
  EXPECT_EQ(settings.stats_path, "");
  EXPECT_FALSE(settings.summary);

  FakeEnv env;
  std::vector<std::string> warnings;
  Settings loaded = LoadProcessSettings(env.Lookup(), env.Names(), &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(Describe(loaded), Describe(settings));
}

TEST(ConfigTest, DefaultsFormatted) {
  Settings settings;
  EXPECT_EQ(FormatSetting(settings, "stagio_disable"), "false");
  EXPECT_EQ(FormatSetting(settings, "stagio_cache"), "enable");
  EXPECT_EQ(FormatSetting(settings, "stagio_block_size"), "1M");
  EXPECT_EQ(FormatSetting(settings, "stagio_cache_size"), "64M");
  EXPECT_EQ(FormatSetting(settings, "stagio_wb_high"), "6.25");
  EXPECT_EQ(FormatSetting(settings, "stagio_wb_low"), "3.125");
  EXPECT_EQ(FormatSetting(settings, "stagio_driver"), "posix");
  EXPECT_EQ(FormatSetting(settings, "stagio_stats"), "");
  EXPECT_EQ(FormatSetting(settings, "stagio_summary"), "false");
  EXPECT_EQ(FormatSetting(settings, "stagio_nonsense"), "");
}

struct KeyCase {
  const char* key;
  const char* good_value;
  const char* formatted_good;  // FormatSetting after applying good_value
  const char* bad_value;
};

const KeyCase kKeyCases[] = {
    {"stagio_disable", "yes", "true", "maybe"},
    {"stagio_cache", "disable", "disable", "sometimes"},
    {"stagio_block_size", "64K", "64K", "abc"},
    {"stagio_cache_size", "0", "0", "-5M"},
    {"stagio_wb_high", "50%", "50", "150"},
    {"stagio_wb_low", "1.5", "1.5", "low"},
    {"stagio_driver", "fault", "fault", "lustre"},
    {"stagio_summary", "on", "true", "2"},
};

TEST(ConfigTest, EachKeyAcceptsAGoodValue) {
  for (const KeyCase& c : kKeyCases) {
    SCOPED_TRACE(c.key);
    Settings settings;
    std::string warning;
    EXPECT_TRUE(ApplySetting(c.key, c.good_value, "test", &settings, &warning));
    EXPECT_EQ(warning, "");
    EXPECT_EQ(FormatSetting(settings, c.key), c.formatted_good);
  }
}

TEST(ConfigTest, EachKeyRejectsABadValueAndKeepsTheOldOne) {
  for (const KeyCase& c : kKeyCases) {
    SCOPED_TRACE(c.key);
    Settings settings;
    ASSERT_TRUE(ApplySetting(c.key, c.good_value, "test", &settings, nullptr));
    const std::string before = Describe(settings);
    std::string warning;
    EXPECT_FALSE(ApplySetting(c.key, c.bad_value, "hints file /x line 3", &settings, &warning));
    EXPECT_EQ(Describe(settings), before);
    EXPECT_EQ(warning, std::string("invalid value '") + c.bad_value + "' for " + c.key +
                           " (from hints file /x line 3); using " + c.formatted_good);
  }
}

TEST(ConfigTest, InvalidBlockSizeWarningText) {
  Settings settings;
  std::string warning;
  EXPECT_FALSE(ApplySetting("stagio_block_size", "abc", "environment", &settings, &warning));
  EXPECT_EQ(warning, "invalid value 'abc' for stagio_block_size (from environment); using 1M");
  EXPECT_EQ(settings.block_size, 1u << 20);
}

TEST(ConfigTest, StatsPathTakesAnyStringAndEmptyTurnsItOff) {
  Settings settings;
  EXPECT_TRUE(ApplySetting("stagio_stats", "/tmp/out dir/stats.json", "test", &settings, nullptr));
  EXPECT_EQ(settings.stats_path, "/tmp/out dir/stats.json");
  EXPECT_TRUE(ApplySetting("stagio_stats", "", "test", &settings, nullptr));
  EXPECT_EQ(settings.stats_path, "");
}

TEST(ConfigTest, ValuesAreTrimmed) {
  Settings settings;
  EXPECT_TRUE(ApplySetting("stagio_block_size", "  2M \t", "test", &settings, nullptr));
  EXPECT_EQ(settings.block_size, 2u << 20);
}

TEST(ConfigTest, ParseByteSizeAcceptsDigitsAndSuffixes) {
  const struct {
    const char* text;
    uint64_t bytes;
  } kGood[] = {
      {"0", 0},
      {"4096", 4096},
      {"64K", 64 << 10},
      {"64k", 64 << 10},
      {"64KB", 64 << 10},
      {"64KiB", 64 << 10},
      {"64kib", 64 << 10},
      {"1M", 1 << 20},
      {"1mb", 1 << 20},
      {"1MiB", 1 << 20},
      {"2G", 2ull << 30},
      {"2GiB", 2ull << 30},
      {"512B", 512},
      {"007", 7},
      {"18446744073709551615", UINT64_MAX},
      {"17179869183G", 17179869183ull << 30},  // the largest whole number of GiB
  };
  for (const auto& c : kGood) {
    SCOPED_TRACE(c.text);
    uint64_t bytes = 12345;
    EXPECT_TRUE(ParseByteSize(c.text, &bytes));
    EXPECT_EQ(bytes, c.bytes);
  }
}

TEST(ConfigTest, ParseByteSizeRejectsGarbage) {
  const char* const kBad[] = {
      "",         "-1",       "+1",      " 1",    "1 ",  "K",   "M1",  "1.5M",
      "1T",       "1KK",      "1iB",     "1Kx",   "abc", "0x10", "1e6",
      "18446744073709551616",  // 2^64
      "17179869184G",          // 2^64 bytes
      "99999999999999999999999",
  };
  for (const char* text : kBad) {
    SCOPED_TRACE(text);
    uint64_t bytes = 12345;
    EXPECT_FALSE(ParseByteSize(text, &bytes));
    EXPECT_EQ(bytes, 12345u);  // untouched
  }
}

TEST(ConfigTest, BlockSizeBounds) {
  const struct {
    const char* text;
    bool ok;
  } kCases[] = {{"511", false}, {"512", true},    {"1G", true},
                {"1025M", false}, {"2G", false},  {"0", false}};
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.text);
    Settings settings;
    EXPECT_EQ(ApplySetting("stagio_block_size", c.text, "test", &settings, nullptr), c.ok);
  }
}

TEST(ConfigTest, BoolWords) {
  const char* const kTrue[] = {"1", "true", "TRUE", "yes", "Yes", "on", "ON", "enable", "Enable"};
  const char* const kFalse[] = {"0", "false", "False", "no", "NO", "off", "Off", "disable"};
  for (const char* text : kTrue) {
    SCOPED_TRACE(text);
    Settings settings;
    ASSERT_TRUE(ApplySetting("stagio_summary", text, "test", &settings, nullptr));
    EXPECT_TRUE(settings.summary);
  }
  for (const char* text : kFalse) {
    SCOPED_TRACE(text);
    Settings settings;
    settings.disable = true;
    ASSERT_TRUE(ApplySetting("stagio_disable", text, "test", &settings, nullptr));
    EXPECT_FALSE(settings.disable);
  }
  Settings settings;
  for (const char* bad : {"", "2", "y", "truthy", "enabled"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ApplySetting("stagio_cache", bad, "test", &settings, nullptr));
    EXPECT_TRUE(settings.cache_enabled);
  }
}

TEST(ConfigTest, Percent) {
  const struct {
    const char* text;
    double percent;
  } kGood[] = {{"50", 50}, {"50%", 50}, {"12.5", 12.5}, {"12.5%", 12.5},
               {"0", 0},   {"100", 100}, {".5", 0.5},   {"7.", 7}};
  for (const auto& c : kGood) {
    SCOPED_TRACE(c.text);
    Settings settings;
    ASSERT_TRUE(ApplySetting("stagio_wb_high", c.text, "test", &settings, nullptr));
    EXPECT_DOUBLE_EQ(settings.write_back_high, c.percent);
  }
  for (const char* bad : {"", "%", "101", "100.01", "-1", "1e2", "nan", "inf", "5%%", "1.2.3",
                          "abc", "0x10", "+5"}) {
    SCOPED_TRACE(bad);
    Settings settings;
    EXPECT_FALSE(ApplySetting("stagio_wb_high", bad, "test", &settings, nullptr));
    EXPECT_DOUBLE_EQ(settings.write_back_high, 6.25);
  }
}

TEST(ConfigTest, LowAboveHighIsClampedWithAWarning) {
  FakeEnv env;
  env.Set("STAGIO_WB_HIGH", "10");
  env.Set("STAGIO_WB_LOW", "20");
  std::vector<std::string> warnings;
  Settings settings = LoadProcessSettings(env.Lookup(), env.Names(), &warnings);
  EXPECT_DOUBLE_EQ(settings.write_back_high, 10);
  EXPECT_DOUBLE_EQ(settings.write_back_low, 10);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(AnyWarningHas(warnings, {"stagio_wb_low", "stagio_wb_high", "20", "10"}));

  // MPI_Info can break the order too; the same clamp applies there.
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "stagio_wb_high", "2");  // below the default low mark, 3.125
  std::vector<std::string> info_warnings;
  Settings from_info = ApplyInfo(Settings(), info, &info_warnings);
  MPI_Info_free(&info);
  EXPECT_DOUBLE_EQ(from_info.write_back_high, 2);
  EXPECT_DOUBLE_EQ(from_info.write_back_low, 2);
  EXPECT_EQ(info_warnings.size(), 1u);
}

TEST(ConfigTest, HintsFileWithCommentsAndBadLines) {
  TempFile hints;
  hints.Write(
      "# stagio hints\n"
      "\n"
      "stagio_block_size 256K   # trailing comment\n"
      "   stagio_cache_size\t8M\n"
      "stagio_summary\n"             // line 5: no value
      "romio_cb_write enable\n"      // line 6: not a stagio key
      "stagio_bogus 1\n"             // line 7: unknown stagio key
      "stagio_wb_high twenty\n"      // line 8: bad value
      "stagio_stats /tmp/a b.json\n"  // value is the rest of the line
      "   # indented comment\n");
  FakeEnv env;
  env.Set("STAGIO_HINTS", hints.path());
  std::vector<std::string> warnings;
  Settings settings = LoadProcessSettings(env.Lookup(), env.Names(), &warnings);
  EXPECT_EQ(settings.block_size, 256u << 10);
  EXPECT_EQ(settings.cache_size, 8u << 20);
  EXPECT_FALSE(settings.summary);
  EXPECT_DOUBLE_EQ(settings.write_back_high, 6.25);
  EXPECT_EQ(settings.stats_path, "/tmp/a b.json");

  EXPECT_EQ(warnings.size(), 4u);
  EXPECT_TRUE(AnyWarningHas(warnings, {hints.path(), "line 5", "stagio_summary"}));
  EXPECT_TRUE(AnyWarningHas(warnings, {hints.path(), "line 6", "romio_cb_write"}));
  EXPECT_TRUE(AnyWarningHas(warnings, {"unknown setting 'stagio_bogus'", hints.path(), "line 7"}));
  EXPECT_TRUE(AnyWarningHas(
      warnings, {"invalid value 'twenty' for stagio_wb_high", hints.path(), "line 8", "6.25"}));
}

TEST(ConfigTest, UnreadableHintsFileWarnsAndContinues) {
  TempFile dir;  // the file itself is never written, so it does not exist
  FakeEnv env;
  env.Set("STAGIO_HINTS", dir.path());
  env.Set("STAGIO_BLOCK_SIZE", "4K");
  std::vector<std::string> warnings;
  Settings settings = LoadProcessSettings(env.Lookup(), env.Names(), &warnings);
  EXPECT_EQ(settings.block_size, 4096u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(AnyWarningHas(warnings, {dir.path(), "No such file or directory"}));

  // A directory opens but cannot be read.
  env.Set("STAGIO_HINTS", dir.dir());
  warnings.clear();
  LoadProcessSettings(env.Lookup(), env.Names(), &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(AnyWarningHas(warnings, {dir.dir(), "is a directory"}));
}

// Paths that name no file at all: reading them would wait forever (a FIFO nobody writes) or
// never end (the devices). Each gets one warning saying what it is, at once, and the settings
// stay those of the other layers.
TEST(ConfigTest, HintsPathThatIsNoFileWarnsAtOnce) {
  TempFile fifo;
  ASSERT_EQ(mkfifo(fifo.path().c_str(), 0600), 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {fifo.path(), "is a FIFO"},
      {"/dev/zero", "is a character device"},
      {"/dev/urandom", "is a character device"}};
  for (const auto& [path, kind] : cases) {
    FakeEnv env;
    env.Set("STAGIO_HINTS", path);
    env.Set("STAGIO_BLOCK_SIZE", "4K");
    std::vector<std::string> warnings;
    const Settings settings = LoadProcessSettings(env.Lookup(), env.Names(), &warnings);
    EXPECT_EQ(settings.block_size, 4096u) << path;
    ASSERT_EQ(warnings.size(), 1u) << path;
    EXPECT_TRUE(AnyWarningHas(warnings, {"STAGIO_HINTS", path, kind, "ignored"})) << warnings[0];
  }
}

TEST(ConfigTest, PrecedenceDefaultsHintsFileEnvironmentInfo) {
  TempFile hints;
  hints.Write(
      "stagio_block_size 64K\n"
      "stagio_cache_size 8M\n"
      "stagio_wb_high 50\n"
      "stagio_driver fault\n");
  FakeEnv env;
  env.Set("STAGIO_HINTS", hints.path());
  env.Set("STAGIO_CACHE_SIZE", "16M");
  env.Set("STAGIO_WB_HIGH", "40");
  std::vector<std::string> warnings;
  Settings process = LoadProcessSettings(env.Lookup(), env.Names(), &warnings);
  EXPECT_TRUE(warnings.empty());

  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "stagio_wb_high", "30");
  MPI_Info_set(info, "cb_buffer_size", "4194304");  // ROMIO's: ignored, no warning
  Settings file = ApplyInfo(process, info, &warnings);
  MPI_Info_free(&info);
  EXPECT_TRUE(warnings.empty());

  EXPECT_EQ(file.block_size, 64u << 10);     // hints file
  EXPECT_EQ(file.cache_size, 16u << 20);     // environment over hints file
  EXPECT_DOUBLE_EQ(file.write_back_high, 30);  // MPI_Info over environment
  EXPECT_EQ(file.driver, "fault");           // hints file
  EXPECT_DOUBLE_EQ(file.write_back_low, 3.125);  // default
  EXPECT_DOUBLE_EQ(process.write_back_high, 40);  // base untouched
}

TEST(ConfigTest, ApplyInfoHandlesNullAndLongValues) {
  Settings base;
  base.block_size = 4096;
  std::vector<std::string> warnings;
  EXPECT_EQ(Describe(ApplyInfo(base, MPI_INFO_NULL, &warnings)), Describe(base));
  EXPECT_TRUE(warnings.empty());

  // A list of 100 ranks: 290 characters.
  std::string long_list;
  for (int rank = 0; rank < 100; ++rank) long_list += std::to_string(rank) + ",";
  long_list.pop_back();
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "stagio_aggregators", long_list.c_str());
  MPI_Info_set(info, "stagio_block_size", "huge");
  Settings settings = ApplyInfo(base, info, &warnings);
  MPI_Info_free(&info);
  EXPECT_EQ(settings.aggregators, long_list);
  EXPECT_EQ(settings.block_size, 4096u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "invalid value 'huge' for stagio_block_size (from MPI_Info); using 4K");
}

// Settings read at MPI_Init configure parts of stagio that already run when a file is opened:
// a hint cannot change them, and says so instead of pretending to.
TEST(ConfigTest, ApplyInfoIgnoresStartupSettings) {
  Settings base;
  base.iond = "unix:/run/stagio.sock";
  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "stagio_iond", "otherhost:7070");
  MPI_Info_set(info, "stagio_stats", "/tmp/stats.json");
  MPI_Info_set(info, "stagio_cache_size", "8M");  // process-wide, but applied when given
  std::vector<std::string> warnings;
  const Settings settings = ApplyInfo(base, info, &warnings);
  MPI_Info_free(&info);
  EXPECT_EQ(settings.iond, "unix:/run/stagio.sock");
  EXPECT_EQ(settings.stats_path, "");
  EXPECT_EQ(settings.cache_size, 8u << 20);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0], "stagio_iond is read once, at MPI_Init, from the environment or the "
                         "hints file; the value given in MPI_Info is ignored");
  EXPECT_TRUE(AnyWarningHas(warnings, {"stagio_stats is read once"}));
  EXPECT_EQ(ScopeOfSetting("stagio_iond"), SettingScope::kStartup);
  EXPECT_EQ(ScopeOfSetting("stagio_cache_size"), SettingScope::kProcess);
  EXPECT_EQ(ScopeOfSetting("stagio_block_size"), SettingScope::kFile);
}

// A program that copies what MPI_File_get_info returned into the info of another open hands
// back the startup settings with their values in force: no change is asked for, and nothing
// is said. Any other value still gets the warning.
TEST(ConfigTest, ApplyInfoIsSilentForStartupSettingsInForce) {
  Settings base;
  base.iond = "unix:/run/stagio.sock";
  MPI_Info info;
  MPI_Info_create(&info);
  for (const std::string& key : KnownHintKeys()) {
    const std::string value = FormatSetting(base, key);
    if (ScopeOfSetting(key) == SettingScope::kStartup && !value.empty()) {
      MPI_Info_set(info, key.c_str(), value.c_str());
    }
  }
  std::vector<std::string> warnings;
  ApplyInfo(base, info, &warnings);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  MPI_Info_set(info, "stagio_iond", "otherhost:7070");
  ApplyInfo(base, info, &warnings);
  MPI_Info_free(&info);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(AnyWarningHas(warnings, {"stagio_iond is read once"}));
}

TEST(ConfigTest, AggregatorRanksFormatAsTheyParse) {
  for (const std::vector<int>& ranks : std::vector<std::vector<int>>{{3}, {0, 1}, {0, 2, 5}}) {
    AggregatorSpec spec;
    const std::string text = FormatAggregatorRanks(ranks);
    ASSERT_TRUE(ParseAggregatorSpec(text, &spec)) << text;
    EXPECT_EQ(spec.ranks, ranks) << text;
  }
  EXPECT_EQ(FormatAggregatorRanks({3}), "3,");
  EXPECT_EQ(FormatAggregatorRanks({0, 2, 5}), "0,2,5");
}

TEST(ConfigTest, UnknownKeys) {
  Settings settings;
  std::string warning;
  EXPECT_FALSE(ApplySetting("stagio_foo", "1", "environment", &settings, &warning));
  EXPECT_EQ(warning, "unknown setting 'stagio_foo' (from environment); ignored");

  MPI_Info info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "stagio_blocksize", "1M");
  std::vector<std::string> warnings;
  ApplyInfo(settings, info, &warnings);
  MPI_Info_free(&info);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "unknown setting 'stagio_blocksize' (from MPI_Info); ignored");

  FakeEnv env;
  env.Set("STAGIO_BLOCKSIZE", "1M");
  env.Set("STAGIO_HINTS", "");  // known, and empty means no hints file
  env.Set("STAGIO_SUMMARY", "1");
  env.Set("OTHER_VARIABLE", "x");
  warnings.clear();
  Settings loaded = LoadProcessSettings(env.Lookup(), env.Names(), &warnings);
  EXPECT_TRUE(loaded.summary);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(AnyWarningHas(warnings, {"STAGIO_BLOCKSIZE"}));
}

TEST(ConfigTest, EmulatorVariablesAreNotStagios) {
  FakeEnv env;
  env.Set("STAGIO_EMU_DIR", "/tmp");
  env.Set("STAGIO_BLOKSIZE", "1M");
  std::vector<std::string> warnings;
  LoadProcessSettings(env.Lookup(), env.Names(), &warnings);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(AnyWarningHas(warnings, {"STAGIO_BLOKSIZE"}));
}

TEST(ConfigTest, EnvironmentWarningsNameTheVariable) {
  FakeEnv env;
  env.Set("STAGIO_DRIVER", "nfs");
  std::vector<std::string> warnings;
  Settings settings = LoadProcessSettings(env.Lookup(), env.Names(), &warnings);
  EXPECT_EQ(settings.driver, "posix");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(AnyWarningHas(warnings, {"'nfs'", "stagio_driver", "STAGIO_DRIVER", "using posix"}));
}

TEST(ConfigTest, PrefetchSettingsRejectWhatTheyCannotUse) {
  Settings settings;
  std::string warning;
  EXPECT_TRUE(ApplySetting("stagio_prefetch", "Individual", "test", &settings, &warning));
  EXPECT_EQ(settings.prefetch, "individual");
  EXPECT_FALSE(ApplySetting("stagio_prefetch", "together", "test", &settings, &warning));
  EXPECT_TRUE(Contains(warning, "stagio_prefetch")) << warning;
  EXPECT_EQ(settings.prefetch, "individual");
  EXPECT_FALSE(ApplySetting("stagio_history", "1", "test", &settings, &warning));
  EXPECT_FALSE(ApplySetting("stagio_history", "8K", "test", &settings, &warning));
  EXPECT_EQ(settings.history, 8u);
  EXPECT_TRUE(ApplySetting("stagio_history", " 12 ", "test", &settings, &warning));
  EXPECT_EQ(settings.history, 12u);
  EXPECT_FALSE(ApplySetting("stagio_prefetch_max", "lots", "test", &settings, &warning));
  EXPECT_TRUE(ApplySetting("stagio_prefetch_max", "4M", "test", &settings, &warning));
  EXPECT_FALSE(ApplySetting("stagio_wb_quiet", "-1", "test", &settings, &warning));
  EXPECT_FALSE(ApplySetting("stagio_wb_quiet", "soon", "test", &settings, &warning));
  EXPECT_DOUBLE_EQ(settings.write_back_quiet_ms, 2.0);
  EXPECT_TRUE(ApplySetting("stagio_wb_quiet", "0", "test", &settings, &warning));
  EXPECT_DOUBLE_EQ(settings.write_back_quiet_ms, 0.0);
  EXPECT_EQ(settings.prefetch_max, 4ull << 20);
}

TEST(ConfigTest, KnownKeysRoundTripThroughFormatAndApply) {
  Settings custom;
  custom.disable = true;
  custom.cache_enabled = false;
  custom.block_size = 3 * 4096 + 512;
  custom.cache_size = 5ull << 30;
  custom.write_back_high = 33.3;
  custom.write_back_low = 0.1;
  custom.driver = "fault";
  custom.write_back_quiet_ms = 2.5;
  custom.prefetch = "view";
  custom.history = 17;
  custom.prefetch_max = 3ull << 20;
  custom.stats_path = "/tmp/stats.json";
  custom.summary = true;
  custom.collective_cache = false;
  custom.node_cache = false;
  custom.node_size = 3;
  custom.aggregators = "0,3,5";
  custom.cb_buffer_size = 4ull << 20;
  custom.prefetch_threads = 7;
  custom.preexec = "pp";
  custom.direct = "alternate";
  custom.iond_timeout = 2.5;

  Settings rebuilt;
  ASSERT_EQ(KnownHintKeys().size(), 25u);
  for (const std::string& key : KnownHintKeys()) {
    SCOPED_TRACE(key);
    EXPECT_EQ(key.rfind("stagio_", 0), 0u);
    EXPECT_FALSE(DescribeSetting(key).empty());
    std::string warning;
    EXPECT_TRUE(ApplySetting(key, FormatSetting(custom, key), "round trip", &rebuilt, &warning))
        << warning;
  }
  EXPECT_EQ(Describe(rebuilt), Describe(custom));
  EXPECT_DOUBLE_EQ(rebuilt.write_back_high, 33.3);
  EXPECT_DOUBLE_EQ(rebuilt.write_back_low, 0.1);
}

TEST(ConfigTest, DirectPathModeIsOneOfFourWords) {
  Settings settings;
  std::string warning;
  EXPECT_EQ(settings.direct, "auto");
  EXPECT_TRUE(ApplySetting("stagio_direct", "Never", "test", &settings, &warning));
  EXPECT_EQ(settings.direct, "never");
  EXPECT_FALSE(ApplySetting("stagio_direct", "sometimes", "test", &settings, &warning));
  EXPECT_TRUE(Contains(warning, "stagio_direct")) << warning;
  EXPECT_EQ(settings.direct, "never");
  for (const char* mode : {"auto", "always", "alternate"}) {
    EXPECT_TRUE(ApplySetting("stagio_direct", mode, "test", &settings, &warning));
    EXPECT_EQ(settings.direct, mode);
  }
  EXPECT_EQ(ScopeOfSetting("stagio_direct"), SettingScope::kFile);
}

TEST(ConfigTest, AggregatorsAreAutoACountOrDistinctRanks) {
  AggregatorSpec spec;
  ASSERT_TRUE(ParseAggregatorSpec("auto", &spec));
  EXPECT_TRUE(spec.automatic);
  ASSERT_TRUE(ParseAggregatorSpec(" 4 ", &spec));
  EXPECT_FALSE(spec.automatic);
  EXPECT_EQ(spec.count, 4);
  EXPECT_TRUE(spec.ranks.empty());
  ASSERT_TRUE(ParseAggregatorSpec("0,2,5", &spec));
  EXPECT_EQ(spec.count, 0);
  EXPECT_EQ(spec.ranks, (std::vector<int>{0, 2, 5}));
  ASSERT_TRUE(ParseAggregatorSpec("3,", &spec));  // one rank, not a count of 3
  EXPECT_EQ(spec.count, 0);
  EXPECT_EQ(spec.ranks, (std::vector<int>{3}));
  for (const char* bad : {"", "0", "-1", "1,1", "1,,2", "a", "2.5", ",", "1;2"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseAggregatorSpec(bad, &spec));
  }
  Settings settings;
  std::string warning;
  EXPECT_FALSE(ApplySetting("stagio_aggregators", "0,0", "test", &settings, &warning));
  EXPECT_TRUE(Contains(warning, "stagio_aggregators")) << warning;
  EXPECT_EQ(settings.aggregators, "auto");
}

TEST(ConfigTest, EveryKnownKeyHasAnEnvironmentTwin) {
  for (const std::string& key : KnownHintKeys()) {
    SCOPED_TRACE(key);
    Settings custom;
    custom.disable = true;
    custom.cache_enabled = false;
    custom.block_size = 8192;
    custom.cache_size = 0;
    custom.write_back_high = 12;
    custom.write_back_low = 6;
    custom.driver = "fault";
    custom.stats_path = "/tmp/s.json";
    custom.summary = true;
    std::string name = "STAGIO_" + key.substr(7);
    for (char& c : name) c = static_cast<char>(toupper(c));
    FakeEnv env;
    env.Set(name, FormatSetting(custom, key));
    std::vector<std::string> warnings;
    Settings loaded = LoadProcessSettings(env.Lookup(), env.Names(), &warnings);
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(FormatSetting(loaded, key), FormatSetting(custom, key));
  }
}

TEST(ConfigTest, ProcessEnvironmentAndNames) {
  setenv("STAGIO_CONFIG_TEST_PROBE", "probe", 1);
  EXPECT_STREQ(ProcessEnvironment()("STAGIO_CONFIG_TEST_PROBE"), "probe");
  EXPECT_EQ(ProcessEnvironment()("STAGIO_CONFIG_TEST_ABSENT"), nullptr);
  bool found = false;
  for (const std::string& name : StagioEnvironmentNames()) {
    EXPECT_EQ(name.rfind("STAGIO_", 0), 0u);
    found = found || name == "STAGIO_CONFIG_TEST_PROBE";
  }
  EXPECT_TRUE(found);
  std::vector<std::string> warnings;
  LoadProcessSettings(ProcessEnvironment(), &warnings);
  EXPECT_TRUE(AnyWarningHas(warnings, {"STAGIO_CONFIG_TEST_PROBE"}));
  unsetenv("STAGIO_CONFIG_TEST_PROBE");
}

}  // namespace
}  // namespace stagio
