# Applies the SPAN measurement instrumentation (docs/PERF.md row 110) to a copy of
# moe_sel_kernels.cu: lane 0 of every warp notes its entry and its end (after whichever return
# of the kernel's body it takes) for the last two launches of a graph, through SetSelTimeline's
# buffer, in the tl*.patch record format the harness prints (session10/harness/kernel_harness.cu):
# the record of warp w of block b in launch parity q is record (q x 132 + b) x 32 + w, printed
# with block = b + 1000 q, t0 = its entry and e5 = its span in ns. Each warp counts its launches
# in word 6 of its parity-0 record (no atomics shared between warps).
import sys

from kernel_wrap import wrap_kernel_body
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
def rep(old, new):
    global s
    assert s.count(old) == 1, old
    s = s.replace(old, new)
rep("""namespace gpuprobe {
namespace {
""", """namespace gpuprobe {
// SPAN (measurement patch, docs/PERF.md row 110): the warps' records; null: none.
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
s = wrap_kernel_body(s, """
// SPAN: lane 0 of every warp notes its entry and its end around the body.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
__global__ void __launch_bounds__(kMaxWarps * 32, 1) SelNvfp4Kernel(SelParams p) {
  uint32_t* records = g_sel_timeline;
  const bool notes = records != nullptr && threadIdx.x % 32 == 0 && blockIdx.x < 132;
  const uint32_t warp = threadIdx.x / 32;
  uint32_t entry = 0, parity = 0;
  if (notes) {
    entry = NowNs();
    uint32_t* count = records + (int64_t{blockIdx.x} * 32 + warp) * 8 + 6;
    parity = (*count)++ & 1;
  }
  SelNvfp4Body<kGateUpSilu, kOneSlot, kDeal>(p);
  if (notes) {
    const uint32_t end = NowNs();
    uint32_t smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    uint32_t* r = records + ((int64_t{parity} * 132 + blockIdx.x) * 32 + warp) * 8;
    r[0] = 0x7A5E0000u | warp;
    r[1] = (blockIdx.x + 1000 * parity) | (smid << 16);
    r[2] = entry;
    r[3] = 0;
    r[4] = 0;
    r[5] = (end - entry) / 8;
  }
}
""")
open(dst, 'w').write(s)
