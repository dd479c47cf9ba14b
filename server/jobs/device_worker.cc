#include "server/jobs/device_worker.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "server/jobs/proto_mapping.h"
#include "server/probe/exactness.h"
#include "server/probe/sweep_runner.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

// Forwards engine progress to the job's sink as protobuf events.
class SinkObserver final : public SweepObserver {
 public:
  SinkObserver(JobEventSink& sink, absl::Time start) : sink_(sink), start_(start) {}
  void OnRepDone(int reps_done, int reps_total) override {
    sink_.Publish(ProgressEvent(reps_done, reps_total, absl::ToDoubleSeconds(absl::Now() - start_)));
  }
  void OnRow(const ArmRow& row) override { sink_.Publish(RowEvent(row)); }

 private:
  JobEventSink& sink_;
  absl::Time start_;
};

class CheckSinkObserver final : public CheckObserver {
 public:
  explicit CheckSinkObserver(JobEventSink& sink) : sink_(sink) {}
  void OnCheck(const KernelCheckResult& result) override { sink_.Publish(CheckEvent(result)); }

 private:
  JobEventSink& sink_;
};

}  // namespace

DeviceWorker::DeviceWorker(std::unique_ptr<Backend> backend)
    : backend_(std::move(backend)), thread_([this] { Loop(); }) {}

DeviceWorker::~DeviceWorker() { Stop(); }

absl::StatusOr<int> DeviceWorker::Enqueue(std::shared_ptr<Job> job) {
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("gpuprobed is shutting down");
  const int ahead = static_cast<int>(queue_.size()) + (running_ ? 1 : 0);
  job->sink->Publish(AcceptedEvent(job->id, ahead));
  queue_.push_back(std::move(job));
  return ahead;
}

void DeviceWorker::Stop() {
  std::deque<std::shared_ptr<Job>> dropped;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
    if (running_) running_->cancelled = true;
    dropped.swap(queue_);
  }
  for (const std::shared_ptr<Job>& job : dropped) {
    job->sink->Publish(FinishedEvent(absl::CancelledError("gpuprobed shut down before the job "
                                                          "started"),
                                     0, 0.0, std::nullopt));
  }
  if (thread_.joinable()) thread_.join();
}

int DeviceWorker::QueueDepth() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(queue_.size()) + (running_ ? 1 : 0);
}

void DeviceWorker::Loop() {
  while (true) {
    std::shared_ptr<Job> job;
    {
      absl::MutexLock lock(&mu_);
      running_.reset();
      auto has_work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !queue_.empty();
      };
      mu_.Await(absl::Condition(&has_work));
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
      running_ = job;
    }
    RunJob(*job);
  }
}

void DeviceWorker::RunJob(Job& job) {
  const absl::Time start = absl::Now();
  spdlog::info("job {} started on {}", job.id, backend_->Description());
  job.sink->Publish(StartedEvent(backend_->Description(), job.spec));
  int produced = 0;
  std::optional<double> reference_section_us;
  const absl::Status status = job.kind == JobKind::kCheck
                                  ? RunCheckJob(job, &produced)
                                  : RunSweepJob(job, start, &produced, &reference_section_us);
  const double elapsed_s = absl::ToDoubleSeconds(absl::Now() - start);
  if (status.ok()) {
    spdlog::info("job {} succeeded: {} results in {:.2f} s", job.id, produced, elapsed_s);
  } else {
    spdlog::warn("job {} ended: {}", job.id, status.ToString());
  }
  job.sink->Publish(FinishedEvent(status, produced, elapsed_s, reference_section_us));
}

absl::Status DeviceWorker::RunSweepJob(Job& job, absl::Time start, int* rows,
                                       std::optional<double>* reference_section_us) {
  SinkObserver observer(*job.sink, start);
  absl::StatusOr<SweepOutcome> outcome = RunSweep(job.spec, *backend_, observer, job.cancelled);
  if (!outcome.ok()) return outcome.status();
  *rows = static_cast<int>(outcome->rows.size());
  *reference_section_us = outcome->reference_section_us;
  return absl::OkStatus();
}

absl::Status DeviceWorker::RunCheckJob(Job& job, int* checks) {
  CheckSinkObserver observer(*job.sink);
  absl::StatusOr<std::vector<KernelCheckResult>> results =
      RunExactnessCheck(job.spec, job.dump_dir, *backend_, observer, job.cancelled);
  if (!results.ok()) return results.status();
  *checks = static_cast<int>(results->size());
  const int64_t failed = std::count_if(results->begin(), results->end(),
                                       [](const KernelCheckResult& r) { return !r.passed; });
  if (failed > 0) {
    return absl::DataLossError(absl::StrFormat(
        "%d of %d kernel checks failed the exactness tolerance", failed, results->size()));
  }
  return absl::OkStatus();
}

}  // namespace gpuprobe
