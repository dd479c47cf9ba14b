# Row 110's third build: session11's TIMELINE records (apply_timeline.py, row 90: t0 and five
# events a warp, the last launch of the graph) with the first event, "prologue begins", replaced
# by the warp's end after whichever return of the kernel's body it takes, so that one build shows
# each warp's loop end (e5) and its end (e1).
import os
import subprocess
import sys

from kernel_wrap import wrap_kernel_body
here = os.path.dirname(os.path.abspath(__file__))
src, dst = sys.argv[1], sys.argv[2]
subprocess.run([sys.executable, here + "/../../session11/harness/apply_timeline.py", src, dst],
               check=True)
s = open(dst).read()
def rep(old, new):
    global s
    assert s.count(old) == 1, old
    s = s.replace(old, new)
s = wrap_kernel_body(s, """
// TLEND: lane 0 of every warp writes its end over event 1 of its record.
template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
__global__ void __launch_bounds__(kMaxWarps * 32, 1) SelNvfp4Kernel(SelParams p) {
  SelNvfp4Body<kGateUpSilu, kOneSlot, kDeal>(p);
  uint32_t* tl = g_sel_timeline;
  if (tl != nullptr && threadIdx.x % 32 == 0) {
    uint32_t* r = tl + (int64_t{blockIdx.x} * 32 + threadIdx.x / 32) * 8;
    const uint32_t end = min((NowNs() - r[2]) / 8, 0xFFFFu);
    r[3] = (r[3] & 0xFFFF0000u) | end;
  }
}
""")
open(dst, "w").write(s)
