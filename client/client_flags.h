// Every flag of `gpuprobe`, as the command line (client/cli.h) gave it: the global ones, and
// those of each command (a command is given only its own; an unset optional is "not given", so
// that the daemon's default, or the seed's environment variable, applies).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client/param_flags.h"

namespace gpuprobe {

struct ClientFlags {
  // Global.
  std::string server, format = "table", token, tls_ca;
  // sweep, check, submit: the moe-union request's declared parameters, its labels, and the
  // check's local --dump directory.
  ParamFlags moe_union;
  std::vector<std::string> label;
  std::string dump;
  // run, submit --probe.
  std::string probe;
  std::vector<std::string> params;
  bool check = false;
  // submit, wait, watch, jobs.
  int32_t priority = 0;
  std::string idempotency_key, gpu, host, timeout;
  std::optional<int32_t> device;
  bool wait = false, all_attempts = false;
  std::vector<std::string> state;
  int32_t limit = 20;
  // compare.
  std::string base, candidate, threshold = "2%", fail_on;
  int32_t history = 0;
  int32_t confirm = 0;  // compare: re-runs of a candidate found slower
  // kernel.
  std::string kernel_spec, baseline_module, candidate_module;
  std::vector<std::string> kernel_modules;
  std::string kernel_name, kernel_grid, kernel_block;  // without a spec: one launch
  uint32_t kernel_smem = 0;
  std::vector<std::string> kernel_buffers, kernel_args;
};

}  // namespace gpuprobe
