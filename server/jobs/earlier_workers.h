// A device worker of an earlier daemon, killed with it (PR_SET_PDEATHSIG), may still hold the
// device while the driver tears its context down, beside the restarted daemon's new worker
// (issue 55, item 6). A new worker serves no job until the device lists none.
#pragma once

#include <vector>

#include "absl/time/time.h"
#include "server/device/backend.h"

namespace gpuprobe {

// The name device workers carry in the device's process list (their argv[0]).
inline constexpr char kWorkerProcessName[] = "gpuprobed-worker";

// Waits until `device`'s readings list no earlier daemon's worker, at most `wait`: a worker that
// is gone here, a zombie, or an orphan (its daemon died). The live worker of a live daemon (two
// daemons sharing a device, as bench/telemetry-check.sh runs them) is not waited for. None to
// wait for on a device without readings (cpu, or no NVML). Returns the pids still listed.
std::vector<int> AwaitEarlierWorkersGone(Backend& device, absl::Duration wait);

}  // namespace gpuprobe
