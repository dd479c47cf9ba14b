#include "server/jobs/worker_main.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "gpuprobe/v1/worker.pb.h"
#include "server/jobs/earlier_workers.h"
#include "server/jobs/framing.h"
#include "server/jobs/job_execution.h"
#include "server/probes/job_events.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

v1::WorkerHello Hello(const Backend& backend, int visible_devices) {
  v1::WorkerHello hello;
  hello.set_visible_devices(static_cast<uint32_t>(visible_devices));
  hello.set_backend(backend.Name());
  hello.set_description(backend.Description());
  hello.set_memory_capacity_bytes(backend.MemoryCapacityBytes());
  *hello.mutable_details() = DeviceDetailsToProto(backend.Details());
  return hello;
}

// The fault a test asked for (WorkerRunJob.fault), honoured only where GPUPROBE_ALLOW_FAULTS=1;
// empty otherwise.
std::string FaultRequested(const v1::WorkerRunJob& run) {
  const char* allow = std::getenv("GPUPROBE_ALLOW_FAULTS");
  if (allow == nullptr || std::string(allow) != "1") return "";
  return run.fault();
}

// Commands arrive on a reader thread, so that a cancel reaches a running job.
class CommandQueue {
 public:
  explicit CommandQueue(int fd) : fd_(fd), reader_([this] { Read(); }) {}
  ~CommandQueue() { reader_.join(); }

  // The next job to run; nullopt once the daemon has closed the socket.
  std::optional<v1::WorkerRunJob> Next() {
    absl::MutexLock lock(&mu_);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return closed_ || !runs_.empty(); };
    mu_.Await(absl::Condition(&ready));
    if (runs_.empty()) return std::nullopt;
    v1::WorkerRunJob run = std::move(runs_.front());
    runs_.pop_front();
    cancelled = false;
    return run;
  }

  std::atomic<bool> cancelled{false};

 private:
  void Read() {
    v1::WorkerCommand command;
    while (ReadFramed(fd_, &command).ok()) {
      absl::MutexLock lock(&mu_);
      if (command.has_run()) runs_.push_back(command.run());
      if (command.has_cancel()) cancelled = true;
    }
    absl::MutexLock lock(&mu_);
    closed_ = true;
    cancelled = true;  // the daemon is gone: stop the running job
  }

  const int fd_;
  absl::Mutex mu_;
  std::deque<v1::WorkerRunJob> runs_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reader_;
};

// gpuprobe.fault=slow's wait in every timed sample of its job.
constexpr int64_t kSlowFaultWaitNs = 1'000'000;

// How long a new worker waits for an earlier daemon's worker to leave the device.
constexpr absl::Duration kEarlierWorkersWait = absl::Seconds(10);

}  // namespace

int RunWorker(int fd, std::unique_ptr<Backend> backend, int visible_devices,
              const ProbeRegistry& probes) {
  if (const std::vector<int> left = AwaitEarlierWorkersGone(*backend, kEarlierWorkersWait);
      !left.empty()) {
    spdlog::warn(
        "worker: the device still lists {} earlier worker(s) (pid {}) after {}; jobs "
        "run beside them flagged (a foreign process)",
        left.size(), left.front(), absl::FormatDuration(kEarlierWorkersWait));
  }
  v1::WorkerReport hello;
  *hello.mutable_hello() = Hello(*backend, visible_devices);
  if (!WriteFramed(fd, hello).ok()) return 1;
  CommandQueue commands(fd);
  while (std::optional<v1::WorkerRunJob> run = commands.Next()) {
    v1::WorkerReport took;
    took.mutable_took();
    if (!WriteFramed(fd, took).ok()) break;
    const std::string fault = FaultRequested(*run);
    if (fault == "abort") {
      spdlog::warn("worker: aborting on request (gpuprobe.fault=abort)");
      std::abort();
    }
    if (fault == "hang") {
      spdlog::warn("worker: stopping itself on request (gpuprobe.fault=hang)");
      raise(SIGSTOP);
    }
    // A known slowdown of this job alone: a wait in every timed sample.
    const int64_t injected_wait_ns = backend->injected_wait_ns();
    if (fault == "slow") {
      spdlog::warn("worker: {} ns more in every sample of this job (gpuprobe.fault=slow)",
                   kSlowFaultWaitNs);
      backend->set_injected_wait_ns(injected_wait_ns + kSlowFaultWaitNs);
    }
    const EventPublisher publish = [fd](v1::JobEvent event) {
      v1::WorkerReport report;
      *report.mutable_event() = std::move(event);
      (void)WriteFramed(fd, report);
    };
    const JobOutcome outcome = ExecuteJob(probes, *run, *backend, publish, commands.cancelled);
    backend->set_injected_wait_ns(injected_wait_ns);
    v1::WorkerReport report;
    v1::WorkerJobOutcome* o = report.mutable_outcome();
    o->set_code(static_cast<int>(outcome.status.code()));
    o->set_message(std::string(outcome.status.message()));
    o->set_results(outcome.results);
    if (!WriteFramed(fd, report).ok()) break;
  }
  return 0;
}

}  // namespace gpuprobe
