# Row 94 (marks): per-warp event times at ten points of a launch, written by lane 0 of every warp
# to c_sel_marks (16 words a warp, by block * 32 + warp) as the global timer's low 32 bits:
# 0 entry, 1-2 the prologue's start and end, 3-4 the first and second block barriers of the
# staging, 5 the inputs' wait, 6 the row maxima met, 7 staged, 8 the first item's end, 9 the
# loop's end. Applies to moe_sel_kernels.cu or a lever's copy of it.
import sys
src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
def rep(old, new, count=1):
    global s
    assert s.count(old) == count, (old, s.count(old))
    s = s.replace(old, new)
rep("""namespace gpuprobe {
namespace {
""", """namespace gpuprobe {
// MARKS (measurement patch, docs/PERF.md row 94): null, or 16 words a warp.
__constant__ uint32_t* c_sel_marks;
void SetSelTimeline(uint32_t* records) {
  cudaMemcpyToSymbol(c_sel_marks, &records, sizeof(records));
}
namespace {
__device__ __forceinline__ void Mark(int k) {
  if (threadIdx.x % 32 != 0 || c_sel_marks == nullptr) return;
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  uint32_t* r = c_sel_marks + (int64_t{blockIdx.x} * 32 + threadIdx.x / 32) * 16;
  if (k == 0) {
    uint32_t smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    r[0] = 0x7A5F0000u | (threadIdx.x / 32);
    r[1] = blockIdx.x | (smid << 16);
  }
  r[2 + k] = static_cast<uint32_t>(t);
}
""")
# entry
rep("""  const BlockTiles bt = MyTiles<kDeal>(p);
  const int chunks = p.cols / kChunkElements;""", """  Mark(0);
  const BlockTiles bt = MyTiles<kDeal>(p);
  const int chunks = p.cols / kChunkElements;""")
# prologue lambda start/end: the kernel's lambda passed to StageInputs
i = s.index("      p, bt, bg, staged, zero, out_scale, row_max, row_input")
j = s.index("[&] {", i) + len("[&] {")
s = s[:j] + "\n        Mark(1);" + s[j:]
k = s.index("        for (int stage = 0; stage < kEarly; ++stage) issue_next(stage);\n      });", j)
end = "        for (int stage = 0; stage < kEarly; ++stage) issue_next(stage);\n"
s = s[:k] + end + "        Mark(2);\n" + s[k + len(end):]
# staging barriers: the first two __syncthreads of StageInputs
a = s.index("__device__ void StageInputs(")
b = s.index("\n}\n", a)
body = s[a:b]
first = body.index("  __syncthreads();\n")
body = body[:first] + "  __syncthreads();\n  Mark(3);\n" + body[first + len("  __syncthreads();\n"):]
second = body.index("  __syncthreads();\n", first + 30)
body = body[:second] + "  __syncthreads();\n  Mark(4);\n" + body[second + len("  __syncthreads();\n"):]
w = "  WaitCopies<kPrologueGroups>();"
wi = body.index(w)
wl = body.index("\n", wi) + 1
body = body[:wl] + "  Mark(5);\n" + body[wl:]
# maxima met: row barriers after bar.sync; block path after the barrier that follows the maxima
bs = '        asm volatile("bar.sync %0, %1;" ::"r"(1 + r), "r"(32 * sharing) : "memory");\n'
if bs in body:
    body = body.replace(bs, bs + "        Mark(6);\n")
mx = """      if (threadIdx.x % 32 == 0) atomicMax(reinterpret_cast<unsigned*>(row_max + r), row_max_bits);
    }
    __syncthreads();
"""
body = body.replace(mx, mx + "    Mark(6);\n")
# staged: the last barrier
last = body.rindex("  __syncthreads();\n")
body = body[:last] + "  __syncthreads();\n  Mark(7);\n" + body[last + len("  __syncthreads();\n"):]
s = s[:a] + body + s[b:]
rep("""      if (kOneSlot) SumColumnThreads(acc);
""", """      if (at.index == warp) Mark(8);
      if (kOneSlot) SumColumnThreads(acc);
""")
rep("""  WaitCopies<0>();
""", """  WaitCopies<0>();
  Mark(9);
""")
open(dst, 'w').write(s)
