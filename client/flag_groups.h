// The flags that several `gpuprobe` commands share, bound on a command's CLI11 subcommand:
// moe-union's sweep and check, a probe's --param and --check, labels, and the JOB argument.
//
//   SweepFlags(app, flags);  // sweep and submit
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "client/client_flags.h"

namespace gpuprobe {

// An optional number: unset unless given (so that the daemon's default applies).
template <typename T>
void OptionalFlag(CLI::App& app, const std::string& name, std::optional<T>& into,
                  const std::string& help) {
  app.add_option_function<T>(
         name, [&into](const T& v) { into = v; }, help)
      ->type_name("N");
}

// A comma-separated list that accumulates over repeats (--label a=1 --label b=2).
CLI::Option* ListFlag(CLI::App& app, const std::string& name, std::vector<std::string>& into,
                      const std::string& help, const std::string& type_name);

// A moe-union sweep's flags (sweep, submit): its declared parameters (client/param_flags.h) and
// --label.
void SweepFlags(CLI::App& app, ClientFlags& f);
// A moe-union check's: its declared parameters, --label and --dump DIR.
void CheckFlags(CLI::App& app, ClientFlags& f);
// --label k=v (repeatable, comma-separated).
void LabelFlag(CLI::App& app, ClientFlags& f);

// --idempotency-key, of the commands that queue a job (submit, sweep, check, run, kernel): a
// retry with the same key gets the first call's job.
void IdempotencyKeyFlag(CLI::App& app, ClientFlags& f);
// --fail-on slower|unsure, of the commands that print verdicts (compare, kernel).
void FailOnFlag(CLI::App& app, ClientFlags& f);
// INVALID_ARGUMENT unless --fail-on is unset, slower or unsure.
absl::Status CheckFailOn(const std::string& fail_on);
// Whether --fail-on finds what it names: `slower` arms, or `not_same` (slower, unsure or too few
// reps).
bool FailsOn(const std::string& fail_on, int slower, int not_same);
// --param NAME=VALUE (repeatable) and --check.
void ProbeFlags(CLI::App& app, ClientFlags& f);
// The one positional JOB (a job id), into args[0].
void JobArgument(CLI::App& app, std::vector<std::string>& args);

}  // namespace gpuprobe
