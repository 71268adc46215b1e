#include "iond/command_line.h"

#include <CLI/CLI.hpp>
#include <map>
#include <vector>

namespace stagio {
namespace iond {

int ParseCommandLine(int argc, const char* const argv[], CommandLine* line, std::ostream& out,
                     std::ostream& err) {
  CLI::App app{"stagio-iond: the I/O-node daemon of stagio. A second-level block cache with "
               "its own write-back and prefetching, serving stagio clients the files under "
               "--root.",
               "stagio-iond"};
  // CLI11 stores each option in a variable; collect them by key, then keep those given.
  std::vector<std::string> listen;
  std::map<std::string, std::string> values;
  std::map<std::string, CLI::Option*> options;
  for (const ConfigKey& key : ConfigKeys()) {
    const std::string name = key.key;
    CLI::Option* option = name == "listen"
                              ? app.add_option(OptionName(name), listen, key.help)
                              : app.add_option(OptionName(name), values[name], key.help);
    options[name] = option->type_name(key.value_name);
  }
  app.add_option("--config", line->config_file,
                 "JSON file with the same settings, keys in snake_case (cache_size, ...); the "
                 "command line wins over it")
      ->type_name("FILE");
  app.add_flag("--print-config", line->print_config,
               "Print the fully resolved configuration as JSON and exit");
  app.footer("Example: stagio-iond --listen unix:/tmp/iond.sock --root /scratch/job42\n");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int status = app.exit(error, out, err);
    return status == 0 ? 0 : 2;  // --help is not an error
  }
  for (const auto& [key, option] : options) {
    if (option->count() == 0) continue;
    line->settings[key] = key == "listen" ? nlohmann::json(listen) : nlohmann::json(values[key]);
  }
  return -1;
}

Status LoadConfig(const CommandLine& line, const char* env_token, IondConfig* config) {
  ConfigSources sources;
  sources.command_line = line.settings;
  sources.env_token = env_token;
  if (!line.config_file.empty()) {
    sources.file_name = line.config_file;
    Status status = ReadConfigFile(line.config_file, &sources.file);
    if (!status.ok()) return status;
  }
  return ResolveConfig(sources, config);
}

}  // namespace iond
}  // namespace stagio
