# Applies the SPAN measurement instrumentation (docs/PERF.md row 110) to a copy of
# moe_sel_kernels.cu: per launch, the first warp's entry and the last warp's end (after every
# path's return), through SetSelTimeline's buffer, in the tl*.patch record format the harness
# prints (session10/harness/kernel_harness.cu): record k (words 8k..8k+7) is launch k of the
# graph, printed as block 0, warp k, t0 = its first entry, e5 = its span in ns. Words 8000-8001
# count the launches and the warps done.
import sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
def rep(old, new):
    global s
    assert s.count(old) == 1, old
    s = s.replace(old, new)
rep("""namespace gpuprobe {
namespace {
""", """namespace gpuprobe {
// SPAN (measurement patch, docs/PERF.md row 110): the launches' records; null: none.
__device__ uint32_t* g_sel_timeline = nullptr;
void SetSelTimeline(uint32_t* records) {
  cudaMemcpyToSymbol(g_sel_timeline, &records, sizeof(records));
}
namespace {
__device__ __forceinline__ uint32_t NowNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return static_cast<uint32_t>(t);
}
""")
rep("""template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
__global__ void __launch_bounds__(kMaxWarps * 32, 1) SelNvfp4Kernel(SelParams p) {
""", """template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
__device__ __forceinline__ void SelNvfp4Body(const SelParams& p) {
""")
# the body's end: the first line "}" after the body's start
i = s.index("__device__ __forceinline__ void SelNvfp4Body(const SelParams& p) {")
j = s.index("\n}\n", i) + 3
s = s[:j] + """
// SPAN: lane 0 of every warp notes its entry and its end around the body.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
__global__ void __launch_bounds__(kMaxWarps * 32, 1) SelNvfp4Kernel(SelParams p) {
  uint32_t* span = g_sel_timeline;
  const bool notes = span != nullptr && threadIdx.x % 32 == 0;
  uint32_t launch = 0;
  if (notes) {
    launch = *reinterpret_cast<volatile uint32_t*>(span + 8000);
    atomicMax(span + 8 * launch + 6, ~NowNs());
  }
  SelNvfp4Body<kGateUpSilu, kOneSlot, kDeal>(p);
  if (notes) {
    uint32_t* r = span + 8 * launch;
    atomicMax(r + 7, NowNs());
    __threadfence();
    const uint32_t warps = gridDim.x * (blockDim.x / 32);
    if (atomicAdd(span + 8001, 1u) == warps - 1) {  // the launch's last warp
      __threadfence();
      const uint32_t entry = ~atomicAdd(r + 6, 0u), end = atomicAdd(r + 7, 0u);
      r[0] = 0x7A5E0000u | launch;
      r[1] = 0;
      r[2] = entry;
      r[5] = (end - entry) / 8;
      span[8001] = 0;
      __threadfence();
      atomicAdd(span + 8000, 1u);
    }
  }
}
""" + s[j:]
open(dst, 'w').write(s)
