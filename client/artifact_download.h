// `gpuprobe check --dump DIR`: the job's artifacts, kept in the daemon's own storage, copied
// into the client's local DIR (created if missing) through ListArtifacts and GetArtifact.
#pragma once

#include <string>

#include "client/commands.h"

namespace gpuprobe {

// Returns an exit code (exit_codes.h); says on stderr what it wrote.
int DownloadArtifacts(const ClientContext& context, const std::string& job_id,
                      const std::string& dir);

}  // namespace gpuprobe
