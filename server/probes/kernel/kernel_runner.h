// The kernel probe's device code: a job's modules loaded, its kernels found and their arguments
// checked, its buffers allocated and filled by the daemon, and each arm's launches as one
// DeviceLaunch that the measurement module times. One implementation per backend: cuda only
// (the cpu backend runs no client GPU code).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<KernelRunner> runner, KernelRunnerOn(device));
//   RETURN_IF_ERROR(runner->Load(params, run.modules));
//   RETURN_IF_ERROR(runner->Place());               // each block: the buffers in fresh memory
//   timer.Time(runner->Arm(0), timing);
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/device/backend.h"
#include "server/probes/kernel/kernel.pb.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

class KernelRunner {
 public:
  virtual ~KernelRunner() = default;

  // Resets the device's persisting-L2 state, loads the modules the launches name (`modules`:
  // their bytes by id; PTX compiled and a fatbin linked for this device by the driver), finds
  // each launch's kernel and packs its arguments against the kernel's parameter layout.
  // INVALID_ARGUMENT naming the launch: a kernel not in its module (listing the module's
  // kernels), arguments that do not match; a module the driver refuses, with its log.
  virtual absl::Status Load(const v1::KernelParams& params,
                            const std::map<std::string, std::string>& modules) = 0;
  // The sha256 of the machine code that launch `launch` of arm `arm` runs (after Load): its
  // function's .text section in the cubin that was loaded.
  virtual std::string CodeSha256(int arm, int launch) const = 0;

  // Frees the buffers (if any) and allocates every buffer and its copies anew, filled from the
  // spec's seed, so that each placement holds the same values at other addresses.
  virtual absl::Status Place() = 0;
  // Arm `arm`'s launches in order, as one unit of work on the last placement (valid until the
  // next Place, which makes new ones): each Enqueue passes the next copy of every rotated buffer
  // (one counter for the job, so consecutive launches of any arms read different copies).
  virtual DeviceLaunch& Arm(int arm) = 0;

  // For a check: the buffer's copies set to 0xff bytes (a NaN in every floating dtype).
  virtual absl::Status Poison(const std::string& buffer) = 0;
  // For a check: runs arm `arm` once on the first copy of every buffer, and waits for it.
  virtual absl::Status RunOnce(int arm) = 0;
  // For a check: the first copy of the buffer's bytes.
  virtual absl::StatusOr<std::string> Read(const std::string& buffer) = 0;
};

// The device code for `device`'s backend; FAILED_PRECONDITION for a backend without one.
absl::StatusOr<std::unique_ptr<KernelRunner>> KernelRunnerOn(Backend& device);
using KernelRunnerFactory = std::function<decltype(KernelRunnerOn)>;

// The cuda implementation (where built with CUDA); UNAVAILABLE where the driver lacks a
// function it calls.
absl::StatusOr<std::unique_ptr<KernelRunner>> CudaKernelRunner(Backend& device);

}  // namespace gpuprobe
