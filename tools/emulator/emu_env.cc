// Parsing and formatting of the emulator's environment variables (see emu_env.h).
#include "emu_env.h"

#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace stagio::emu {
namespace {

bool OnlySpaceLeft(const char* rest) {
  while (*rest == ' ' || *rest == '\t' || *rest == '\n') ++rest;
  return *rest == '\0';
}

bool ParseDouble(const char* text, double* value) {
  char* end = nullptr;
  errno = 0;
  const double parsed = std::strtod(text, &end);
  if (end == text || errno == ERANGE || !OnlySpaceLeft(end)) return false;
  *value = parsed;
  return true;
}

bool ParseInt(const char* text, int* value) {
  char* end = nullptr;
  errno = 0;
  const long parsed = std::strtol(text, &end, 10);
  if (end == text || errno == ERANGE || !OnlySpaceLeft(end) || parsed < INT_MIN ||
      parsed > INT_MAX) {
    return false;
  }
  *value = static_cast<int>(parsed);
  return true;
}

// The shortest of %.15g and %.17g that reads back as `value`: "0.1", not "0.10000000000000001".
void FormatDouble(double value, char* buffer, size_t size) {
  std::snprintf(buffer, size, "%.15g", value);
  if (std::strtod(buffer, nullptr) != value) std::snprintf(buffer, size, "%.17g", value);
}

}  // namespace

const char* EnvVariable(DeviceParam param) {
  switch (param) {
    case DeviceParam::kLatencyMs: return "STAGIO_EMU_LATENCY_MS";
    case DeviceParam::kBandwidthMbps: return "STAGIO_EMU_BANDWIDTH_MBPS";
    case DeviceParam::kParallel: return "STAGIO_EMU_PARALLEL";
    case DeviceParam::kSeekMs: return "STAGIO_EMU_SEEK_MS";
    case DeviceParam::kLinkLatencyMs: return "STAGIO_EMU_LINK_LATENCY_MS";
    case DeviceParam::kLinkBandwidthMbps: return "STAGIO_EMU_LINK_BANDWIDTH_MBPS";
  }
  return "";
}

const char* SetDeviceParam(DeviceParams* params, DeviceParam param, const char* text) {
  DeviceParams candidate = *params;
  bool parsed = false;
  switch (param) {
    case DeviceParam::kLatencyMs: parsed = ParseDouble(text, &candidate.latency_ms); break;
    case DeviceParam::kBandwidthMbps: parsed = ParseDouble(text, &candidate.bandwidth_mbps); break;
    case DeviceParam::kParallel: parsed = ParseInt(text, &candidate.parallel); break;
    case DeviceParam::kSeekMs: parsed = ParseDouble(text, &candidate.seek_ms); break;
    case DeviceParam::kLinkLatencyMs: parsed = ParseDouble(text, &candidate.link_latency_ms); break;
    case DeviceParam::kLinkBandwidthMbps:
      parsed = ParseDouble(text, &candidate.link_bandwidth_mbps);
      break;
  }
  if (!parsed) {
    return param == DeviceParam::kParallel ? "not a whole number" : "not a number";
  }
  // The other fields came from `params`; when those are valid, an error here is this field's.
  if (const char* why = DeviceParamsError(candidate)) return why;
  *params = candidate;
  return nullptr;
}

void FormatDeviceParam(const DeviceParams& params, DeviceParam param, char* buffer,
                       size_t size) {
  switch (param) {
    case DeviceParam::kLatencyMs: FormatDouble(params.latency_ms, buffer, size); break;
    case DeviceParam::kBandwidthMbps: FormatDouble(params.bandwidth_mbps, buffer, size); break;
    case DeviceParam::kParallel: std::snprintf(buffer, size, "%d", params.parallel); break;
    case DeviceParam::kSeekMs: FormatDouble(params.seek_ms, buffer, size); break;
    case DeviceParam::kLinkLatencyMs: FormatDouble(params.link_latency_ms, buffer, size); break;
    case DeviceParam::kLinkBandwidthMbps:
      FormatDouble(params.link_bandwidth_mbps, buffer, size);
      break;
  }
}

const char* GetEnv(const char* variable) {
  const char* value = std::getenv(variable);
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

void DefaultSegmentName(char* buffer, size_t size) {
  std::snprintf(buffer, size, "/stagio-emu-%u", static_cast<unsigned>(getuid()));
}

}  // namespace stagio::emu
