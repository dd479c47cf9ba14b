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
#include "client/subcommands.h"
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

// Tells a usage mistake (and a hint, if any) on stderr; kExitUsage.
int UsageMistake(const std::string& message, const std::string& hint) {
  std::cerr << "gpuprobe: " << message << (hint.empty() ? "" : "; " + hint) << "\n"
            << "`gpuprobe help` lists the commands, `gpuprobe COMMAND --help` a command's flags\n";
  return kExitUsage;
}

// `gpuprobe help [COMMAND]`: the program's help, or the command's.
int Help(const CLI::App& app, const std::string& on, const std::vector<std::string>& commands) {
  if (on.empty()) {
    // The program's help (app.help() would hand over to the chosen command, `help` itself).
    std::cout << app.get_formatter()->make_help(&app, app.get_name(), CLI::AppFormatMode::Normal);
    return kExitOk;
  }
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == on) {
      std::cout << sub->help(app.get_name());
      return kExitOk;
    }
  }
  const std::string near = Nearest(on, commands);
  return UsageMistake(absl::StrCat("help: unknown command \"", on, "\""),
                      near.empty() ? "" : absl::StrCat("did you mean ", near, "?"));
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
  app.add_option(
         "--format", f.format,
         "table, tsv, csv or json; markdown for kernel and compare (a pull-request summary)")
      ->capture_default_str();
  app.add_option("--token", f.token,
                 "bearer token for a daemon with --tokens (default $GPUPROBE_TOKEN)");
  app.add_option("--tls-ca", f.tls_ca,
                 "PEM root certificate(s): connect with TLS, trusting these (default "
                 "$GPUPROBE_TLS_CA)");

  std::vector<Subcommand> subcommands = Subcommands();
  std::vector<CLI::App*> apps;
  for (const Subcommand& command : subcommands) {
    apps.push_back(app.add_subcommand(command.name, command.help));
    command.bind(*apps.back(), f, line.args);
  }
  CLI::App* help = app.add_subcommand("help", "this help, or a command's");
  std::string help_on;
  help->add_option("COMMAND", help_on, "the command")
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);

  // A word where a command belongs that is none: "did you mean".
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
  }
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
          return UsageMistake(absl::StrCat(name, " is not a flag of ", chosen[0]->get_name()),
                              absl::StrCat("it belongs to ", taking));
        }
        const std::string near = Nearest(name, known);
        return UsageMistake(absl::StrCat(chosen[0]->get_name(), ": unknown flag ", name),
                            near.empty() ? "" : absl::StrCat("did you mean ", near, "?"));
      }
    }
    return UsageMistake(e.what(), "");
  } catch (const CLI::RequiredError& e) {
    if (app.get_subcommands().empty()) {
      // The first word left over (no flag, nor a flag's value) is where the command was.
      for (const std::string& arg : app.remaining()) {
        if (absl::StartsWith(arg, "-")) continue;
        const std::string near = Nearest(arg, commands);
        return UsageMistake(absl::StrCat("unknown command \"", arg, "\""),
                            near.empty() ? "" : absl::StrCat("did you mean ", near, "?"));
      }
      return UsageMistake("a command is needed", "");
    }
    return UsageMistake(e.what(), "");
  } catch (const CLI::ParseError& e) {
    return UsageMistake(e.what(), "");
  }
  CLI::App* chosen = app.get_subcommands()[0];
  if (chosen == help) return Help(app, help_on, commands);
  line.command = subcommands[std::find(apps.begin(), apps.end(), chosen) - apps.begin()];
  return line;
}

}  // namespace gpuprobe
