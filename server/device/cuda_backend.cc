#include "server/device/cuda_backend.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "kernels/cuda_status.h"
#include "kernels/slot_groups.h"

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

// One NVFP4 tensor of all experts, twice: in the checkpoint's layout, which the floor kernel
// reads (its checksum is the checkpoint bytes'), and in the sel kernels' layout
// (kernels/nvfp4_pack.h), written from the first on the device once per bank. Same bytes per
// expert, same places.
struct DeviceBank {
  DeviceBuffer codes, scales, sel_codes, sel_scales;
  int experts = 0, rows = 0, cols = 0;

  DeviceNvfp4Bank View(bool sel_layout) const {
    return {(sel_layout ? sel_codes : codes).get<uint8_t>(),
            (sel_layout ? sel_scales : scales).get<uint8_t>(), experts, rows, cols};
  }

  static absl::StatusOr<DeviceBank> Upload(const Nvfp4Bank& host, int experts,
                                           cudaStream_t stream) {
    DeviceBank bank;
    bank.experts = experts;
    bank.rows = static_cast<int>(host.rows);
    bank.cols = static_cast<int>(host.cols);
    ASSIGN_OR_RETURN(bank.codes, DeviceBuffer::FromHost(host.codes));
    ASSIGN_OR_RETURN(bank.scales, DeviceBuffer::FromHost(host.scales));
    ASSIGN_OR_RETURN(bank.sel_codes, DeviceBuffer::Allocate(bank.codes.bytes()));
    ASSIGN_OR_RETURN(bank.sel_scales, DeviceBuffer::Allocate(bank.scales.bytes()));
    RETURN_IF_ERROR(LaunchToSelLayout(bank.View(false), bank.sel_codes.get<uint8_t>(),
                                      bank.sel_scales.get<uint8_t>(), stream));
    CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream));
    return bank;
  }
};

}  // namespace

struct CudaBackend::Banks {
  MoeGeometry geometry;
  uint64_t seed = 0;
  DeviceBank gate_up, down;
  DeviceBuffer gate_global, up_global, down_global;
};

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

// An arm's device buffers, its launch plan and the graphs captured for it.
struct CudaBackend::Arm {
  KernelVariant variant = KernelVariant::kPerSlot;
  int slots = 0;
  DeviceBuffer sel, x, h_in, h_out, y, partials;
  DeviceBuffer group_expert, group_slot_table;
  DeviceSlotGroups groups;
  int floor_blocks = 0;
  std::map<std::pair<MoeKernel, bool>, Graph> graphs;  // (kernel, cold)
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
  arms_.clear();
  banks_.reset();
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

absl::Status CudaBackend::CheckVariant(KernelVariant) const { return absl::OkStatus(); }

std::optional<TelemetrySample> CudaBackend::SampleTelemetry() {
  if (telemetry_ == nullptr) return std::nullopt;
  return telemetry_->Sample(static_cast<int>(getpid()), own_group_);
}

absl::Status CudaBackend::CheckCudaGeometry(const MoeGeometry& geometry, KernelVariant variant) {
  return CanImplementSelKernels(geometry, variant == KernelVariant::kUnion ? kMaxGroupSlots : 1);
}

absl::Status CudaBackend::LoadBanks(const MoeGeometry& geometry, uint64_t seed) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));  // the caller's thread may be new
  if (banks_ && banks_->geometry == geometry && banks_->seed == seed) return absl::OkStatus();
  arms_.clear();
  banks_.reset();
  ASSIGN_OR_RETURN(MoeBanks host, SynthesizeBanks(geometry, seed));
  auto banks = std::make_unique<Banks>();
  banks->geometry = geometry;
  banks->seed = seed;
  ASSIGN_OR_RETURN(banks->gate_up, DeviceBank::Upload(host.gate_up, geometry.experts, stream_));
  ASSIGN_OR_RETURN(banks->down, DeviceBank::Upload(host.down, geometry.experts, stream_));
  ASSIGN_OR_RETURN(banks->gate_global, DeviceBuffer::FromHost(host.gate_global));
  ASSIGN_OR_RETURN(banks->up_global, DeviceBuffer::FromHost(host.up_global));
  ASSIGN_OR_RETURN(banks->down_global, DeviceBuffer::FromHost(host.down_global));
  banks_ = std::move(banks);
  return absl::OkStatus();
}

absl::StatusOr<ArmHandle> CudaBackend::PrepareArm(const ArmInputs& inputs) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));  // the caller's thread may be new
  if (!banks_) return absl::FailedPreconditionError("PrepareArm before LoadBanks");
  const MoeGeometry& g = banks_->geometry;
  auto arm = std::make_unique<Arm>();
  arm->variant = inputs.variant;
  arm->slots = static_cast<int>(inputs.sel.size());
  // The launch plan is built here, once per arm: outside every timed region.
  const SlotGroups plan =
      inputs.variant == KernelVariant::kUnion ? UnionGroups(inputs.sel) : PerSlotGroups(inputs.sel);
  RETURN_IF_ERROR(CanImplementSelKernels(g, plan.max_group_slots));
  ASSIGN_OR_RETURN(arm->sel, DeviceBuffer::FromHost(inputs.sel));
  ASSIGN_OR_RETURN(arm->x, DeviceBuffer::FromHost(inputs.x));
  ASSIGN_OR_RETURN(arm->h_in, DeviceBuffer::FromHost(inputs.h));
  ASSIGN_OR_RETURN(arm->h_out, DeviceBuffer::Allocate(int64_t{4} * arm->slots * g.ff));
  ASSIGN_OR_RETURN(arm->y, DeviceBuffer::Allocate(int64_t{4} * arm->slots * g.hidden));
  ASSIGN_OR_RETURN(arm->group_expert, DeviceBuffer::FromHost(plan.expert));
  ASSIGN_OR_RETURN(arm->group_slot_table, DeviceBuffer::FromHost(SlotTable(plan)));
  arm->groups = {arm->group_expert.get<int32_t>(),
                 arm->group_slot_table.get<int32_t>(),
                 plan.groups(),
                 plan.max_group_slots,
                 arm->slots,
                 SlotsAreGroups(plan),
                 DistinctExperts(plan)};
  arm->floor_blocks = kFloorBlocksPerSm * details_.multiprocessors;
  ASSIGN_OR_RETURN(arm->partials, DeviceBuffer::Allocate(arm->floor_blocks * sizeof(uint32_t)));
  arms_.push_back(std::move(arm));
  return static_cast<ArmHandle>(arms_.size() - 1);
}

void CudaBackend::ReleaseArms() { arms_.clear(); }

absl::StatusOr<CudaBackend::Arm*> CudaBackend::Find(ArmHandle handle) {
  if (handle < 0 || handle >= static_cast<int>(arms_.size())) {
    return absl::InvalidArgumentError(absl::StrFormat("no prepared arm %d", handle));
  }
  return arms_[handle].get();
}

ReadFloorArgs CudaBackend::FloorArgs(const Arm& arm, MoeKernel kernel) const {
  const DeviceNvfp4Bank bank =
      (kernel == MoeKernel::kGateUpSilu ? banks_->gate_up : banks_->down).View(false);
  const int64_t code_bytes = int64_t{bank.rows} * bank.cols / 2;
  const int64_t scale_bytes = int64_t{bank.rows} * bank.cols / kNvfp4BlockSize;
  ReadFloorArgs args;
  args.regions[0] = {bank.codes, code_bytes, code_bytes};
  args.regions[1] = {bank.scales, scale_bytes, scale_bytes};
  args.sel = arm.sel.get<int32_t>();
  args.slots = arm.slots;
  args.blocks = arm.floor_blocks;
  args.partials = arm.partials.get<uint32_t>();
  return args;
}

absl::Status CudaBackend::Launch(Arm& arm, MoeKernel kernel, cudaStream_t stream) {
  if (arm.variant == KernelVariant::kFloor) {
    return LaunchReadFloor(FloorArgs(arm, kernel), stream);
  }
  if (kernel == MoeKernel::kGateUpSilu) {
    SelGuSiluArgs args;
    args.gate_up = banks_->gate_up.View(true);
    args.gate_global = banks_->gate_global.get<float>();
    args.up_global = banks_->up_global.get<float>();
    args.x = arm.x.get<float>();
    args.selected = banks_->geometry.selected;
    args.groups = arm.groups;
    args.h = arm.h_out.get<float>();
    return LaunchSelGuSilu(args, stream);
  }
  SelDownArgs args;
  args.down = banks_->down.View(true);
  args.down_global = banks_->down_global.get<float>();
  args.h = arm.h_in.get<float>();
  args.groups = arm.groups;
  args.y = arm.y.get<float>();
  return LaunchSelDown(args, stream);
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

absl::StatusOr<double> CudaBackend::TimeLaunch(ArmHandle handle, MoeKernel kernel,
                                               const TimingOptions& options) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  ASSIGN_OR_RETURN(Arm * arm, Find(handle));
  const bool cold = options.cache == CacheMode::kCold;
  auto launch = [&](cudaStream_t stream) { return Launch(*arm, kernel, stream); };
  if (options.timing == TimingMode::kGraph) {
    return TimeGraph(arm->graphs[{kernel, cold}], launch, cold, options.graph_launches);
  }
  return TimeEvents(launch, cold);
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

absl::StatusOr<LaunchOutput> CudaBackend::RunOnce(ArmHandle handle, MoeKernel kernel) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
  ASSIGN_OR_RETURN(Arm * arm, Find(handle));
  LaunchOutput out;
  if (arm->variant == KernelVariant::kFloor) {
    ASSIGN_OR_RETURN(out.checksum, ReadFloorChecksum(FloorArgs(*arm, kernel), stream_));
    return out;
  }
  DeviceBuffer& target = kernel == MoeKernel::kGateUpSilu ? arm->h_out : arm->y;
  CUDA_RETURN_IF_ERROR(cudaMemsetAsync(target.get(), 0xFF, target.bytes(), stream_));  // NaN
  RETURN_IF_ERROR(Launch(*arm, kernel, stream_));
  out.values.resize(target.bytes() / sizeof(float));
  CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out.values.data(), target.get(), target.bytes(),
                                       cudaMemcpyDeviceToHost, stream_));
  CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));
  return out;
}

}  // namespace gpuprobe
