// What the kernel probe adds to its arms' results: each candidate arm's ratio to its baseline
// arm with the 95% interval and a verdict (by the two arms' blocks where the job has at least 3,
// as `compare` judges two jobs, else by their reps), and the flag on a time faster than the
// bytes the arm declares it reads allow. Device-free.
//
//   AddBaselineVerdicts(params, measurement, results);
//   result.set_impossible(ImpossibleTime(median_us, bytes_read, cache, device.Details()));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/device/backend.h"
#include "server/probes/kernel/kernel.pb.h"
#include "server/probes/measure_arms.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

// Empty where `median_us` is possible; else says why not. The arm reads `bytes_read` per sample;
// of them, at least bytes_read minus the L2's capacity (warm: the rest may be left in the L2 by
// the previous sample), or all of them (cold: the L2 is flushed), come from device memory, which
// takes that many bytes at the calibrated read. A median under that time by more than 5% (the
// calibration's own margin) cannot be: the declaration or the kernel's work is not what it says.
// Bytes written are not counted: their write-back to memory may finish after the sample ends.
std::string ImpossibleTime(double median_us, int64_t bytes_read, CacheMode cache,
                           const DeviceDetails& device);

// For every arm with a baseline: derived values vs_baseline (its median over the baseline's:
// above 1 is slower), vs_baseline_low and vs_baseline_high (the 95% interval), and the verdict
// at params.threshold. `results` are the arms' results in the params' arm order.
void AddBaselineVerdicts(const v1::KernelParams& params, const Measurement& measurement,
                         std::vector<v1::Result>& results);

// Every result given the same derived values, in `declared` order (ProbeInfo.derived): those
// that any arm has, NaN where an arm has none (no bytes declared, no baseline), so that every
// result of a job prints under one header.
void UniformDerived(const google::protobuf::RepeatedPtrField<v1::ProbeQuantity>& declared,
                    std::vector<v1::Result>& results);

// The code an arm runs: the sha256 of its one launch's machine code, or, for several launches,
// the sha256 of theirs joined by ','. Arms with equal values run identical code.
std::string ArmCodeSha256(const std::vector<std::string>& launch_sha256);

}  // namespace gpuprobe
