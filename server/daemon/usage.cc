#include "server/daemon/usage.h"

#include <string>

#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gpuprobe_commit.h"

namespace gpuprobe {

void ConfigureDaemonUsage() {
  absl::SetProgramUsageMessage(
      "owns this host's GPUs and serves probe jobs over gRPC (README: \"Using it\").\n"
      "  gpuprobed --listen HOST:PORT --backend auto|cuda|cpu --data-dir DIR [flags]");
  static constexpr absl::string_view kOptionsDir = "server/options/";
  const auto daemon_flags = [](absl::string_view file) {
    return absl::StrContains(file, kOptionsDir);
  };
  const auto repository_path = [](absl::string_view file) {
    const size_t at = file.rfind(kOptionsDir);
    return std::string(at == absl::string_view::npos ? file : file.substr(at));
  };
  absl::SetFlagsUsageConfig({.contains_helpshort_flags = daemon_flags,
                             .contains_help_flags = daemon_flags,
                             .contains_helppackage_flags = daemon_flags,
                             .version_string =
                                 [] {
                                   return absl::StrCat("gpuprobed ", GPUPROBE_VERSION, " (commit ",
                                                       GPUPROBE_COMMIT, ")\n");
                                 },
                             .normalize_filename = repository_path});
}

}  // namespace gpuprobe
