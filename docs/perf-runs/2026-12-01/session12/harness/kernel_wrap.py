# Shared by apply_span.py and apply_tlend.py (docs/PERF.md row 110): renames the sel kernel's body
# to a device function SelNvfp4Body and puts `wrapper` (a __global__ SelNvfp4Kernel calling it)
# right after it.
def wrap_kernel_body(s, wrapper):
    old = """template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
__global__ void __launch_bounds__(kMaxWarps * 32, 1) SelNvfp4Kernel(SelParams p) {
"""
    assert s.count(old) == 1, old
    body = """template <bool kGateUpSilu, bool kOneSlot, Deal kDeal>
__device__ __forceinline__ void SelNvfp4Body(const SelParams& p) {
"""
    s = s.replace(old, body)
    end = s.index("\n}\n", s.index(body)) + 3
    return s[:end] + wrapper + s[end:]
