#include "client/cli.h"

#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>

#include "CLI/CLI.hpp"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/exit_codes.h"
#include "gpuprobe_commit.h"

namespace gpuprobe {
namespace {

// Edits (insertions, deletions, substitutions) between two words.
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The known word nearest `word`, when it is near enough to be what was meant.
std::string Nearest(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const std::string& k : known) {
    const size_t d = Distance(word, k);
    if (d < best_distance) {
      best = k;
      best_distance = d;
    }
  }
  return best_distance <= std::max<size_t>(2, word.size() / 3) ? best : "";
}

// The words after argv[0], each long flag's name (before any '=') with '-' for '_', as the
// client took them before CLI11 (--t_values is --t-values), up to a bare "--"; in the reverse
// order CLI::App::parse takes a vector in.
std::vector<std::string> DashedArgsReversed(int argc, const char* const* argv) {
  std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  for (std::string& arg : args) {
    if (arg == "--") break;
    if (!absl::StartsWith(arg, "--")) continue;
    std::replace(arg.begin(), arg.begin() + std::min(arg.find('='), arg.size()), '_', '-');
  }
  std::reverse(args.begin(), args.end());
  return args;
}

// The long flag names (--name) an app takes, its parent's included when it falls through.
std::vector<std::string> FlagNames(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& name : o->get_lnames()) names.push_back("--" + name);
  }
  if (app.get_parent() != nullptr) {
    for (std::string& name : FlagNames(*app.get_parent())) names.push_back(std::move(name));
  }
  return names;
}

// Which command takes `flag`, for "--flag belongs to ..." ("" if none does).
std::string CommandsTaking(const CLI::App& app, const std::string& flag) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    for (const CLI::Option* o : sub->get_options()) {
      for (const std::string& name : o->get_lnames()) {
        if ("--" + name == flag) commands.push_back(sub->get_name());
      }
    }
  }
  return absl::StrJoin(commands, ", ");
}

template <typename T>
void Optional(CLI::App* app, const std::string& name, std::optional<T>& into,
              const std::string& help) {
  app->add_option_function<T>(
         name, [&into](const T& v) { into = v; }, help)
      ->type_name("N");
}

void Geometry(CLI::App* app, ClientFlags& f, bool check) {
  Optional(app, "--experts", f.experts,
           "experts in the banks (default $MEMRA_MOEU_EXPERTS, else 512)");
  Optional(app, "--hidden", f.hidden,
           "model width, a multiple of 16 (default $MEMRA_MOEU_HIDDEN, else 2560)");
  Optional(app, "--ff", f.ff, "expert width, a multiple of 16 (default $MEMRA_MOEU_FF, else 640)");
  Optional(app, "--selected", f.selected,
           "experts per token (default $MEMRA_MOEU_SELECTED, else 10)");
  Optional(app, "--t", f.t,
           check
               ? "the chunk's token count (default $MEMRA_MOEU_T, else 6)"
               : "largest token count; the sweep covers t = 1..T (default $MEMRA_MOEU_T, else 6)");
  app->add_option("--unions", f.unions,
                  "explicit union sizes, each measured at every t where it fits "
                  "(selected..t*selected), e.g. 10,30,60 (default selected, 2*selected, ..., "
                  "t*selected)")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("U,U");
  app->add_option("--variant", f.variant,
                  check ? "per-slot, union, floor, floor-distinct, or all (default all)"
                        : "per-slot (default), union, floor, floor-distinct, or all")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("V,V");
  Optional(app, "--seed", f.seed,
           check ? "seed of banks, activations, routing (default a fresh one, printed)"
                 : "seed of banks, activations, routing (default 1)");
  app->add_option("--label", f.label, "labels stored with the job: k=v,k2=v2")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("K=V");
}

void SweepFlags(CLI::App* app, ClientFlags& f) {
  Geometry(app, f, /*check=*/false);
  app->add_option("--t-values", f.t_values, "explicit token counts, e.g. 1,3,6")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("T,T");
  Optional(app, "--reps", f.reps,
           "reps per arm including the throwaway rep 0 (default $MEMRA_MOEU_REPS, else 20)");
  app->add_option("--timing", f.timing, "events (default) or graph");
  app->add_option("--cache", f.cache, "warm (default) or cold");
  app->add_option("--order", f.order,
                  "arms within each rep: fixed (default, the seed's), rotate, or shuffle (seeded)");
  app->add_option("--precision", f.precision,
                  "sample until every arm's gate+up and down medians have a 95% interval within "
                  "this share of the median (e.g. 0.5% or 0.005; --reps is then the least number "
                  "of reps); default: exactly --reps");
  Optional(app, "--max-seconds", f.max_seconds,
           "with --precision: stop sampling after this many seconds of measuring (default 60)");
  Optional(app, "--blocks", f.blocks,
           "independent blocks of reps, each on weight banks moved to fresh device memory "
           "(default 1, at most 64); compare judges two jobs of 3 or more blocks by the spread "
           "between their blocks");
  app->add_flag("--require-clean", f.require_clean,
                "fail the job when telemetry sees a throttle reason or another compute process on "
                "the device (default: record and flag the rows)");
}

void ProbeFlags(CLI::App* app, ClientFlags& f) {
  app->add_option("--param", f.params,
                  "NAME=VALUE, a parameter of the probe (repeatable; `gpuprobe probes` lists "
                  "them; a value may hold commas)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("NAME=VALUE");
  app->add_flag("--check", f.check, "the probe's exactness check instead of timing");
}

void Job(CLI::App* app, std::vector<std::string>& args) {
  app->add_option("JOB", args, "the job's id (e.g. job-7)")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

}  // namespace

std::string VersionText() {
  return absl::StrCat("gpuprobe ", GPUPROBE_VERSION, " (commit ", GPUPROBE_COMMIT, ")");
}

std::variant<CommandLine, int> ParseCommandLine(int argc, const char* const* argv) {
  CommandLine line;
  ClientFlags& f = line.flags;
  CLI::App app(
      "gpuprobe: the command-line client of gpuprobed. Exit codes: 0 done, 1 the job "
      "failed or found no room, 2 a bad request (from this client or the daemon), 3 "
      "cancelled, 4 no daemon, 5 wait timed out, 6 compare found what --fail-on names, 7 "
      "not authenticated or not allowed.",
      "gpuprobe");
  app.fallthrough();  // global flags after the command too
  // A flag given twice: the last one counts (lists accumulate, below), as scripts expect.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", VersionText(), "print gpuprobe's version and commit");
  app.add_option("--server", f.server,
                 "gpuprobed address HOST:PORT (default $GPUPROBE_SERVER, else 127.0.0.1:7070)");
  app.add_option("--format", f.format, "table, tsv, csv or json")->capture_default_str();
  app.add_option("--token", f.token,
                 "bearer token for a daemon with --tokens (default $GPUPROBE_TOKEN)");
  app.add_option("--tls-ca", f.tls_ca,
                 "PEM root certificate(s): connect with TLS, trusting these (default "
                 "$GPUPROBE_TLS_CA)");

  CLI::App* sweep =
      app.add_subcommand("sweep", "run a MoE union sweep, printing its rows as they stream in");
  SweepFlags(sweep, f);
  CLI::App* check = app.add_subcommand(
      "check", "exactness of every kernel variant against the float64 reference");
  Geometry(check, f, /*check=*/true);
  check->add_option("--dump", f.dump,
                    "a local directory that receives the check's inputs and outputs as .npy "
                    "files (the job's artifacts, fetched from the daemon)");
  CLI::App* submit = app.add_subcommand(
      "submit", "queue a job (a sweep from the sweep flags, or --probe NAME); prints its id");
  SweepFlags(submit, f);
  submit->add_option("--probe", f.probe,
                     "the probe (gpuprobe probes lists them); default: a moe-union sweep");
  ProbeFlags(submit, f);
  submit->add_option("--priority", f.priority, "higher runs first; equal priorities in order")
      ->capture_default_str();
  submit->add_option("--idempotency-key", f.idempotency_key,
                     "a retried submit with the same key returns the first job");
  submit->add_flag("--wait", f.wait, "then wait for the job as `wait` does");
  Optional(submit, "--device", f.device,
           "run on this device index (gpuprobe info lists them); default the first free");
  submit->add_option("--gpu", f.gpu,
                     "run on a device of this model, e.g. \"NVIDIA H200\"; default any");
  submit->add_option("--host", f.host, "run on this host of the fleet; default any");
  submit->add_option("--timeout", f.timeout, "with --wait: give up after this long (e.g. 30m)");
  CLI::App* wait = app.add_subcommand("wait", "block until JOB ends; the exit code tells how");
  Job(wait, line.args);
  wait->add_option("--timeout", f.timeout, "give up after this long (e.g. 30m), exit 5");
  CLI::App* watch = app.add_subcommand("watch", "print JOB's rows as they are stored");
  Job(watch, line.args);
  watch->add_flag("--all-attempts", f.all_attempts,
                  "replay every attempt's events, not only the last attempt's");
  CLI::App* jobs = app.add_subcommand("jobs", "the newest jobs");
  jobs->add_option("--state", f.state,
                   "only these states (queued, running, succeeded, failed, cancelled)")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  jobs->add_option("--label", f.label, "only jobs with these labels: k=v,k2=v2")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  jobs->add_option("--limit", f.limit, "at most this many (1..1000), newest first")
      ->capture_default_str();
  Job(app.add_subcommand("show", "JOB's record and rows"), line.args);
  Job(app.add_subcommand("cancel", "remove JOB from the queue, or stop it running"), line.args);
  CLI::App* compare = app.add_subcommand(
      "compare",
      "arm by arm: CAND's time over BASE's with a 95% interval and a verdict (faster, slower, "
      "same, unsure)");
  std::string base, candidate;
  compare
      ->add_option("BASE", base,
                   "a job id, or label:KEY=VALUE[,KEY2=VALUE2] (the newest succeeded jobs "
                   "so labelled: the history)")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  compare->add_option("CAND", candidate, "the candidate job's id")
      ->required()
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  compare
      ->add_option("--threshold", f.threshold,
                   "ratios within 1 +- this are \"same\" (e.g. 2% or 0.02)")
      ->capture_default_str();
  compare
      ->add_option("--history", f.history,
                   "with a label BASE, how many of the newest matching jobs make the baseline "
                   "(at least 3 for a verdict; 0: 8)")
      ->capture_default_str();
  compare->add_option("--fail-on", f.fail_on,
                      "exit 6 when an arm is slower (slower), or slower or unsure (unsure)");
  app.add_subcommand("info", "describe the server, its devices and its fleet");
  app.add_subcommand("probes", "the probes the daemon serves, with their parameters");
  CLI::App* run = app.add_subcommand("run", "run a job of any probe, printing its results");
  run->add_option("PROBE", line.args, "the probe (gpuprobe probes lists them)")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  ProbeFlags(run, f);
  run->add_option("--label", f.label, "labels stored with the job: k=v,k2=v2")
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  CLI::App* help = app.add_subcommand("help", "this help, or a command's");
  std::string help_on;
  help->add_option("COMMAND", help_on, "the command")
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);

  // A word where a command belongs that is none: "did you mean".
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
  }
  auto usage_error = [&](const std::string& message, const std::string& hint) {
    std::cerr
        << "gpuprobe: " << message << (hint.empty() ? "" : "; " + hint) << "\n"
        << "`gpuprobe help` lists the commands, `gpuprobe COMMAND --help` a command's flags\n";
    return kExitUsage;
  };
  try {
    app.parse(DashedArgsReversed(argc, argv));
  } catch (const CLI::CallForHelp&) {
    const std::vector<CLI::App*> chosen = app.get_subcommands();
    // The chosen command's help, its usage line naming the program ("gpuprobe sweep").
    std::cout << (chosen.empty() ? app.help() : chosen[0]->help(app.get_name()));
    return kExitOk;
  } catch (const CLI::CallForVersion& e) {
    std::cout << e.what() << "\n";
    return kExitOk;
  } catch (const CLI::ExtrasError& e) {
    // Unknown words: a misspelt command, or a flag the chosen command does not take.
    const std::vector<CLI::App*> chosen = app.get_subcommands();
    for (const std::string& arg : app.remaining(/*recurse=*/true)) {
      if (absl::StartsWith(arg, "-") && !chosen.empty()) {
        const std::string name = arg.substr(0, arg.find('='));
        const std::vector<std::string> known = FlagNames(*chosen[0]);
        const std::string taking = CommandsTaking(app, name);
        if (!taking.empty()) {
          return usage_error(absl::StrCat(name, " is not a flag of ", chosen[0]->get_name()),
                             absl::StrCat("it belongs to ", taking));
        }
        const std::string near = Nearest(name, known);
        return usage_error(absl::StrCat(chosen[0]->get_name(), ": unknown flag ", name),
                           near.empty() ? "" : absl::StrCat("did you mean ", near, "?"));
      }
    }
    return usage_error(e.what(), "");
  } catch (const CLI::RequiredError& e) {
    if (app.get_subcommands().empty()) {
      // The first word left over (no flag, nor a flag's value) is where the command was.
      for (const std::string& arg : app.remaining()) {
        if (absl::StartsWith(arg, "-")) continue;
        const std::string near = Nearest(arg, commands);
        return usage_error(absl::StrCat("unknown command \"", arg, "\""),
                           near.empty() ? "" : absl::StrCat("did you mean ", near, "?"));
      }
      return usage_error("a command is needed", "");
    }
    return usage_error(e.what(), "");
  } catch (const CLI::ParseError& e) {
    return usage_error(e.what(), "");
  }
  CLI::App* chosen = app.get_subcommands()[0];
  if (chosen == help) {
    if (help_on.empty()) {
      // The program's help (app.help() would hand over to the chosen command, `help` itself).
      std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
      return kExitOk;
    }
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      if (sub->get_name() == help_on) {
        std::cout << sub->help(app.get_name());
        return kExitOk;
      }
    }
    const std::string near = Nearest(help_on, commands);
    return usage_error(absl::StrCat("help: unknown command \"", help_on, "\""),
                       near.empty() ? "" : absl::StrCat("did you mean ", near, "?"));
  }
  line.command = chosen->get_name();
  if (chosen == compare) line.args = {base, candidate};
  return line;
}

}  // namespace gpuprobe
