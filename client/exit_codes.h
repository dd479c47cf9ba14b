// What `gpuprobe` exits with, so that scripts and CI can tell failures apart.
#pragma once

#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

inline constexpr int kExitOk = 0;
inline constexpr int kExitJobFailed = 1;  // failed while running, or refused for want of room
// A bad request, whichever side finds it: the command line, or the daemon (INVALID_ARGUMENT,
// naming the field and its limit).
inline constexpr int kExitUsage = 2;
inline constexpr int kExitCancelled = 3;  // the job was cancelled
// No gpuprobed answered at --server, or it answered that it cannot serve now (its job store is
// away): either way, worth trying again later.
inline constexpr int kExitUnreachable = 4;
inline constexpr int kExitTimedOut = 5;    // `wait --timeout` ran out before the job ended
inline constexpr int kExitRegression = 6;  // `compare --fail-on` found what it was told to
// The daemon wants a token (UNAUTHENTICATED) or this token may not do it (PERMISSION_DENIED).
inline constexpr int kExitNotAllowed = 7;

// How a job's end reads as an exit code: 0 succeeded, 3 cancelled, 1 otherwise.
inline int ExitCodeOf(gpuprobe::v1::JobState state) {
  switch (state) {
    case gpuprobe::v1::JOB_STATE_SUCCEEDED:
      return kExitOk;
    case gpuprobe::v1::JOB_STATE_CANCELLED:
      return kExitCancelled;
    default:
      return kExitJobFailed;
  }
}

}  // namespace gpuprobe
