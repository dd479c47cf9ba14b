// What the commands that follow a job share: reading its event stream (with a progress line on
// a terminal) and turning RPC failures into messages and exit codes.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "client/commands.h"

namespace gpuprobe {

// What a command does with each kind of event; StreamJob handles progress and the status.
struct EventHandlers {
  std::function<void(const v1::JobAccepted&)> accepted = [](const v1::JobAccepted&) {};
  std::function<void(const v1::JobStarted&)> started = [](const v1::JobStarted&) {};
  std::function<void(const v1::KernelCheck&)> check = [](const v1::KernelCheck&) {};
  std::function<void(const v1::Result&)> result = [](const v1::Result&) {};
  std::function<void(const v1::JobFinished&)> finished = [](const v1::JobFinished&) {};
};

// "gpuprobe: job J queued, N ahead" on stderr, for people and logs alike (a command that
// submits says which job it made).
void TellAccepted(const v1::JobAccepted& accepted);

// Tells on stderr that the job ended but its end is not stored yet (the command keeps waiting).
void TellEnding(const std::string& job_id, const v1::JobEnding& ending);

// Reads the stream to its end; returns the exit code of its final status. The job's id names
// it in messages: `known_job_id` (watch), else the stream's accepted event (sweep, check).
int StreamJob(const ClientContext& context, grpc::ClientReader<v1::JobEvent>& stream,
              const EventHandlers& on, const std::string& known_job_id = "");

// The server's message on stderr; the exit code of the failure (exit_codes.h).
int ReportRpcError(const ClientContext& context, const grpc::Status& status);

// A bad flag or argument: the message on stderr, kExitUsage.
int UsageError(const absl::Status& status);

}  // namespace gpuprobe
