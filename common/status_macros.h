// Early-return helpers for absl::Status, which the packaged Abseil (20220623) predates.
//
//   RETURN_IF_ERROR(ValidateSweep(spec));
//   ASSIGN_OR_RETURN(std::vector<Arm> arms, ExpandArms(spec));
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define GPUPROBE_CONCAT_INNER(a, b) a##b
#define GPUPROBE_CONCAT(a, b) GPUPROBE_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                                             \
  do {                                                                    \
    if (absl::Status gpuprobe_status_ = (expr); !gpuprobe_status_.ok()) { \
      return gpuprobe_status_;                                            \
    }                                                                     \
  } while (false)

#define GPUPROBE_ASSIGN_OR_RETURN_IMPL(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();   \
  lhs = *std::move(statusor)

#define ASSIGN_OR_RETURN(lhs, rexpr) \
  GPUPROBE_ASSIGN_OR_RETURN_IMPL(GPUPROBE_CONCAT(gpuprobe_statusor_, __LINE__), lhs, rexpr)
