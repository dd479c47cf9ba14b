// CompareJobs: two finished sweeps, arm by arm, with noise-aware verdicts (probe/comparison.h).
// The base may be named by label ("label:branch=main": the newest succeeded sweep carrying it
// with the candidate's geometry), which is what a CI gate asks.
//
//   ASSIGN_OR_RETURN(v1::CompareJobsResponse r, CompareJobs(manager, request));
#pragma once

#include "absl/status/statusor.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/jobs/job_manager.h"

namespace gpuprobe {

// INVALID_ARGUMENT names the field when the jobs ran on different device models or with
// different geometry, timing or cache; FAILED_PRECONDITION when either is not a succeeded
// sweep; NOT_FOUND when no job matches the base.
absl::StatusOr<v1::CompareJobsResponse> CompareJobs(JobManager& manager,
                                                    const v1::CompareJobsRequest& request);

}  // namespace gpuprobe
