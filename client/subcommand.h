// One `gpuprobe` command: its name and one-line help, the flags and arguments it binds on its
// CLI11 subcommand, and what it runs. Each command's file defines its own (next to its handler),
// and client/subcommands.cc lists them: a new command is its file plus one line there.
//
//   Subcommand WaitSubcommand() {
//     return {.name = "wait", .help = "block until JOB ends",
//             .bind = [](CLI::App& app, ClientFlags& f, std::vector<std::string>& args) {...},
//             .run = [](const ClientContext& c, const std::vector<std::string>& args) {...}};
//   }
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "client/client_flags.h"
#include "client/commands.h"

namespace gpuprobe {

struct Subcommand {
  std::string name;
  std::string help;
  // Adds the command's flags (into `flags`) and positional arguments (into `args`) to `app`.
  std::function<void(CLI::App& app, ClientFlags& flags, std::vector<std::string>& args)> bind;
  // Runs the command; returns its exit code (exit_codes.h).
  std::function<int(const ClientContext& context, const std::vector<std::string>& args)> run;
};

}  // namespace gpuprobe
