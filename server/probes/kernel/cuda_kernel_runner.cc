// The kernel probe's runner on cuda: modules loaded with the driver API (PTX and fatbins
// linked to a cubin for this device first, so that every kernel's machine code is hashed from
// the image that runs), launches with cuLaunchKernelEx on the device's stream, buffers in
// cudaMalloc memory filled on the device.
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/module_inspection.h"
#include "common/status_macros.h"
#include "kernels/cuda_status.h"
#include "server/device/device_buffer.h"
#include "server/probes/kernel/buffer_fill.h"
#include "server/probes/kernel/cuda_driver.h"
#include "server/probes/kernel/kernel_arguments.h"
#include "server/probes/kernel/kernel_params.h"
#include "server/probes/kernel/kernel_runner.h"

namespace gpuprobe {
namespace {

// Parameters a kernel may have (CUDA allows 32764 bytes of them).
constexpr size_t kMaxParams = 4096;
// Dynamic shared memory past this needs the kernel's opt-in attribute.
constexpr uint32_t kDefaultSharedLimit = 48 * 1024;
// Cluster sizes past this need the non-portable attribute.
constexpr uint64_t kPortableClusterBlocks = 8;
// A placement moves to fresh memory (allocated before the last one is freed) where this much
// is left besides.
constexpr size_t kPlacementHeadroom = size_t{256} << 20;

// The driver's linker on one PTX or fatbin input, for `target` (0: the context's device).
absl::StatusOr<std::string> Link(const CudaDriver& cu, const std::string& bytes,
                                 v1::ModuleFormat format, int target) {
  std::string log(8192, '\0');
  std::vector<CUjit_option> options = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  std::vector<void*> values = {log.data(), reinterpret_cast<void*>(log.size())};
  if (target != 0) {
    options.push_back(CU_JIT_TARGET);
    values.push_back(reinterpret_cast<void*>(static_cast<uintptr_t>(target)));
  }
  CUlinkState link = nullptr;
  RETURN_IF_ERROR(cu.Status(
      cu.LinkCreate(static_cast<unsigned>(options.size()), options.data(), values.data(), &link),
      "cuLinkCreate"));
  const std::string input = bytes + '\0';  // PTX is NUL-terminated
  absl::Status s = cu.Status(
      cu.LinkAddData(link,
                     format == v1::MODULE_FORMAT_PTX ? CU_JIT_INPUT_PTX : CU_JIT_INPUT_FATBINARY,
                     const_cast<char*>(input.data()), input.size(), "module", 0, nullptr, nullptr),
      "cuLinkAddData");
  void* cubin = nullptr;
  size_t size = 0;
  if (s.ok()) s = cu.Status(cu.LinkComplete(link, &cubin, &size), "cuLinkComplete");
  std::string image = s.ok() ? std::string(static_cast<const char*>(cubin), size) : "";
  cu.LinkDestroy(link);
  if (!s.ok()) {
    log.resize(std::min(log.find('\0'), size_t{2000}));
    return absl::Status(s.code(), absl::StrCat(s.message(), log.empty() ? "" : ": ", log));
  }
  return image;
}

// A module's image as it is loaded: a cubin as sent; PTX compiled, or a fatbin's image for this
// device chosen, by the driver's linker, so that the code hashed is the code run. Code for the
// device's architecture-specific variant (sm_90a on an sm_90 device) needs that variant as the
// linker's target (`accelerated`), tried where the device's own finds no image. A fatbin the
// linker takes neither way (one of sm_90a code, on an H100) is loaded as it is, the driver
// choosing its image; its kernels' hashes are then its first uncompressed cubin's.
absl::StatusOr<std::string> LinkedImage(const CudaDriver& cu, const std::string& bytes,
                                        v1::ModuleFormat format, int accelerated) {
  if (format == v1::MODULE_FORMAT_CUBIN) return bytes;
  const auto no_image = [](const absl::StatusOr<std::string>& image) {
    return !image.ok() &&
           absl::StrContains(image.status().message(), "CUDA_ERROR_NO_BINARY_FOR_GPU");
  };
  absl::StatusOr<std::string> image = Link(cu, bytes, format, 0);
  if (no_image(image)) image = Link(cu, bytes, format, accelerated);
  if (no_image(image) && format == v1::MODULE_FORMAT_FATBIN) return bytes;
  return image;
}

struct LoadedModule {
  CUmodule module = nullptr;
  v1::Module inspected;  // of the image loaded
};

// FNV-1a of a buffer's name: mixed into the seed, so that each buffer has its own values, the
// same in every build.
uint64_t NameHash(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

class CudaRunner;

// One arm as the timer launches it.
class ArmLaunch final : public DeviceLaunch {
 public:
  ArmLaunch(CudaRunner& runner, int arm) : runner_(runner), arm_(arm) {}
  absl::Status Enqueue(DeviceStream stream) override;

 private:
  CudaRunner& runner_;
  const int arm_;
};

class CudaRunner final : public KernelRunner {
 public:
  CudaRunner(Backend& device, const CudaDriver& cu) : device_(device), cu_(cu) {}
  ~CudaRunner() override {
    buffers_.clear();
    for (auto& [id, loaded] : modules_) cu_.ModuleUnload(loaded.module);
  }

  absl::Status Load(const v1::KernelParams& params,
                    const std::map<std::string, std::string>& modules) override {
    params_ = params;
    CUDA_RETURN_IF_ERROR(cudaSetDevice(device_.Ordinal()));
    CUDA_RETURN_IF_ERROR(cudaFree(nullptr));  // the primary context, current
    // No lines of another job's kept in the L2 as persisting, and none may be set aside.
    CUDA_RETURN_IF_ERROR(cudaCtxResetPersistingL2Cache());
    int persisting = 0;
    CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&persisting, cudaDevAttrMaxPersistingL2CacheSize,
                                                device_.Ordinal()));
    if (persisting > 0) CUDA_RETURN_IF_ERROR(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
    int major = 0, minor = 0;
    CUDA_RETURN_IF_ERROR(
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device_.Ordinal()));
    CUDA_RETURN_IF_ERROR(
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device_.Ordinal()));
    const int accelerated = CU_COMPUTE_ACCELERATED_TARGET_BASE + 10 * major + minor;
    for (const std::string& id : ModuleIds(params_)) {
      const auto bytes = modules.find(id);
      if (bytes == modules.end()) {
        return absl::DataLossError(absl::StrCat("module ", id, " was not handed to the worker"));
      }
      ASSIGN_OR_RETURN(const v1::Module sent, InspectModule(bytes->second));
      const std::string name = absl::StrCat("module ", id.substr(0, 12));
      absl::StatusOr<std::string> image =
          LinkedImage(cu_, bytes->second, sent.format(), accelerated);
      if (!image.ok()) return Named(name, image.status());
      LoadedModule loaded;
      ASSIGN_OR_RETURN(loaded.inspected, InspectModule(*image));
      RETURN_IF_ERROR(Named(
          name, cu_.Status(cu_.ModuleLoadData(&loaded.module, image->data()), "cuModuleLoadData")));
      modules_.emplace(id, std::move(loaded));
    }
    for (int a = 0; a < params_.arms_size(); ++a) {
      launches_.emplace_back();
      for (int l = 0; l < params_.arms(a).launches_size(); ++l) {
        const std::string field = absl::StrCat("arms[", a, "].launches[", l, "]");
        ASSIGN_OR_RETURN(Launch launch, Prepare(field, params_.arms(a).launches(l)));
        launches_.back().push_back(std::move(launch));
      }
    }
    return absl::OkStatus();
  }

  std::string CodeSha256(int arm, int launch) const override {
    return launches_[arm][launch].code_sha256;
  }

  absl::Status Place() override {
    CUDA_RETURN_IF_ERROR(cudaSetDevice(device_.Ordinal()));
    size_t free = 0, total = 0;
    CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free, &total));
    if (free < static_cast<size_t>(BufferBytes(params_)) + kPlacementHeadroom) buffers_.clear();
    std::map<std::string, std::vector<DeviceBuffer>> placed;
    for (const v1::KernelBuffer& b : params_.buffers()) {
      std::vector<DeviceBuffer>& copies = placed[b.name()];
      for (uint32_t c = 0; c < b.rotation(); ++c) {
        ASSIGN_OR_RETURN(DeviceBuffer copy, DeviceBuffer::Allocate(b.size_bytes()));
        copies.push_back(std::move(copy));
      }
    }
    for (const bool copies_of_others : {false, true}) {
      for (const v1::KernelBuffer& b : params_.buffers()) {
        if (b.has_copy_of() != copies_of_others) continue;
        RETURN_IF_ERROR(FillBuffer(b, placed));
      }
    }
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(Stream()));
    buffers_ = std::move(placed);
    // New launches for the new addresses: the timer keeps what it captured (a graph holding the
    // old ones) with each launch.
    arms_.clear();
    for (int a = 0; a < params_.arms_size(); ++a) {
      arms_.push_back(std::make_unique<ArmLaunch>(*this, a));
    }
    return absl::OkStatus();
  }

  DeviceLaunch& Arm(int arm) override { return *arms_[arm]; }

  absl::Status Poison(const std::string& buffer) override {
    for (DeviceBuffer& copy : buffers_.at(buffer)) {
      CUDA_RETURN_IF_ERROR(cudaMemsetAsync(copy.get(), 0xff, copy.bytes(), Stream()));
    }
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(Stream()));
    return absl::OkStatus();
  }

  absl::Status RunOnce(int arm) override {
    RETURN_IF_ERROR(EnqueueArm(arm, Stream(), /*copy=*/0));
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(Stream()));
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> Read(const std::string& buffer) override {
    const DeviceBuffer& copy = buffers_.at(buffer).front();
    std::string bytes(copy.bytes(), '\0');
    CUDA_RETURN_IF_ERROR(
        cudaMemcpy(bytes.data(), copy.get(), bytes.size(), cudaMemcpyDeviceToHost));
    return bytes;
  }

  // Arm `arm`'s launches, each buffer argument on copy `copy` (modulo its rotation).
  absl::Status EnqueueArm(int arm, DeviceStream stream, uint64_t copy) {
    for (size_t l = 0; l < launches_[arm].size(); ++l) {
      Launch& launch = launches_[arm][l];
      for (size_t a = 0; a < launch.args.size(); ++a) {
        const PackedArgument& arg = launch.args[a];
        if (arg.buffer.empty()) continue;
        const std::vector<DeviceBuffer>& copies = buffers_.at(arg.buffer);
        const uint64_t address =
            reinterpret_cast<uint64_t>(copies[copy % copies.size()].get()) + arg.offset_bytes;
        std::copy_n(reinterpret_cast<const unsigned char*>(&address), sizeof address,
                    launch.values[a].data());
      }
      launch.config.hStream = static_cast<CUstream>(stream);
      launch.config.attrs = launch.has_cluster ? &launch.cluster : nullptr;
      launch.config.numAttrs = launch.has_cluster ? 1 : 0;
      RETURN_IF_ERROR(Named(absl::StrCat("arms[", arm, "].launches[", l, "]"),
                            cu_.Status(cu_.LaunchKernelEx(&launch.config, launch.function,
                                                          launch.pointers.data(), nullptr),
                                       "cuLaunchKernelEx")));
    }
    return absl::OkStatus();
  }

  // The job's counter of arm launches: each takes the next copy of the rotated buffers.
  uint64_t NextCopy() { return enqueued_++; }

 private:
  struct Launch {
    CUfunction function = nullptr;
    CUlaunchConfig config{};
    CUlaunchAttribute cluster{};
    bool has_cluster = false;
    std::vector<PackedArgument> args;
    std::vector<std::array<unsigned char, 8>> values;  // each argument's bytes
    std::vector<void*> pointers;                       // to each of `values`
    std::string code_sha256;
  };

  static absl::Status Named(const std::string& what, const absl::Status& s) {
    if (s.ok()) return s;
    return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
  }

  cudaStream_t Stream() const { return static_cast<cudaStream_t>(device_.Stream()); }

  absl::StatusOr<Launch> Prepare(const std::string& field, const v1::KernelLaunch& spec) {
    const LoadedModule& module = modules_.at(spec.module());
    Launch launch;
    const CUresult found =
        cu_.ModuleGetFunction(&launch.function, module.module, spec.kernel().c_str());
    if (found == CUDA_ERROR_NOT_FOUND) {
      std::vector<std::string> names;
      for (const v1::ModuleKernel& k : module.inspected.kernels()) names.push_back(k.name());
      return absl::InvalidArgumentError(
          absl::StrFormat("%s.kernel: module %s has no kernel \"%s\"; it has %s", field,
                          spec.module().substr(0, 12), spec.kernel(),
                          names.empty() ? "none" : absl::StrJoin(names, ", ")));
    }
    RETURN_IF_ERROR(Named(field, cu_.Status(found, "cuModuleGetFunction")));
    for (const v1::ModuleKernel& k : module.inspected.kernels()) {
      if (k.name() == spec.kernel()) launch.code_sha256 = k.text_sha256();
    }
    std::vector<ParamSlot> layout;
    for (size_t i = 0; i < kMaxParams; ++i) {
      ParamSlot slot;
      if (cu_.FuncGetParamInfo(launch.function, i, &slot.offset, &slot.size) != CUDA_SUCCESS) break;
      layout.push_back(slot);
    }
    ASSIGN_OR_RETURN(launch.args, PackArguments(field, spec, layout));
    for (const PackedArgument& arg : launch.args) launch.values.push_back(arg.bytes);
    for (auto& value : launch.values) launch.pointers.push_back(value.data());
    if (spec.shared_bytes() > kDefaultSharedLimit) {
      RETURN_IF_ERROR(Named(
          field + ".shared_bytes",
          cu_.Status(
              cu_.FuncSetAttribute(launch.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(spec.shared_bytes())),
              "cuFuncSetAttribute")));
    }
    const auto dim = [](const google::protobuf::RepeatedField<uint32_t>& d, int i) {
      return i < d.size() ? d[i] : 1u;
    };
    launch.config.gridDimX = dim(spec.grid(), 0);
    launch.config.gridDimY = dim(spec.grid(), 1);
    launch.config.gridDimZ = dim(spec.grid(), 2);
    launch.config.blockDimX = dim(spec.block(), 0);
    launch.config.blockDimY = dim(spec.block(), 1);
    launch.config.blockDimZ = dim(spec.block(), 2);
    launch.config.sharedMemBytes = spec.shared_bytes();
    if (!spec.cluster().empty()) {
      launch.has_cluster = true;
      launch.cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      launch.cluster.value.clusterDim.x = dim(spec.cluster(), 0);
      launch.cluster.value.clusterDim.y = dim(spec.cluster(), 1);
      launch.cluster.value.clusterDim.z = dim(spec.cluster(), 2);
      uint64_t blocks = 1;
      for (const uint32_t c : spec.cluster()) blocks *= c;
      if (blocks > kPortableClusterBlocks) {
        RETURN_IF_ERROR(Named(
            field + ".cluster",
            cu_.Status(cu_.FuncSetAttribute(launch.function,
                                            CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1),
                       "cuFuncSetAttribute")));
      }
    }
    return launch;
  }

  // Copy 0 of `b` filled as its init says, then its other copies copied from it.
  absl::Status FillBuffer(const v1::KernelBuffer& b,
                          std::map<std::string, std::vector<DeviceBuffer>>& placed) {
    std::vector<DeviceBuffer>& copies = placed.at(b.name());
    void* first = copies.front().get();
    const size_t bytes = b.size_bytes();
    // Each buffer's own stream of values: the seed mixed with its name.
    const uint64_t seed = params_.seed() ^ NameHash(b.name());
    switch (b.init_case()) {
      case v1::KernelBuffer::kConstant:
        RETURN_IF_ERROR(LaunchBufferFill(first, b.count(), b.dtype(), Fill::kConstant, b.constant(),
                                         0, seed, Stream()));
        break;
      case v1::KernelBuffer::kUniform:
        RETURN_IF_ERROR(LaunchBufferFill(first, b.count(), b.dtype(), Fill::kUniform,
                                         b.uniform().a(), b.uniform().b(), seed, Stream()));
        break;
      case v1::KernelBuffer::kNormal:
        RETURN_IF_ERROR(LaunchBufferFill(first, b.count(), b.dtype(), Fill::kNormal, b.normal().a(),
                                         b.normal().b(), seed, Stream()));
        break;
      case v1::KernelBuffer::kCopyOf:
        CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(first, placed.at(b.copy_of()).front().get(), bytes,
                                             cudaMemcpyDeviceToDevice, Stream()));
        break;
      default:
        CUDA_RETURN_IF_ERROR(cudaMemsetAsync(first, 0, bytes, Stream()));
        break;
    }
    for (size_t c = 1; c < copies.size(); ++c) {
      CUDA_RETURN_IF_ERROR(
          cudaMemcpyAsync(copies[c].get(), first, bytes, cudaMemcpyDeviceToDevice, Stream()));
    }
    return absl::OkStatus();
  }

  Backend& device_;
  const CudaDriver& cu_;
  v1::KernelParams params_;
  std::map<std::string, LoadedModule> modules_;
  std::vector<std::vector<Launch>> launches_;  // [arm][launch]
  std::vector<std::unique_ptr<ArmLaunch>> arms_;
  std::map<std::string, std::vector<DeviceBuffer>> buffers_;  // each buffer's copies
  uint64_t enqueued_ = 0;
};

absl::Status ArmLaunch::Enqueue(DeviceStream stream) {
  return runner_.EnqueueArm(arm_, stream, runner_.NextCopy());
}

}  // namespace

absl::StatusOr<std::unique_ptr<KernelRunner>> CudaKernelRunner(Backend& device) {
  ASSIGN_OR_RETURN(const CudaDriver* cu, CudaDriver::Get());
  return std::make_unique<CudaRunner>(device, *cu);
}

}  // namespace gpuprobe
