#include "server/jobs/worker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "gpuprobe/v1/worker.pb.h"
#include "server/device/backend_factory.h"
#include "server/jobs/earlier_workers.h"
#include "server/jobs/framing.h"
#include "server/probes/job_events.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

// The daemon-side picture of a worker's backend, from its hello: enough to validate requests
// before they are queued. Nothing runs on it.
class RemoteBackend final : public Backend {
 public:
  explicit RemoteBackend(v1::WorkerHello hello) : hello_(std::move(hello)) {}
  std::string Name() const override { return hello_.backend(); }
  std::string Description() const override { return hello_.description(); }
  int64_t MemoryCapacityBytes() const override {
    return static_cast<int64_t>(hello_.memory_capacity_bytes());
  }
  DeviceDetails Details() const override {
    const v1::DeviceDetails& d = hello_.details();
    return DeviceDetails{.name = d.name(),
                         .multiprocessors = static_cast<int>(d.multiprocessors()),
                         .l2_bytes = static_cast<int64_t>(d.l2_bytes()),
                         .memory_bytes = static_cast<int64_t>(d.memory_bytes()),
                         .driver_version = static_cast<int>(d.driver_version()),
                         .runtime_version = static_cast<int>(d.runtime_version()),
                         .calibrated_read_tbps = d.calibrated_read_tbps(),
                         .calibration_bytes = static_cast<int64_t>(d.calibration_bytes())};
  }

 private:
  const v1::WorkerHello hello_;
};

JobOutcome Failed(absl::Status status) {
  JobOutcome outcome;
  outcome.status = std::move(status);
  return outcome;
}

}  // namespace

absl::StatusOr<std::unique_ptr<WorkerProcessExecutor>> WorkerProcessExecutor::Start(
    std::string binary, std::vector<std::string> worker_args) {
  std::unique_ptr<WorkerProcessExecutor> executor(
      new WorkerProcessExecutor(std::move(binary), std::move(worker_args)));
  if (absl::Status s = executor->Spawn(); !s.ok()) return s;
  return executor;
}

WorkerProcessExecutor::~WorkerProcessExecutor() {
  if (fd_ >= 0) close(fd_);  // the worker reads EOF and exits
  if (pid_ > 0) waitpid(pid_, nullptr, 0);
}

absl::Status WorkerProcessExecutor::Spawn() {
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return absl::InternalError(absl::StrCat("socketpair: ", std::strerror(errno)));
  }
  // argv[0] names the process for ps and for NVML's process list (telemetry's foreign processes).
  std::vector<std::string> args = {kWorkerProcessName, absl::StrCat("--worker_fd=", fds[1])};
  args.insert(args.end(), worker_args_.begin(), worker_args_.end());
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (pid == 0) {
    // Killed with the daemon (issue 55, item 6: a worker outlived a kill -9 of its daemon by
    // 1.3-3.4 s, beside the restarted daemon's new worker). The signal comes when the thread
    // that forked ends: the main thread, or a device's, each of which lives as long as the
    // daemon serves. A daemon already gone before the prctl is seen as a new parent.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    // The child keeps its end open across exec and nothing else of the daemon's.
    fcntl(fds[1], F_SETFD, 0);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    // The daemon blocks SIGINT/SIGTERM for its own sigwait; the worker takes the defaults.
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    execv(binary_.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  ++spawns_;
  jobs_since_spawn_ = 0;
  pid_ = pid;
  fd_ = fds[0];
  v1::WorkerReport report;
  if (absl::Status s = ReadFramed(fd_, &report); !s.ok() || !report.has_hello()) {
    return absl::UnavailableError(absl::StrCat("the device worker did not start: ", Reap()));
  }
  visible_devices_ = static_cast<int>(report.hello().visible_devices());
  info_ = std::make_unique<RemoteBackend>(report.hello());
  spdlog::info("device worker {} ready: {}", pid_, info_->Description());
  return absl::OkStatus();
}

std::string WorkerProcessExecutor::Reap() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  int status = 0;
  const pid_t pid = pid_;
  pid_ = -1;
  if (pid <= 0 || waitpid(pid, &status, 0) != pid) return "its process is gone";
  if (WIFSIGNALED(status)) {
    return absl::StrFormat("killed by signal %d (%s)", WTERMSIG(status),
                           strsignal(WTERMSIG(status)));
  }
  return absl::StrFormat("exited with status %d", WEXITSTATUS(status));
}

bool WorkerProcessExecutor::Alive() {
  if (fd_ < 0 || pid_ <= 0) return false;
  // A worker that exited (or was killed) while idle: its socket reads EOF or hangs up.
  pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
  if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLIN)) != 0) return false;
  return waitpid(pid_, nullptr, WNOHANG) == 0;
}

void WorkerProcessExecutor::Replace(const std::string& why) {
  if (pid_ > 0) kill(pid_, SIGKILL);
  const std::string how = Reap();
  spdlog::warn("device worker {}: {}; starting a new one", how, why);
  if (absl::Status s = Spawn(); !s.ok()) spdlog::error("{}", s.ToString());
}

absl::Status WorkerProcessExecutor::Hand(const v1::WorkerCommand& command) {
  for (int attempt = 1;; ++attempt) {
    RETURN_IF_ERROR(WriteFramed(fd_, command));
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(kTakeTimeout))) > 0) {
      v1::WorkerReport report;
      RETURN_IF_ERROR(ReadFramed(fd_, &report));
      if (report.has_took()) return absl::OkStatus();
      return absl::InternalError("the device worker answered a job with something else first");
    }
    const std::string why =
        absl::StrFormat("it did not take a job within %.0f s (stopped or hung while idle)",
                        absl::ToDoubleSeconds(kTakeTimeout));
    Replace(why);
    if (attempt == 2 || fd_ < 0) {
      return absl::DeadlineExceededError(absl::StrCat("no device worker took the job: ", why));
    }
  }
}

JobOutcome WorkerProcessExecutor::Run(const JobRun& run, const EventPublisher& publish,
                                      const std::atomic<bool>& cancelled) {
  if (run.probe->Info().client_code() && jobs_since_spawn_ > 0 && Alive()) {
    // A client's GPU code runs in a worker that ran nothing before it, in a context that holds
    // no other job's memory.
    close(fd_);  // the worker reads EOF and exits
    fd_ = -1;
    Reap();
  }
  if (!Alive()) {
    if (fd_ >= 0) {
      // Died while idle: the job is innocent; it runs on a fresh worker.
      const std::string how = Reap();
      spdlog::warn("device worker died while idle ({}); starting a new one", how);
    }
    if (absl::Status s = Spawn(); !s.ok()) return Failed(s);
  }
  v1::WorkerCommand command;
  command.mutable_run()->set_job_id(run.run.job_id);
  command.mutable_run()->set_artifact_dir(run.run.artifact_dir);
  command.mutable_run()->set_probe(run.probe->Name());
  command.mutable_run()->mutable_resolved()->PackFrom(*run.run.spec);
  command.mutable_run()->set_check(run.run.check);
  command.mutable_run()->set_fault(run.fault);
  command.mutable_run()->mutable_modules()->insert(run.run.modules.begin(), run.run.modules.end());
  absl::Status sent = Hand(command);
  ++jobs_since_spawn_;
  if (absl::IsDeadlineExceeded(sent)) return Failed(sent);
  bool cancel_sent = false;
  absl::Time last_heard = absl::Now(), cancel_sent_at = absl::InfiniteFuture();
  while (sent.ok()) {
    if (cancelled.load() && !cancel_sent) {
      v1::WorkerCommand cancel;
      cancel.mutable_cancel();
      cancel_sent = true;
      cancel_sent_at = absl::Now();
      if (!WriteFramed(fd_, cancel).ok()) break;
    }
    pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
    if (poll(&p, 1, /*timeout_ms=*/50) == 0) {
      const absl::Time now = absl::Now();
      if (now - cancel_sent_at > kCancelGrace) {
        Replace("it did not stop within the grace period after a cancel");
        return Failed(absl::CancelledError(absl::StrFormat(
            "cancelled; the device worker did not stop within %.0f s, so it was killed and "
            "restarted",
            absl::ToDoubleSeconds(kCancelGrace))));
      }
      if (now - last_heard > run.watchdog) {
        Replace("it stopped answering");
        return Failed(absl::AbortedError(absl::StrFormat(
            "the device worker sent nothing for %.1f s, more than the job's watchdog (%.1f s, "
            "from its plan: a launch past its bound, or a hang); it was killed and restarted",
            absl::ToDoubleSeconds(now - last_heard), absl::ToDoubleSeconds(run.watchdog))));
      }
      continue;
    }
    v1::WorkerReport report;
    if (!ReadFramed(fd_, &report).ok()) break;
    last_heard = absl::Now();
    if (report.has_event()) publish(report.event());
    if (report.has_outcome()) {
      const v1::WorkerJobOutcome& o = report.outcome();
      JobOutcome outcome;
      outcome.status = absl::Status(static_cast<absl::StatusCode>(o.code()), o.message());
      outcome.results = static_cast<int>(o.results());
      if (outcome.status.code() == absl::StatusCode::kInternal || run.probe->Info().client_code()) {
        // A device error (a sticky CUDA error poisons the worker's context), or a client's
        // GPU code, whose worker serves its job alone: the next job gets a fresh worker.
        spdlog::info("job {} ended ({}); starting a fresh worker for the next job", run.run.job_id,
                     outcome.status.ToString());
        close(fd_);  // the worker reads EOF and exits
        fd_ = -1;
        Reap();
        if (absl::Status s = Spawn(); !s.ok()) spdlog::error("{}", s.ToString());
      }
      return outcome;
    }
  }
  // The worker died under the job: fail the job with the reason, start a fresh worker.
  const std::string how = Reap();
  spdlog::error("device worker died during job {}: {}; starting a new one", run.run.job_id, how);
  const absl::Status restarted = Spawn();
  if (!restarted.ok()) spdlog::error("{}", restarted.ToString());
  return Failed(absl::InternalError(
      absl::StrFormat("the device worker died while running the job (%s); it was restarted", how)));
}

}  // namespace gpuprobe
