#include "server/device/cuda_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "kernels/cuda_status.h"
#include "kernels/read_floor.h"
#include "server/device/device_buffer.h"

namespace gpuprobe {
namespace {

// The calibration read: DESIGN.md measured 4.56 TB/s for a 4 GiB read and 3.57 TB/s for
// 128 MiB (ramp and tail dominate small reads), so it reads at least 2 GiB per sample.
constexpr int64_t kCalibrationBytes = int64_t{2} << 30;
constexpr int kCalibrationWarmups = 3;
constexpr int kCalibrationSamples = 11;
// Memory left to the CUDA context, the flush buffer and other processes.
constexpr int64_t kReservedBytes = int64_t{2} << 30;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

// Device memory of one cudaMalloc.
class CudaMemory final : public DeviceMemory {
 public:
  explicit CudaMemory(DeviceBuffer buffer) : buffer_(std::move(buffer)) {}
  int64_t bytes() const override { return buffer_.bytes(); }
  void* get() const { return buffer_.get(); }

 private:
  DeviceBuffer buffer_;
};

// Events on the device's stream. A mark recorded while the stream captures a graph becomes an
// event record node of the graph (an external record), so the graph's replay records it.
class CudaMarks final : public TimeMarks {
 public:
  // `capturing`: whether the stream captures now (the backend's flag, read at each record).
  CudaMarks(cudaStream_t stream, const bool& capturing, int count)
      : stream_(stream), capturing_(capturing), events_(count, nullptr) {}
  ~CudaMarks() override {
    for (cudaEvent_t e : events_) {
      if (e != nullptr) cudaEventDestroy(e);
    }
  }
  absl::Status Create() {
    for (cudaEvent_t& e : events_) CUDA_RETURN_IF_ERROR(cudaEventCreate(&e));
    return absl::OkStatus();
  }
  absl::Status Record(int mark) override {
    if (capturing_) {
      CUDA_RETURN_IF_ERROR(
          cudaEventRecordWithFlags(events_[mark], stream_, cudaEventRecordExternal));
    } else {
      CUDA_RETURN_IF_ERROR(cudaEventRecord(events_[mark], stream_));
    }
    return absl::OkStatus();
  }
  absl::StatusOr<double> ElapsedUs(int from, int to) override {
    float ms = 0;
    CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, events_[from], events_[to]));
    return ms * 1e3;
  }

 private:
  const cudaStream_t stream_;
  const bool& capturing_;
  std::vector<cudaEvent_t> events_;
};

// An instantiated CUDA graph, launched on the device's stream.
class CudaGraph final : public CapturedWork {
 public:
  CudaGraph(cudaStream_t stream, cudaGraphExec_t exec) : stream_(stream), exec_(exec) {}
  ~CudaGraph() override { cudaGraphExecDestroy(exec_); }
  absl::Status Replay() override {
    CUDA_RETURN_IF_ERROR(cudaGraphLaunch(exec_, stream_));
    return absl::OkStatus();
  }

 private:
  const cudaStream_t stream_;
  const cudaGraphExec_t exec_;
};

int CudaBackend::VisibleDevices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

absl::StatusOr<std::unique_ptr<CudaBackend>> CudaBackend::Create(int device) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= device) {
    cudaGetLastError();  // clear the non-sticky error of a host without a driver
    return absl::UnavailableError(absl::StrFormat("no CUDA device %d is visible", device));
  }
  std::unique_ptr<CudaBackend> backend(new CudaBackend());
  RETURN_IF_ERROR(backend->Init(device));
  return backend;
}

absl::Status CudaBackend::Init(int device) {
  device_ = device;
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, device));
  details_.name = prop.name;
  details_.multiprocessors = prop.multiProcessorCount;
  details_.l2_bytes = prop.l2CacheSize;
  details_.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
  CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&details_.driver_version));
  CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&details_.runtime_version));
  description_notes_ =
      absl::StrFormat("cuda:%d, sm_%d%d, %d SMs, %d MiB L2, %.1f GiB", device, prop.major,
                      prop.minor, prop.multiProcessorCount, prop.l2CacheSize >> 20,
                      static_cast<double>(prop.totalGlobalMem) / (1 << 30));
  char pci_bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(pci_bus_id, sizeof(pci_bus_id), device) == cudaSuccess) {
    telemetry_ = NvmlTelemetry::Open(pci_bus_id);
  }
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  RETURN_IF_ERROR(Calibrate());
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  capacity_bytes_ = std::max<int64_t>(0, static_cast<int64_t>(free_bytes) - kReservedBytes);
  return absl::OkStatus();
}

CudaBackend::~CudaBackend() {
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

absl::Status CudaBackend::Calibrate() {
  ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(kCalibrationBytes));
  CUDA_RETURN_IF_ERROR(cudaMemset(buffer.get(), 0x5A, kCalibrationBytes));
  ASSIGN_OR_RETURN(DeviceBuffer sel, DeviceBuffer::FromHost(std::vector<int32_t>{0}));
  const int blocks = kFloorBlocksPerSm * details_.multiprocessors;
  ASSIGN_OR_RETURN(DeviceBuffer partials, DeviceBuffer::Allocate(blocks * sizeof(uint32_t)));
  ReadFloorArgs args;
  args.regions[0] = {buffer.get<uint8_t>(), 0, kCalibrationBytes};
  args.sel = sel.get<int32_t>();
  args.slots = 1;
  args.blocks = blocks;
  args.partials = partials.get<uint32_t>();
  ASSIGN_OR_RETURN(std::unique_ptr<TimeMarks> marks, NewMarks(2));
  std::vector<double> tbps;
  for (int i = 0; i < kCalibrationWarmups + kCalibrationSamples; ++i) {
    RETURN_IF_ERROR(marks->Record(0));
    RETURN_IF_ERROR(LaunchReadFloor(args, stream_));
    RETURN_IF_ERROR(marks->Record(1));
    RETURN_IF_ERROR(Synchronize());
    ASSIGN_OR_RETURN(const double us, marks->ElapsedUs(0, 1));
    if (i >= kCalibrationWarmups) tbps.push_back(kCalibrationBytes / (us * 1e-6) / 1e12);
  }
  details_.calibrated_read_tbps = Median(tbps);
  details_.calibration_bytes = kCalibrationBytes;
  return absl::OkStatus();
}

std::optional<TelemetrySample> CudaBackend::SampleTelemetry() {
  if (telemetry_ == nullptr) return std::nullopt;
  return telemetry_->Sample(static_cast<int>(getpid()), own_group_);
}

absl::Status CudaBackend::Bind() {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<DeviceMemory>> CudaBackend::Allocate(int64_t bytes) {
  ASSIGN_OR_RETURN(DeviceBuffer buffer, DeviceBuffer::Allocate(bytes));
  return std::make_unique<CudaMemory>(std::move(buffer));
}

absl::Status CudaBackend::Overwrite(DeviceMemory& memory, uint8_t value) {
  CudaMemory& cuda = static_cast<CudaMemory&>(memory);
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(cuda.get(), value, cuda.bytes(), stream_));
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<TimeMarks>> CudaBackend::NewMarks(int count) {
  auto marks = std::make_unique<CudaMarks>(stream_, capturing_, count);
  RETURN_IF_ERROR(marks->Create());
  return marks;
}

absl::StatusOr<std::unique_ptr<CapturedWork>> CudaBackend::Capture(
    absl::AnyInvocable<absl::Status()> enqueue) {
  CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  capturing_ = true;
  const absl::Status captured = enqueue();
  capturing_ = false;
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
  RETURN_IF_ERROR(captured);
  CUDA_RETURN_IF_ERROR(end);
  cudaGraphExec_t exec = nullptr;
  const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  CUDA_RETURN_IF_ERROR(instantiated);
  return std::make_unique<CudaGraph>(stream_, exec);
}

std::string CudaBackend::Description() const {
  return absl::StrCat(details_.name, " (", description_notes_, InjectedWaitNote(), ")");
}

absl::Status CudaBackend::Synchronize() {
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  return absl::OkStatus();
}

}  // namespace gpuprobe
