// Command lines spell flags with dashes (--data-dir, --t-values); Abseil flags are C++
// identifiers (data_dir, t_values). This rewrites the name part of each "--flag[=value]"
// argument so that both spellings work.
//
//   std::vector<std::string> storage;
//   std::vector<char*> args = DashesToUnderscores(argc, argv, storage);
//   absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
#pragma once

#include <algorithm>
#include <string>
#include <vector>

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

}  // namespace gpuprobe
