// `gpuprobe kernel`: a client's compiled CUDA kernels timed by the daemon's kernel probe. The
// spec is the probe's KernelParams in protobuf's JSON mapping; its launches name modules by the
// names --module gives them (or by id); without a spec, --kernel and its flags describe one launch
// (kernel_shorthand.h). The command uploads each module the daemon does not have
// yet, submits one job and follows it; with --baseline and --candidate it runs every arm of the
// spec twice, once on each build, interleaved in one job, and exits as `compare` does.
//
//   gpuprobe kernel --module scale=scale.cubin --spec spec.json
//   gpuprobe kernel --module k=scale.cubin --kernel scale --grid 4096 --block 256
//     --buffer x=f32:1048576:normal:0:1 --buffer y=f32:1048576 --arg y --arg x --arg f32:2 ...
//   gpuprobe kernel --baseline base.cubin --candidate cand.cubin --spec spec.json --fail-on slower
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/exit_codes.h"
#include "client/flag_groups.h"
#include "client/job_identity.h"
#include "client/job_printers.h"
#include "client/kernel_shorthand.h"
#include "client/kernel_summary.h"
#include "client/module_commands.h"
#include "client/probe_commands.h"
#include "client/subcommands.h"
#include "client/sweep_request_flags.h"
#include "nlohmann/json.hpp"

namespace gpuprobe {
namespace {

using Json = nlohmann::ordered_json;

// The module name the spec's launches use for the build with --baseline and --candidate (and a
// launch that names no module).
constexpr char kBuild[] = "build";

absl::StatusOr<Json> ReadSpec(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrFormat("--spec: %s cannot be read", path));
  std::ostringstream text;
  text << in.rdbuf();
  Json spec = Json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (spec.is_discarded() || !spec.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--spec: %s is not a JSON object (the kernel probe's KernelParams)", path));
  }
  if (!spec.contains("arms") || !spec["arms"].is_array()) {
    return absl::InvalidArgumentError(absl::StrFormat("--spec: %s has no \"arms\" list", path));
  }
  return spec;
}

// Every launch's module named by its id: `ids` by name; a launch naming no module gets `build`'s.
absl::Status NameModules(Json& arms, const std::map<std::string, std::string>& ids) {
  for (Json& arm : arms) {
    // What is not an object of the expected shape goes as it is: the daemon names it.
    if (!arm.is_object() || !arm.contains("launches") || !arm["launches"].is_array()) continue;
    for (Json& launch : arm["launches"]) {
      if (!launch.is_object()) continue;
      const Json module_field = launch.value("module", Json(kBuild));
      if (!module_field.is_string()) continue;
      const std::string module = module_field.get<std::string>();
      const auto id = ids.find(module);
      if (id != ids.end()) {
        launch["module"] = id->second;
      } else if (module.size() != 64) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--spec: a launch names module \"%s\", which no --module (or --baseline and "
            "--candidate: \"%s\") gives",
            module, kBuild));
      }
    }
  }
  return absl::OkStatus();
}

// Each arm twice, NAME.base on the baseline build and NAME.candidate on the candidate's,
// compared with NAME.base.
Json BaselineAndCandidate(const Json& arms, const std::string& base_id,
                          const std::string& candidate_id) {
  Json both = Json::array();
  for (const Json& arm : arms) {
    if (!arm.is_object() || !arm.value("name", Json()).is_string()) {
      both.push_back(arm);  // as it is: the daemon names what is wrong
      continue;
    }
    const std::string name = arm["name"].get<std::string>();
    for (const bool candidate : {false, true}) {
      Json copy = arm;
      copy["name"] = absl::StrCat(name, candidate ? ".candidate" : ".base");
      if (candidate) copy["baseline"] = absl::StrCat(name, ".base");
      if (copy.contains("launches") && copy["launches"].is_array()) {
        for (Json& launch : copy["launches"]) {
          if (launch.is_object() && launch.value("module", Json(kBuild)) == Json(kBuild)) {
            launch["module"] = candidate ? candidate_id : base_id;
          }
        }
      }
      both.push_back(std::move(copy));
    }
  }
  return both;
}

// The spec of --kernel and its flags: its launch names the one --module's NAME, or the build.
absl::StatusOr<Json> Shorthand(const ClientFlags& f) {
  std::string module;
  if (f.baseline_module.empty()) {
    if (f.kernel_modules.size() != 1) {
      return absl::InvalidArgumentError(
          "--kernel: give one --module NAME=FILE, or --baseline and --candidate");
    }
    module = f.kernel_modules[0].substr(0, f.kernel_modules[0].find('='));
  }
  absl::StatusOr<std::string> json = ShorthandSpecJson(f, module);
  if (!json.ok()) return json.status();
  return Json::parse(*json);
}

int KernelCommand(const ClientContext& context) {
  const ClientFlags& f = *context.flags;
  if (f.kernel_spec.empty() == f.kernel_name.empty()) {
    return UsageError(absl::InvalidArgumentError(
        "--spec FILE (the kernel probe's KernelParams as JSON) or --kernel NAME with its "
        "--grid, --block and --arg flags: one of them"));
  }
  if (f.baseline_module.empty() != f.candidate_module.empty()) {
    return UsageError(absl::InvalidArgumentError("--baseline and --candidate go together"));
  }
  if (absl::Status s = CheckFailOn(f.fail_on); !s.ok()) return UsageError(s);
  absl::StatusOr<Json> spec = f.kernel_spec.empty() ? Shorthand(f) : ReadSpec(f.kernel_spec);
  if (!spec.ok()) return UsageError(spec.status());
  std::map<std::string, std::string> ids;  // module name -> id
  for (const std::string& named : f.kernel_modules) {
    const size_t eq = named.find('=');
    if (eq == std::string::npos || eq == 0) {
      return UsageError(absl::InvalidArgumentError(
          absl::StrFormat("--module: \"%s\" is not of the form NAME=FILE", named)));
    }
    v1::Module stored;
    if (int code = UploadModuleFile(context, named.substr(eq + 1), &stored); code != kExitOk) {
      return code;
    }
    ids[named.substr(0, eq)] = stored.id();
  }
  Json& arms = (*spec)["arms"];
  if (!f.baseline_module.empty()) {
    v1::Module base, candidate;
    if (int code = UploadModuleFile(context, f.baseline_module, &base); code != kExitOk)
      return code;
    if (int code = UploadModuleFile(context, f.candidate_module, &candidate); code != kExitOk) {
      return code;
    }
    arms = BaselineAndCandidate(arms, base.id(), candidate.id());
  }
  if (absl::Status named = NameModules(arms, ids); !named.ok()) return UsageError(named);
  std::map<std::string, std::string> baselines;
  for (const Json& arm : arms) {
    if (arm.is_object() && arm.value("name", Json()).is_string() &&
        arm.value("baseline", Json()).is_string()) {
      baselines[arm["name"].get<std::string>()] = arm["baseline"].get<std::string>();
    }
  }
  v1::SubmitRequest submit;
  v1::ProbeRequest& probe = *submit.mutable_probe();
  probe.set_probe("kernel");
  probe.set_params_json(spec->dump());
  probe.set_check(f.check);
  if (absl::Status s = LabelsFromFlags(f, *probe.mutable_labels()); !s.ok()) return UsageError(s);
  KernelSummary summary(baselines);
  const bool markdown = context.format == "markdown";
  std::string job_id;
  v1::JobFinished finished;
  const int code = SubmitAndFollow(context, submit, [&](const v1::Job& job) {
    job_id = job.id();
    EventHandlers on;
    if (!markdown) {
      absl::StatusOr<JobPrinter> printer =
          JobPrinter::For(context.format, std::cout, IdentityOf(job), job.check());
      if (printer.ok()) {
        auto shared = std::make_shared<JobPrinter>(*std::move(printer));
        on = shared->Handlers();
        on.finished = [shared, print = on.finished](const v1::JobFinished& f) { print(f); };
      }
    }
    on.result = [&summary, print = on.result](const v1::Result& r) {
      summary.Add(r);
      print(r);
    };
    on.finished = [&finished, print = on.finished](const v1::JobFinished& f) {
      finished = f;
      print(f);
    };
    return on;
  });
  if (markdown && !job_id.empty()) std::cout << summary.Markdown(job_id, finished);
  if (code != kExitOk) return code;
  return FailsOn(f.fail_on, summary.Slower(), summary.NotSame()) ? kExitRegression : kExitOk;
}

}  // namespace

Subcommand KernelSubcommand() {
  return {.name = "kernel",
          .help =
              "time your own compiled CUDA kernels (cubin, fatbin, PTX) on the daemon's GPU, "
              "baseline and candidate in one job",
          .bind =
              [](CLI::App& app, ClientFlags& f, std::vector<std::string>&) {
                app.add_option("--spec", f.kernel_spec,
                               "the kernel probe's parameters (KernelParams) as JSON: buffers, "
                               "arms of launches")
                    ->check(CLI::ExistingFile);
                app.add_option("--module", f.kernel_modules,
                               "NAME=FILE: a module the spec's launches name NAME (repeatable)")
                    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
                    ->type_name("NAME=FILE");
                app.add_option("--baseline", f.baseline_module,
                               "the base build's module: every arm runs on it as NAME.base")
                    ->check(CLI::ExistingFile);
                app.add_option("--candidate", f.candidate_module,
                               "the candidate build's module: every arm runs on it as "
                               "NAME.candidate, judged against NAME.base")
                    ->check(CLI::ExistingFile);
                FailOnFlag(app, f);
                IdempotencyKeyFlag(app, f);
                app.add_flag("--check", f.check,
                             "run each arm once and compare its outputs with the reference "
                             "arm's instead of timing");
                LabelFlag(app, f);
                app.add_option("--kernel", f.kernel_name,
                               "without --spec: the one kernel to time (mangled or extern \"C\")");
                app.add_option("--grid", f.kernel_grid, "with --kernel: X[,Y,Z] blocks");
                app.add_option("--block", f.kernel_block, "with --kernel: X[,Y,Z] threads");
                app.add_option("--smem", f.kernel_smem,
                               "with --kernel: dynamic shared memory, bytes");
                app.add_option("--buffer", f.kernel_buffers,
                               "with --kernel: NAME=DTYPE:COUNT[:zeros|:constant:V|:uniform:A:B|"
                               ":normal:MEAN:STD], a buffer the daemon fills (repeatable)")
                    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
                app.add_option("--arg", f.kernel_args,
                               "with --kernel: the next argument, a buffer's NAME or DTYPE:VALUE "
                               "(repeatable, in the kernel's parameter order)")
                    ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
              },
          .run = [](const ClientContext& c,
                    const std::vector<std::string>&) { return KernelCommand(c); }};
}

}  // namespace gpuprobe
