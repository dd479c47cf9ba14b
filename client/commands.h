// The `gpuprobe` commands. Each prints results on stdout, errors on stderr, and returns an exit
// code from exit_codes.h.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/client_flags.h"
#include "gpuprobe/v1/probe.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"

namespace gpuprobe {

struct ClientContext {
  std::string server;  // HOST:PORT
  std::string format;  // table, tsv, csv, json
  std::string token;   // bearer token; empty: none
  std::shared_ptr<grpc::Channel> channel;
  const ClientFlags* flags = nullptr;  // the command line's flags (cli.h)

  // Every call carries the token, when there is one.
  void Prepare(grpc::ClientContext& rpc) const {
    if (!token.empty()) rpc.AddMetadata("authorization", "Bearer " + token);
  }
};

// Submits the sweep given by the flags and prints its rows as they stream in; a progress line
// goes to stderr when stderr is a terminal.
int SweepCommand(const ClientContext& context);

// Runs an exactness job and prints one line per kernel check; exit 1 if any fails.
int CheckCommand(const ClientContext& context);

// Job commands; JOB is the positional argument after the command.
// submit: queues a sweep (the sweep flags), or with --probe NAME a job of any probe (--param
//   NAME=VALUE, --check); --priority, --idempotency-key; prints the job id on the last line of
//   stdout; with --wait then waits as `wait` does.
int SubmitCommand(const ClientContext& context);
// wait JOB [--timeout 10m]: blocks until JOB ends; exit 0 succeeded, 1 failed, 3 cancelled,
//   5 timed out, 4 unreachable.
int WaitCommand(const ClientContext& context, const std::string& job_id);
// watch JOB: prints JOB's rows (or checks) as they are stored, replaying earlier ones first.
int WatchCommand(const ClientContext& context, const std::string& job_id);
// jobs [--state queued,running] [--label k=v] [--limit N]: the newest jobs, one per line.
int JobsCommand(const ClientContext& context);
// show JOB: the job's record, then its rows (last attempt) in --format.
int ShowCommand(const ClientContext& context, const std::string& job_id);
// cancel JOB.
int CancelCommand(const ClientContext& context, const std::string& job_id);

// compare BASE CAND [--threshold 2%] [--fail-on slower|unsure]: CompareJobs in --format;
//   BASE is a job id or label:KEY=VALUE; exit 6 when --fail-on finds what it names.
int CompareCommand(const ClientContext& context, const std::string& base,
                   const std::string& candidate);

// Prints the server's version, backend, device and queue depth.
int InfoCommand(const ClientContext& context);

}  // namespace gpuprobe
