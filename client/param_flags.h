// The flags of a command whose request is a probe's parameter message (moe-union's `sweep`,
// `submit` and `check`), made from the message's (gpuprobe.v1.param) declarations, so that a
// parameter is written once: its flag is --NAME with '-' for '_' (or the declaration's `flag`,
// an alias the seed's users know: --t, --variant), its help the declaration's description,
// default and limits, its value text as `--param NAME=VALUE` takes it ("0.5%", "all"), and an
// unset flag falls back to the declaration's environment variable (the seed's MEMRA_MOEU_*).
// A parameter given by neither stays unset, and the daemon applies its default.
//
//   ParamFlags flags;
//   flags.Bind(app, *v1::SweepRequest::descriptor());
//   ... app.parse(argc, argv) ...
//   RETURN_IF_ERROR(flags.Fill(ProcessEnv(), request));
#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

namespace gpuprobe {

// Reads an environment variable; nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;

class ParamFlags {
 public:
  // A flag on `app` for every declared parameter of `descriptor` (nested messages flattened,
  // map fields and undeclared fields left out). Several commands may bind one ParamFlags: Fill
  // reads the flags of the command that was given.
  void Bind(CLI::App& app, const google::protobuf::Descriptor& descriptor);
  // The flags given, else their environment variables, into `message` (of the bound type).
  // INVALID_ARGUMENT names the flag (or the variable) and what its value must be.
  absl::Status Fill(const EnvLookup& env, google::protobuf::Message& message) const;

 private:
  struct Flag {
    const CLI::App* app;  // the command it belongs to
    std::string param;    // the field's name, as --param takes it
    std::string flag;     // without the dashes
    std::string env;      // "" when none
    std::vector<std::string> values;
    bool set = false;  // a boolean flag given
  };
  std::deque<Flag> flags_;  // CLI11 binds into them: their addresses stay put
};

}  // namespace gpuprobe
