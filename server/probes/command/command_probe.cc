#include "server/probes/command/command_probe.h"

#include <map>
#include <memory>
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "common/abbreviated.h"
#include "common/status_macros.h"
#include "server/artifacts/new_file.h"
#include "server/probes/command/command_runner.h"
#include "server/probes/command/result_table.h"
#include "server/probes/job_events.h"
#include "server/probes/results.h"

namespace gpuprobe {
namespace {

std::vector<std::string> Names(const std::vector<v1::CommandRegistration>& commands) {
  std::vector<std::string> names;
  for (const v1::CommandRegistration& c : commands) names.push_back(c.name());
  return names;
}

v1::ProbeInfo MakeInfo(const std::vector<v1::CommandRegistration>& commands) {
  v1::ProbeInfo info;
  info.set_name("command");
  info.set_description(
      commands.empty()
          ? "an executable the daemon's operator registered (none is: gpuprobed "
            "--probe-command NAME=PATH or --probe-commands FILE)"
          : "an executable the daemon's operator registered, run with its device alone; its "
            "table's declared axes are axes, its other numeric columns metrics");
  info.set_params_type(v1::CommandProbeParams::descriptor()->full_name());
  *info.add_params() =
      Param("command", absl::StrCat("one of ", absl::StrJoin(Names(commands), "|")), "", "",
            "the registered command");
  for (const v1::CommandRegistration& c : commands) {
    for (const v1::CommandParam& p : c.params()) {
      *info.add_params() =
          Param(p.name(), p.type() == v1::CommandParam::INTEGER ? "an integer" : "text",
                p.default_value(),
                p.type() == v1::CommandParam::INTEGER
                    ? absl::StrFormat("%d..%d", p.min(), p.max())
                    : absl::StrFormat("at most %d of A-Z a-z 0-9 . _ : , = + / -", p.max_length()),
                absl::StrCat("command ", c.name(), ": ", p.description()));
    }
    for (const std::string& axis : c.axes()) {
      *info.add_axes() = Quantity(axis, "", absl::StrCat("command ", c.name()));
    }
  }
  return info;
}

// A client's value for a declared parameter: INVALID_ARGUMENT names it and its limit.
// The value as the command gets it: an INTEGER in canonical decimal form, a STRING as given;
// INVALID_ARGUMENT names the parameter and what its value may be.
absl::StatusOr<std::string> CommandValue(const v1::CommandParam& p, const std::string& value) {
  if (p.type() == v1::CommandParam::INTEGER) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(value, &v)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("param %s: \"%s\" is not an integer", p.name(), Abbreviated(value)));
    }
    if (v < p.min() || v > p.max()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("param %s: %d is outside [%d, %d]", p.name(), v, p.min(), p.max()));
    }
    return absl::StrCat(v);
  }
  static const std::regex kSafe("[A-Za-z0-9._:,=+/-]*");
  if (value.size() > p.max_length() || !std::regex_match(value, kSafe)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("param %s: \"%s\" is not at most %d of A-Z a-z 0-9 . _ : , = + / -",
                        p.name(), Abbreviated(value), p.max_length()));
  }
  if (absl::StartsWith(value, "-")) {
    return absl::InvalidArgumentError(
        absl::StrFormat("param %s: \"%s\" starts with '-', which the command would read as a flag",
                        p.name(), Abbreviated(value)));
  }
  if (!p.allow_paths() && (absl::StrContains(value, "/") || absl::StrContains(value, ".."))) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "param %s: \"%s\" holds '/' or \"..\", which its registration does not allow "
        "(allow_paths)",
        p.name(), Abbreviated(value)));
  }
  return value;
}

class Telemetry {
 public:
  Telemetry(Backend& device, const EventPublisher& publish) : device_(device), publish_(publish) {}
  void Sample() {
    if (std::optional<TelemetrySample> reading = device_.SampleTelemetry()) {
      publish_(TelemetryEvent(*reading));
      if (disturbance_.empty() && Disturbed(*reading)) disturbance_ = Disturbance(*reading);
    }
  }
  const std::string& disturbance() const { return disturbance_; }

 private:
  Backend& device_;
  const EventPublisher& publish_;
  std::string disturbance_;
};

// How long a job waits, after its command and every process it left are gone, for the device
// to list none of them (NVML's process list: the driver tears a context down after its process
// exits).
constexpr absl::Duration kDeviceReleaseWait = absl::Seconds(5);

// Waits until the device lists no process of `pids` (none to wait for without telemetry: the cpu
// backend, or no NVML); FAILED_PRECONDITION naming those it still lists after kDeviceReleaseWait.
absl::Status AwaitDeviceReleased(Backend& device, const std::set<int>& pids) {
  const absl::Time deadline = absl::Now() + kDeviceReleaseWait;
  for (;;) {
    const std::optional<TelemetrySample> reading = device.SampleTelemetry();
    if (!reading.has_value()) return absl::OkStatus();
    std::vector<std::string> holders;
    for (const TelemetrySample::Process& p : reading->foreign_processes) {
      if (pids.contains(p.pid)) holders.push_back(absl::StrCat(p.pid, " (", p.name, ")"));
    }
    if (holders.empty()) return absl::OkStatus();
    if (absl::Now() >= deadline) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "the device still lists processes of the command %s after %s, though they are gone "
          "here",
          absl::StrJoin(holders, ", "), absl::FormatDuration(kDeviceReleaseWait)));
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
}

// The last line of a command's stderr, for its job's error: at most its last kStderrTailBytes.
constexpr size_t kStderrTailBytes = 300;
std::string LastLine(absl::string_view text) {
  const absl::string_view trimmed = absl::StripTrailingAsciiWhitespace(text);
  const size_t newline = trimmed.rfind('\n');
  const absl::string_view line =
      newline == absl::string_view::npos ? trimmed : trimmed.substr(newline + 1);
  if (line.size() <= kStderrTailBytes) return std::string(line);
  return absl::StrCat("...", line.substr(line.size() - kStderrTailBytes));
}

}  // namespace

CommandProbe::CommandProbe(std::vector<v1::CommandRegistration> commands)
    : commands_(std::move(commands)), info_(MakeInfo(commands_)) {}

absl::StatusOr<ProbeSpec> CommandProbe::Resolve(const v1::ProbeRequest& request) const {
  v1::CommandProbeParams given;
  if (!request.params_json().empty()) {
    return absl::InvalidArgumentError(
        "params_json: probe \"command\" takes params or param_values");
  }
  if (request.has_params()) {
    if (!request.param_values().empty()) {
      return absl::InvalidArgumentError("params: set params or param_values, not both");
    }
    if (!request.params().UnpackTo(&given)) {
      return absl::InvalidArgumentError(
          "params: probe \"command\" takes a gpuprobe.v1.CommandProbeParams");
    }
  } else {
    for (const auto& [name, value] : request.param_values()) {
      if (name == "command") {
        given.set_command(value);
      } else {
        (*given.mutable_values())[name] = value;
      }
    }
  }
  if (commands_.empty()) {
    return absl::FailedPreconditionError(
        "command: no command is registered on this daemon (gpuprobed --probe-command NAME=PATH)");
  }
  const v1::CommandRegistration* command = nullptr;
  for (const v1::CommandRegistration& c : commands_) {
    if (c.name() == given.command()) command = &c;
  }
  if (command == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("param command: \"%s\" is not a registered command (this daemon's: %s)",
                        Abbreviated(given.command()), absl::StrJoin(Names(commands_), ", ")));
  }
  v1::CommandProbeParams resolved;
  resolved.set_command(command->name());
  for (const auto& [name, value] : given.values()) {
    const bool declared = std::any_of(command->params().begin(), command->params().end(),
                                      [&](const v1::CommandParam& p) { return p.name() == name; });
    if (!declared) {
      std::vector<std::string> names;
      for (const v1::CommandParam& p : command->params()) names.push_back(p.name());
      return absl::InvalidArgumentError(absl::StrFormat(
          "param %s: command %s takes no such parameter (it takes %s)", Abbreviated(name),
          command->name(), names.empty() ? "none" : absl::StrJoin(names, ", ")));
    }
  }
  for (const v1::CommandParam& p : command->params()) {
    auto it = given.values().find(p.name());
    if (it == given.values().end() && p.default_value().empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("param %s: required by command %s", p.name(), command->name()));
    }
    const std::string value = it != given.values().end() ? it->second : p.default_value();
    ASSIGN_OR_RETURN((*resolved.mutable_values())[p.name()], CommandValue(p, value));
  }
  return std::make_shared<const v1::CommandProbeParams>(std::move(resolved));
}

absl::StatusOr<const v1::CommandRegistration*> CommandProbe::Find(
    const v1::CommandProbeParams& params) const {
  for (const v1::CommandRegistration& c : commands_) {
    if (c.name() == params.command()) return &c;
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "command: %s is no longer registered on this daemon", Abbreviated(params.command())));
}

absl::StatusOr<ProbePlan> CommandProbe::Plan(const google::protobuf::Message& spec, bool,
                                             const Backend&) const {
  ASSIGN_OR_RETURN(const v1::CommandProbeParams* params, SpecAs<v1::CommandProbeParams>(spec));
  ASSIGN_OR_RETURN(const v1::CommandRegistration* command, Find(*params));
  // Bounded by its registration: its time, and its output kept whole as artifacts.
  return ProbePlan{.device_seconds = static_cast<double>(command->max_seconds()),
                   .artifact_bytes = static_cast<int64_t>(command->max_output_bytes())};
}

JobOutcome CommandProbe::Run(const ProbeRun& run, Backend& device, const EventPublisher& publish,
                             const std::atomic<bool>& cancelled) const {
  absl::StatusOr<const v1::CommandProbeParams*> spec = SpecAs<v1::CommandProbeParams>(*run.spec);
  if (!spec.ok()) return JobOutcome{.status = spec.status()};
  const v1::CommandProbeParams& params = **spec;
  absl::StatusOr<const v1::CommandRegistration*> found = Find(params);
  if (!found.ok()) return JobOutcome{.status = found.status()};
  const v1::CommandRegistration& command = **found;
  std::vector<std::string> argv = {command.path()};
  std::map<std::string, std::string> env = {
      {"CUDA_VISIBLE_DEVICES", absl::StrCat(device.Ordinal())}};
  for (const v1::CommandParam& p : command.params()) {
    const std::string& value = params.values().at(p.name());
    if (!p.env().empty()) {
      env[p.env()] = value;
    } else {
      argv.insert(argv.end(), {p.arg(), value});
    }
  }
  v1::JobEvent started = StartedEvent(Name(), device.Description(), params);
  publish(std::move(started));

  Telemetry telemetry(device, publish);
  const CommandLimits limits{.max_time = absl::Seconds(command.max_seconds()),
                             .max_output_bytes = static_cast<int64_t>(command.max_output_bytes()),
                             .max_lines = command.max_lines()};
  CommandOutput partial;
  absl::StatusOr<CommandOutput> ran = RunBoundedCommand(
      argv, env, limits, cancelled, [&](int group) { device.SetOwnProcessGroup(group); },
      [&] { telemetry.Sample(); }, &partial);
  device.SetOwnProcessGroup(0);
  telemetry.Sample();
  // The job holds the device until nothing of its command does (issue 55, item 2).
  if (absl::Status released = AwaitDeviceReleased(device, ran.ok() ? ran->pids : partial.pids);
      !released.ok() && ran.ok()) {
    partial = *std::move(ran);
    ran = std::move(released);
  }
  const CommandOutput& output = ran.ok() ? *ran : partial;
  JobOutcome outcome;
  if (!run.artifact_dir.empty()) {
    for (const auto& [name, text] :
         {std::pair{"stdout.txt", &output.out}, {"stderr.txt", &output.err}}) {
      if (absl::Status s = WriteNewFile(run.artifact_dir + "/" + name, {*text}); !s.ok()) {
        outcome.status = s;
      }
    }
  }
  if (!ran.ok()) {
    outcome.status = absl::Status(ran.status().code(), absl::StrCat("command ", command.name(),
                                                                    ": ", ran.status().message()));
    return outcome;
  }
  if (output.exit_code != 0) {
    outcome.status = absl::FailedPreconditionError(absl::StrFormat(
        "command %s exited with status %d%s", command.name(), output.exit_code,
        output.err.empty() ? "" : absl::StrCat("; its stderr ends: ", LastLine(output.err))));
    return outcome;
  }
  absl::StatusOr<std::vector<v1::Result>> results = ParseResultTable(
      output.out, std::vector<std::string>(command.axes().begin(), command.axes().end()));
  if (!results.ok()) {
    outcome.status = absl::DataLossError(
        absl::StrCat("command ", command.name(), ": ", results.status().message()));
    return outcome;
  }
  for (v1::Result& r : *results) {
    r.set_device(device.Description());
    r.set_disturbance(telemetry.disturbance());
    v1::JobEvent event;
    *event.mutable_result() = std::move(r);
    publish(std::move(event));
    ++outcome.results;
  }
  return outcome;
}

}  // namespace gpuprobe
