// Parsing the emulator's environment variables: strict numbers, clear reasons, exact round trips.
#include "emu_env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

namespace stagio::emu {
namespace {

TEST(EmuEnv, ParsesEachParameter) {
  DeviceParams params;
  EXPECT_EQ(SetDeviceParam(&params, DeviceParam::kLatencyMs, "0.25"), nullptr);
  EXPECT_EQ(SetDeviceParam(&params, DeviceParam::kBandwidthMbps, "1e3"), nullptr);
  EXPECT_EQ(SetDeviceParam(&params, DeviceParam::kParallel, " 16 "), nullptr);
  EXPECT_EQ(SetDeviceParam(&params, DeviceParam::kSeekMs, "1.5"), nullptr);
  EXPECT_EQ(params.seek_ms, 1.5);
  EXPECT_EQ(params.latency_ms, 0.25);
  EXPECT_EQ(params.bandwidth_mbps, 1000);
  EXPECT_EQ(params.parallel, 16);
}

TEST(EmuEnv, RejectsTextThatIsNotWhollyANumber) {
  DeviceParams params;
  EXPECT_STREQ(SetDeviceParam(&params, DeviceParam::kLatencyMs, "abc"), "not a number");
  EXPECT_STREQ(SetDeviceParam(&params, DeviceParam::kLatencyMs, "5ms"), "not a number");
  EXPECT_STREQ(SetDeviceParam(&params, DeviceParam::kBandwidthMbps, ""), "not a number");
  EXPECT_STREQ(SetDeviceParam(&params, DeviceParam::kParallel, "8.5"), "not a whole number");
  EXPECT_STREQ(SetDeviceParam(&params, DeviceParam::kParallel, "99999999999999"),
               "not a whole number");
  EXPECT_EQ(params.latency_ms, DeviceParams().latency_ms);  // unchanged on failure
  EXPECT_EQ(params.parallel, DeviceParams().parallel);
}

TEST(EmuEnv, RejectsNumbersOutOfRangeWithTheRange) {
  DeviceParams params;
  const char* why = SetDeviceParam(&params, DeviceParam::kParallel, "65");
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why).find("1 to 64"), std::string::npos);
  why = SetDeviceParam(&params, DeviceParam::kLatencyMs, "-1");
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why).find("latency"), std::string::npos);
  why = SetDeviceParam(&params, DeviceParam::kBandwidthMbps, "0");
  ASSERT_NE(why, nullptr);
  EXPECT_NE(std::string(why).find("bandwidth"), std::string::npos);
  EXPECT_NE(SetDeviceParam(&params, DeviceParam::kLatencyMs, "nan"), nullptr);
  EXPECT_NE(SetDeviceParam(&params, DeviceParam::kBandwidthMbps, "inf"), nullptr);
}

TEST(EmuEnv, FormattedValuesReadBackExactly) {
  DeviceParams params;
  params.latency_ms = 0.1;
  params.bandwidth_mbps = 1.0 / 3.0;
  params.parallel = 7;
  for (DeviceParam param : kAllDeviceParams) {
    char text[64];
    FormatDeviceParam(params, param, text, sizeof(text));
    DeviceParams reread;
    ASSERT_EQ(SetDeviceParam(&reread, param, text), nullptr) << text;
    EXPECT_EQ(reread.latency_ms, param == DeviceParam::kLatencyMs ? 0.1 : 5.0);
  }
  char text[64];
  FormatDeviceParam(params, DeviceParam::kLatencyMs, text, sizeof(text));
  EXPECT_STREQ(text, "0.1");  // the short form when it is exact
  FormatDeviceParam(params, DeviceParam::kBandwidthMbps, text, sizeof(text));
  DeviceParams reread;
  ASSERT_EQ(SetDeviceParam(&reread, DeviceParam::kBandwidthMbps, text), nullptr);
  EXPECT_EQ(reread.bandwidth_mbps, 1.0 / 3.0);
}

TEST(EmuEnv, AnEmptyVariableCountsAsUnset) {
  setenv("STAGIO_EMU_TEST_EMPTY", "", 1);
  EXPECT_EQ(GetEnv("STAGIO_EMU_TEST_EMPTY"), nullptr);
  setenv("STAGIO_EMU_TEST_EMPTY", "x", 1);
  EXPECT_STREQ(GetEnv("STAGIO_EMU_TEST_EMPTY"), "x");
  unsetenv("STAGIO_EMU_TEST_EMPTY");
  EXPECT_EQ(GetEnv("STAGIO_EMU_TEST_EMPTY"), nullptr);
}

TEST(EmuEnv, NamesTheVariables) {
  EXPECT_STREQ(EnvVariable(DeviceParam::kLatencyMs), "STAGIO_EMU_LATENCY_MS");
  EXPECT_STREQ(EnvVariable(DeviceParam::kBandwidthMbps), "STAGIO_EMU_BANDWIDTH_MBPS");
  EXPECT_STREQ(EnvVariable(DeviceParam::kParallel), "STAGIO_EMU_PARALLEL");
}

}  // namespace
}  // namespace stagio::emu
