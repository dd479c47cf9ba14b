// Command lines spell flags with dashes (--data-dir, --t-values); Abseil flags are C++
// identifiers (data_dir, t_values). This rewrites the name part of each "--flag[=value]"
// argument so that both spellings work, and checks the arguments before Abseil sees them.
//
//   std::vector<std::string> storage;
//   std::vector<char*> args = DashesToUnderscores(argc, argv, storage);
//   if (!CheckFlagArguments(args).ok()) return 2;
//   absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpuprobe {

// `storage` owns the rewritten strings the returned pointers point into.
inline std::vector<char*> DashesToUnderscores(int argc, char** argv,
                                              std::vector<std::string>& storage) {
  storage.assign(argv, argv + argc);
  for (std::string& arg : storage) {
    if (arg.rfind("--", 0) != 0 || arg == "--") continue;
    const size_t end = std::min(arg.find('='), arg.size());
    for (size_t i = 2; i < end; ++i) {
      if (arg[i] == '-') arg[i] = '_';
    }
  }
  std::vector<char*> out;
  for (std::string& arg : storage) out.push_back(arg.data());
  return out;
}

// Takes every "--NAME VALUE" and "--NAME=VALUE" of a rewritten command line out of `args`, in
// order, and returns the values: for flags that may be given many times, whose values may hold
// commas (an Abseil list flag would split them, and keep only the last occurrence).
inline std::vector<std::string> TakeRepeatedFlag(std::vector<char*>& args,
                                                 const std::string& name) {
  const std::string bare = "--" + name, with_value = bare + "=";
  std::vector<std::string> values;
  std::vector<char*> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string arg = args[i];
    if (arg == bare && i + 1 < args.size()) {
      values.push_back(args[++i]);
    } else if (arg.rfind(with_value, 0) == 0) {
      values.push_back(arg.substr(with_value.size()));
    } else {
      kept.push_back(args[i]);
    }
  }
  args = std::move(kept);
  return values;
}

// Checks every "--name[=value]" (or "--name value") of a rewritten command line against the
// program's flags before Abseil parses it: Abseil exits with status 1 on a bad flag, where the
// programs promise 2 for a bad command line. INVALID_ARGUMENT names the flag.
inline absl::Status CheckFlagArguments(const std::vector<char*>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string arg = args[i];
    if (arg == "--") break;
    if (arg.rfind("--", 0) != 0) continue;
    const size_t eq = arg.find('=');
    std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    std::string spelled = name;  // as people write it, in messages
    std::replace(spelled.begin(), spelled.end(), '_', '-');
    if (name == "help" || name == "helpfull" || name == "helpshort" || name == "helppackage" ||
        name == "version" || name == "only_check_args") {
      continue;
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    const bool negated = flag == nullptr && name.rfind("no", 0) == 0;
    if (negated) flag = absl::FindCommandLineFlag(name.substr(2));
    if (flag == nullptr || (negated && !flag->IsOfType<bool>())) {
      return absl::InvalidArgumentError(absl::StrCat("--", spelled, ": no such flag"));
    }
    if (negated || (eq == std::string::npos && flag->IsOfType<bool>())) continue;
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(absl::StrCat("--", spelled, ": missing value"));
    }
    std::string error;
    if (!flag->ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(absl::StrCat("--", spelled, ": ", error));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpuprobe
