// `gpuprobe check --dump DIR`: the job's artifacts, kept in the daemon's own storage, copied
// into the client's local DIR (created if missing) through ListArtifacts and GetArtifact.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "client/commands.h"

namespace gpuprobe {

// INVALID_ARGUMENT naming --dump when `dir` exists and is no directory (checked before the job
// is submitted).
absl::Status CheckDumpDir(const std::string& dir);

// Returns an exit code (exit_codes.h); says on stderr what it wrote. Each file is written
// beside its name and renamed onto it; a symbolic link at a name is refused, naming it.
int DownloadArtifacts(const ClientContext& context, const std::string& job_id,
                      const std::string& dir);

}  // namespace gpuprobe
