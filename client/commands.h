// The `gpuprobe` commands. Each prints results on stdout, errors on stderr, and returns an exit
// code from exit_codes.h.
#pragma once

#include <memory>
#include <string>

#include "gpuprobe/v1/probe.grpc.pb.h"
#include "grpcpp/channel.h"

namespace gpuprobe {

struct ClientContext {
  std::string server;  // HOST:PORT
  std::string format;  // table, tsv, csv, json
  std::shared_ptr<grpc::Channel> channel;
};

// Submits the sweep given by the flags and prints its rows as they stream in; a progress line
// goes to stderr when stderr is a terminal.
int SweepCommand(const ClientContext& context);

// Runs an exactness job and prints one line per kernel check; exit 1 if any fails.
int CheckCommand(const ClientContext& context);

// Prints the server's version, backend, device and queue depth.
int InfoCommand(const ClientContext& context);

}  // namespace gpuprobe
