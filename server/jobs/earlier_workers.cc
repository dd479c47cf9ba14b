#include "server/jobs/earlier_workers.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"

namespace gpuprobe {
namespace {

// Whether process `pid` is gone here, a zombie, or an orphan (its parent init): from
// /proc/PID/stat ("pid (comm) state ppid ...").
bool GoneOrOrphaned(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t comm_end = text.rfind(')');
  if (comm_end == std::string::npos) return true;
  std::istringstream rest(text.substr(comm_end + 1));
  char state = 0;
  int ppid = 0;
  if (!(rest >> state >> ppid)) return true;
  return state == 'Z' || state == 'X' || ppid <= 1;
}

}  // namespace

std::vector<int> AwaitEarlierWorkersGone(Backend& device, absl::Duration wait) {
  const absl::Time deadline = absl::Now() + wait;
  for (;;) {
    const std::optional<TelemetrySample> reading = device.SampleTelemetry();
    std::vector<int> workers;
    if (reading.has_value()) {
      for (const TelemetrySample::Process& p : reading->foreign_processes) {
        if (absl::EndsWith(p.name, kWorkerProcessName) && GoneOrOrphaned(p.pid)) {
          workers.push_back(p.pid);
        }
      }
    }
    if (workers.empty() || absl::Now() >= deadline) return workers;
    absl::SleepFor(absl::Milliseconds(100));
  }
}

}  // namespace gpuprobe
