#include "server/device/cuda_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "kernels/cuda_status.h"

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

// A captured CUDA graph of N launches of one kernel, with the events that time it: recorded by
// the graph itself, so that the host's launch of the graph is not timed: a start/stop pair
// around each launch (cold) or around all of them (warm).
struct CudaBackend::Graph {
  cudaGraphExec_t exec = nullptr;
  std::vector<cudaEvent_t> events;

  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() {
    if (exec != nullptr) cudaGraphExecDestroy(exec);
    for (cudaEvent_t e : events) cudaEventDestroy(e);
  }
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
  description_ =
      absl::StrFormat("%s (cuda:%d, sm_%d%d, %d SMs, %d MiB L2, %.1f GiB)", prop.name, device,
                      prop.major, prop.minor, prop.multiProcessorCount, prop.l2CacheSize >> 20,
                      static_cast<double>(prop.totalGlobalMem) / (1 << 30));
  char pci_bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(pci_bus_id, sizeof(pci_bus_id), device) == cudaSuccess) {
    telemetry_ = NvmlTelemetry::Open(pci_bus_id);
  }
  CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&start_));
  CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop_));
  ASSIGN_OR_RETURN(flush_, DeviceBuffer::Allocate(2 * details_.l2_bytes));
  RETURN_IF_ERROR(Calibrate());
  size_t free_bytes = 0, total_bytes = 0;
  CUDA_RETURN_IF_ERROR(cudaMemGetInfo(&free_bytes, &total_bytes));
  capacity_bytes_ = std::max<int64_t>(0, static_cast<int64_t>(free_bytes) - kReservedBytes);
  return absl::OkStatus();
}

CudaBackend::~CudaBackend() {
  if (start_ != nullptr) cudaEventDestroy(start_);
  if (stop_ != nullptr) cudaEventDestroy(stop_);
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
  std::vector<double> tbps;
  for (int i = 0; i < kCalibrationWarmups + kCalibrationSamples; ++i) {
    CUDA_RETURN_IF_ERROR(cudaEventRecord(start_, stream_));
    RETURN_IF_ERROR(LaunchReadFloor(args, stream_));
    CUDA_RETURN_IF_ERROR(cudaEventRecord(stop_, stream_));
    CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop_));
    float ms = 0;
    CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start_, stop_));
    if (i >= kCalibrationWarmups) tbps.push_back(kCalibrationBytes / (ms * 1e-3) / 1e12);
  }
  details_.calibrated_read_tbps = Median(tbps);
  details_.calibration_bytes = kCalibrationBytes;
  return absl::OkStatus();
}

std::optional<TelemetrySample> CudaBackend::SampleTelemetry() {
  if (telemetry_ == nullptr) return std::nullopt;
  return telemetry_->Sample(static_cast<int>(getpid()), own_group_);
}

// Overwrites twice the L2 so that no line of the next launch's inputs is left in it; the
// value changes every time so no flush is ever a no-op.
absl::Status CudaBackend::Flush(cudaStream_t stream) {
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(flush_.get(), ++flush_value_, flush_.bytes(), stream));
  return absl::OkStatus();
}

absl::StatusOr<double> CudaBackend::TimeEvents(LaunchFn launch, bool cold) {
  if (cold) RETURN_IF_ERROR(Flush(stream_));
  CUDA_RETURN_IF_ERROR(cudaEventRecord(start_, stream_));
  RETURN_IF_ERROR(launch(stream_));
  CUDA_RETURN_IF_ERROR(cudaEventRecord(stop_, stream_));
  CUDA_RETURN_IF_ERROR(cudaEventSynchronize(stop_));
  float ms = 0;
  CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, start_, stop_));
  return ms * 1e3;
}

absl::StatusOr<double> CudaBackend::TimeGraph(Graph& graph, LaunchFn launch, bool cold,
                                              int launches) {
  if (graph.exec == nullptr) {
    if (graph.events.empty()) {  // a capture that failed before keeps its events
      graph.events.resize(cold ? 2 * launches : 2);
      for (cudaEvent_t& e : graph.events) CUDA_RETURN_IF_ERROR(cudaEventCreate(&e));
    }
    CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    auto record = [&](cudaEvent_t e) {
      return CudaStatus(cudaEventRecordWithFlags(e, stream_, cudaEventRecordExternal),
                        "cudaEventRecordWithFlags", __FILE__, __LINE__);
    };
    absl::Status captured = cold ? absl::OkStatus() : record(graph.events[0]);
    for (int i = 0; i < launches && captured.ok(); ++i) {
      if (cold) {
        captured = Flush(stream_);
        if (captured.ok()) captured = record(graph.events[2 * i]);
      }
      if (captured.ok()) captured = launch(stream_);
      if (captured.ok() && cold) captured = record(graph.events[2 * i + 1]);
    }
    if (captured.ok() && !cold) captured = record(graph.events[1]);
    cudaGraph_t g = nullptr;
    const cudaError_t end = cudaStreamEndCapture(stream_, &g);
    RETURN_IF_ERROR(captured);
    CUDA_RETURN_IF_ERROR(end);
    const cudaError_t inst = cudaGraphInstantiate(&graph.exec, g, 0);
    cudaGraphDestroy(g);
    CUDA_RETURN_IF_ERROR(inst);
  }
  CUDA_RETURN_IF_ERROR(cudaGraphLaunch(graph.exec, stream_));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  double total_ms = 0;
  for (size_t i = 0; i < graph.events.size(); i += 2) {
    float ms = 0;
    CUDA_RETURN_IF_ERROR(cudaEventElapsedTime(&ms, graph.events[i], graph.events[i + 1]));
    total_ms += ms;
  }
  return total_ms * 1e3 / launches;
}

absl::StatusOr<double> CudaBackend::Time(DeviceLaunch& launch, const TimingOptions& options) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));  // the caller's thread may be new
  const bool cold = options.cache == CacheMode::kCold;
  auto enqueue = [&](cudaStream_t stream) { return launch.Enqueue(stream); };
  if (options.timing == TimingMode::kGraph) {
    std::shared_ptr<void>& state = launch.timer_state();
    if (state == nullptr) state = std::make_shared<LaunchGraphs>();
    LaunchGraphs& graphs = *static_cast<LaunchGraphs*>(state.get());
    return TimeGraph(graphs[{cold, options.graph_launches}], enqueue, cold, options.graph_launches);
  }
  return TimeEvents(enqueue, cold);
}

}  // namespace gpuprobe
