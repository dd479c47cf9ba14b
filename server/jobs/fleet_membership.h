// This daemon as a member of the store's fleet (a fleet of one with SQLite): its entry in the
// fleet registry, and the heartbeat that renews the leases of the jobs it runs, hears the
// cancellations asked through other daemons, finds out whether the store takes writes (the
// daemon's health), and queues again the jobs whose lease expired (their daemon was lost), or
// fails them after their last attempt.
//
//   FleetMembership fleet(store, options, registration, /*max_attempts=*/2);
//   RETURN_IF_ERROR(fleet.Join({.running = ..., .cancel = ...}));
//   ...
//   fleet.Leave();
#pragma once

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/store/job_store.h"

namespace gpuprobe {

// This daemon as a member of the store's fleet (a fleet of one with SQLite).
struct FleetOptions {
  // As jobs' host targets name it (gpuprobed --host-name).
  std::string host = "localhost";
  // Unique per start; empty: made from the host, the process id and a random suffix.
  std::string daemon_id;
  // A running job's lease: another daemon may take the job over once it expired.
  absl::Duration lease = absl::Seconds(30);
  // How often the daemon heartbeats (renews its leases, hears remote cancels) and looks for
  // expired leases.
  absl::Duration heartbeat = absl::Seconds(1);
  // How often an idle device looks for queued jobs when nothing woke it. A job queued wakes
  // a device at once: this daemon's own on a store of its own, else the few daemons that the
  // store's announcement names (SqlJobStore::AnnounceQueued). This poll is the backstop for
  // announcements lost while the store was away, or that named a daemon that had just died.
  absl::Duration claim_poll = absl::Seconds(5);
  // How often a watcher of a shared store's job looks for new events when no notification
  // came (the store announces each one as it commits; a lost connection feeds every watcher
  // when it is back): the backstop, as claim_poll is. Each look is a read of the store for
  // each watched job, so a shorter one costs a fleet a transaction per job watched each time.
  absl::Duration watch_poll = absl::Seconds(5);
};

class FleetMembership {
 public:
  // What the heartbeat asks of the daemon.
  struct Hooks {
    // The job each device runs now, by device index ("" when idle).
    std::function<std::vector<std::string>()> running;
    // Stops a job this daemon runs: a cancel asked through another daemon.
    std::function<void(const std::string& job_id)> cancel;
    // At every heartbeat, whether the store takes writes: the heartbeat's own error, else a
    // probe write's answer (a row as large as a few events). OK: it does.
    std::function<void(const absl::Status& answer)> store_health;
    // Jobs whose lease expired were queued again: the idle devices look for them.
    std::function<void()> queued_again;
  };

  // `options.daemon_id` empty: one is made from the host, the process id and a random suffix.
  FleetMembership(JobStore& store, FleetOptions options, std::vector<DeviceRegistration> devices,
                  int max_attempts);
  ~FleetMembership();  // Leave()
  FleetMembership(const FleetMembership&) = delete;
  FleetMembership& operator=(const FleetMembership&) = delete;

  // Registers the daemon and its devices, queues again (or fails) the jobs whose daemon is
  // gone, then heartbeats every options().heartbeat until Leave.
  absl::Status Join(Hooks hooks);
  // Stops the heartbeat and leaves the registry. Idempotent.
  void Leave();

  // Every device of the fleet sharing the store (this daemon's included).
  absl::StatusOr<std::vector<v1::FleetDevice>> Devices();
  const DaemonRegistration& registration() const { return registration_; }
  const FleetOptions& options() const { return options_; }

 private:
  void HeartbeatLoop();

  JobStore& store_;
  const FleetOptions options_;
  const DaemonRegistration registration_;
  const int max_attempts_;
  Hooks hooks_;
  absl::Mutex mu_;
  bool joined_ ABSL_GUARDED_BY(mu_) = false;
  bool leaving_ ABSL_GUARDED_BY(mu_) = false;
  std::thread heartbeat_;
};

}  // namespace gpuprobe
