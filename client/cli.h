// gpuprobe's command line, by CLI11: the global flags, one subcommand per command with its own
// flags and arguments (a flag another command takes is refused, naming the command), per-command
// help (`gpuprobe COMMAND --help`, `gpuprobe help [COMMAND]`), `--version` with the commit, and
// "did you mean" for a misspelt command or flag.
//
//   std::variant<CommandLine, int> parsed = ParseCommandLine(argc, argv);
//   if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "client/client_flags.h"
#include "client/subcommand.h"

namespace gpuprobe {

struct CommandLine {
  Subcommand command;             // the command given (not `help`)
  std::vector<std::string> args;  // its positional arguments: JOB; PROBE
  ClientFlags flags;
};

// The command line, or the exit code when parsing ended it: 0 after printing help or the
// version, 2 (kExitUsage) after telling a usage error on stderr.
std::variant<CommandLine, int> ParseCommandLine(int argc, const char* const* argv);

// "gpuprobe 0.1.0 (commit 1a2b3c4)".
std::string VersionText();

}  // namespace gpuprobe
