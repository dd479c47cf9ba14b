// A probe test's view of a resolved spec as the probe's own message.
//
//   const v1::ReadBandwidthParams p = Resolved<v1::ReadBandwidthParams>(*probe.Resolve(request));
#pragma once

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "server/probes/probe.h"

namespace gpuprobe {

// The spec as T; a failed expectation (and an empty T) where it is another message.
template <typename T>
T Resolved(const ProbeSpec& spec) {
  absl::StatusOr<const T*> typed = SpecAs<T>(*spec);
  EXPECT_TRUE(typed.ok()) << typed.status();
  return typed.ok() ? **typed : T();
}

}  // namespace gpuprobe
