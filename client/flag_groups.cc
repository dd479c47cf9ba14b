#include "client/flag_groups.h"

#include "absl/strings/str_format.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

CLI::Option* ListFlag(CLI::App& app, const std::string& name, std::vector<std::string>& into,
                      const std::string& help, const std::string& type_name) {
  return app.add_option(name, into, help)
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name(type_name);
}

void SweepFlags(CLI::App& app, ClientFlags& f) {
  f.moe_union.Bind(app, *v1::SweepRequest::descriptor());
  LabelFlag(app, f);
}

void CheckFlags(CLI::App& app, ClientFlags& f) {
  f.moe_union.Bind(app, *v1::CheckRequest::descriptor());
  LabelFlag(app, f);
  app.add_option("--dump", f.dump,
                 "a local directory that receives the check's inputs and outputs as .npy files "
                 "(the job's artifacts, fetched from the daemon)");
}

void LabelFlag(CLI::App& app, ClientFlags& f) {
  ListFlag(app, "--label", f.label, "labels stored with the job: k=v,k2=v2", "K=V");
}

void IdempotencyKeyFlag(CLI::App& app, ClientFlags& f) {
  app.add_option("--idempotency-key", f.idempotency_key,
                 "a retry with the same key gets the first call's job instead of a new one");
}

void FailOnFlag(CLI::App& app, ClientFlags& f) {
  app.add_option("--fail-on", f.fail_on,
                 "exit 6 when an arm is slower (slower), or slower or unsure (unsure)");
}

absl::Status CheckFailOn(const std::string& fail_on) {
  if (fail_on.empty() || fail_on == "slower" || fail_on == "unsure") return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("--fail-on: \"%s\" is not slower or unsure", fail_on));
}

bool FailsOn(const std::string& fail_on, int slower, int not_same) {
  return (fail_on == "slower" && slower > 0) || (fail_on == "unsure" && not_same > 0);
}

void ProbeFlags(CLI::App& app, ClientFlags& f) {
  app.add_option("--param", f.params,
                 "NAME=VALUE, a parameter of the probe (repeatable; `gpuprobe probes` lists "
                 "them; a value may hold commas)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("NAME=VALUE");
  app.add_flag("--check", f.check, "the probe's exactness check instead of timing");
}

void JobArgument(CLI::App& app, std::vector<std::string>& args) {
  app.add_option("JOB", args, "the job's id (e.g. job-7)")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

}  // namespace gpuprobe
