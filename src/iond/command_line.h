// The stagio-iond command line:
//
//   stagio-iond --listen ADDR [--listen ADDR ...] --root DIR [--config FILE.json]
//               [--cache-size 512M] [--block-size 1M] [--write-back-high PCT]
//               [--write-back-low PCT] [--prefetch-blocks N] [--io-threads N]
//               [--request-threads N] [--hello-timeout SEC] [--hello-max-bytes 4K]
//               [--max-unauthenticated N] [--max-connections N] [--token-file F]
//               [--ready-file F] [--stats F] [--print-config]
//
// Every setting option is a config key (config.h); the options given are collected as JSON
// strings so that one resolver validates the command line and the config file alike.
#pragma once

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "iond/config.h"

namespace stagio {
namespace iond {

struct CommandLine {
  nlohmann::json settings = nlohmann::json::object();  // config key -> string (listen: list)
  std::string config_file;
  bool print_config = false;
};

// Parses argv. Returns -1 to go on; otherwise the process should exit with the returned status:
// 0 after --help (usage on `out`), 2 after a usage error (message on `err`).
int ParseCommandLine(int argc, const char* const argv[], CommandLine* line, std::ostream& out,
                     std::ostream& err);

// Reads the config file the command line names (if any) and resolves the configuration.
Status LoadConfig(const CommandLine& line, const char* env_token, IondConfig* config);

}  // namespace iond
}  // namespace stagio
