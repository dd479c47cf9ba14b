#include "server/jobs/fleet_membership.h"

#include <unistd.h>

#include <algorithm>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "common/status_macros.h"
#include "server/jobs/retry_log.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

// A daemon's id in the fleet registry: its host, process id and a random suffix, unique per
// start.
std::string NewDaemonId(const std::string& host) {
  return absl::StrFormat("%s/%d-%04x", host, getpid(),
                         absl::Uniform<uint32_t>(absl::BitGen(), 0, 0x10000));
}

FleetOptions WithDaemonId(FleetOptions options) {
  if (options.daemon_id.empty()) options.daemon_id = NewDaemonId(options.host);
  return options;
}

// Logs each job whose lease expired; true when one was queued again.
bool LogExpired(const std::vector<ExpiredLease>& expired) {
  bool queued = false;
  for (const ExpiredLease& e : expired) {
    queued |= e.queued_again;
    spdlog::warn("job {} was interrupted: {}; {}", e.job_id, e.reason,
                 e.queued_again ? "queued again" : "ended");
  }
  return queued;
}

}  // namespace

FleetMembership::FleetMembership(JobStore& store, FleetOptions options,
                                 std::vector<DeviceRegistration> devices, int max_attempts)
    : store_(store),
      options_(WithDaemonId(std::move(options))),
      registration_{
          .daemon_id = options_.daemon_id, .host = options_.host, .devices = std::move(devices)},
      max_attempts_(max_attempts) {}

FleetMembership::~FleetMembership() { Leave(); }

absl::Status FleetMembership::Join(Hooks hooks) {
  hooks_ = std::move(hooks);
  RETURN_IF_ERROR(store_.Register(registration_, absl::Now()));
  absl::StatusOr<std::vector<ExpiredLease>> expired =
      store_.RequeueExpired(max_attempts_, absl::Now());
  RETURN_IF_ERROR(expired.status());
  LogExpired(*expired);
  spdlog::info("member of the {} store's fleet as {}", store_.Kind(), options_.daemon_id);
  absl::MutexLock lock(&mu_);
  joined_ = true;
  heartbeat_ = std::thread([this] { HeartbeatLoop(); });
  return absl::OkStatus();
}

void FleetMembership::Leave() {
  {
    absl::MutexLock lock(&mu_);
    if (!joined_ || leaving_) return;
    leaving_ = true;
  }
  heartbeat_.join();
  if (absl::Status s = store_.Unregister(options_.daemon_id); !s.ok()) {
    spdlog::warn("could not leave the fleet registry: {}", s.ToString());
  }
}

absl::StatusOr<std::vector<v1::FleetDevice>> FleetMembership::Devices() {
  // Three missed heartbeats, at least a lease: lost.
  return store_.FleetDevices(absl::Now(), std::max(3 * options_.heartbeat, options_.lease));
}

void FleetMembership::HeartbeatLoop() {
  RetryLog heartbeat_log("heartbeat");
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto leaving = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return leaving_; };
      if (mu_.AwaitWithTimeout(absl::Condition(&leaving), options_.heartbeat)) return;
    }
    const std::vector<std::string> running = hooks_.running();
    const absl::Time now = absl::Now();
    // One transaction: the renewal, the store's test write and the look for expired leases.
    auto beat = [&] {
      return store_.HeartbeatAndSweep(options_.daemon_id, running, now, now + options_.lease,
                                      max_attempts_);
    };
    absl::StatusOr<JobStore::Beat> beaten = beat();
    if (absl::IsNotFound(beaten.status())) {
      // The registry forgot this daemon (it was silent for 10 minutes, or a daemon started on
      // its host with one of its device indices): join again.
      spdlog::warn("this daemon's fleet registry entry was removed; registering again");
      (void)store_.Register(registration_, now);
      beaten = beat();
    }
    heartbeat_log.Record(beaten.status());
    if (hooks_.store_health) hooks_.store_health(beaten.ok() ? beaten->writable : beaten.status());
    if (!beaten.ok()) continue;
    for (const std::string& id : beaten->cancels) hooks_.cancel(id);
    if (LogExpired(beaten->expired) && hooks_.queued_again) hooks_.queued_again();
  }
}

}  // namespace gpuprobe
