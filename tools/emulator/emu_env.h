// The environment contract of the emulator, shared by the LD_PRELOAD shim (which reads it) and
// `stagio-emu` (which writes it for the command it runs, and reads it for options not given on
// its command line):
//   STAGIO_EMU_DIR              files whose resolved path is under this directory are emulated
//   STAGIO_EMU_SHM              POSIX shared-memory name of the run's segment
//                               (default /stagio-emu-<uid>)
//   STAGIO_EMU_LATENCY_MS       per-request latency, milliseconds (double, default 5)
//   STAGIO_EMU_BANDWIDTH_MBPS   shared bandwidth, MB/s with MB = 1e6 bytes (double, default 200)
//   STAGIO_EMU_PARALLEL         parallel servers (integer 1..64, default 8)
//   STAGIO_EMU_SEEK_MS          per-request seek on the shared channel, ms (double, default 0)
//   STAGIO_EMU_LINK_LATENCY_MS  one-way latency of the link stage, ms (double, default 0)
//   STAGIO_EMU_LINK_BANDWIDTH_MBPS  bandwidth of each way of the link, MB/s (default 0:
//                               unlimited); both 0: no link stage (device_model.h)
// An empty variable counts as unset. Parsing is strict (the whole text must be the number) and
// allocation-free, because the shim parses inside interposed calls, possibly before main.
#pragma once

#include <cstddef>

#include "device_model.h"

namespace stagio::emu {

constexpr const char kDirVariable[] = "STAGIO_EMU_DIR";
constexpr const char kShmVariable[] = "STAGIO_EMU_SHM";

enum class DeviceParam {
  kLatencyMs,
  kBandwidthMbps,
  kParallel,
  kSeekMs,
  kLinkLatencyMs,
  kLinkBandwidthMbps
};
constexpr DeviceParam kAllDeviceParams[] = {DeviceParam::kLatencyMs, DeviceParam::kBandwidthMbps,
                                            DeviceParam::kParallel, DeviceParam::kSeekMs,
                                            DeviceParam::kLinkLatencyMs,
                                            DeviceParam::kLinkBandwidthMbps};

// "STAGIO_EMU_LATENCY_MS", ...
const char* EnvVariable(DeviceParam param);

// Sets `param` in `params` from `text`. On failure leaves `params` unchanged and returns why
// ("not a number", or the range the parameter must be in); returns nullptr on success.
const char* SetDeviceParam(DeviceParams* params, DeviceParam param, const char* text);

// `param` of `params` as text that parses back to exactly the same value.
void FormatDeviceParam(const DeviceParams& params, DeviceParam param, char* buffer, size_t size);

// The value of a variable, or nullptr when it is unset or empty.
const char* GetEnv(const char* variable);

// "/stagio-emu-<uid>": the segment the shim uses when STAGIO_EMU_SHM is unset.
void DefaultSegmentName(char* buffer, size_t size);

}  // namespace stagio::emu
