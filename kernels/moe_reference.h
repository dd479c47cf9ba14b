// Float64 CPU references of the two routed MoE kernels, the yardstick every device kernel is
// checked against (and, timed on the host, what the cpu backend runs).
//
// Slot s belongs to token s / selected and reads expert sel[s]:
//   sel_gu_silu: h[s] = silu(gate) * up, [gate; up] = W_gu[sel[s]] . x[s / selected]
//   sel_down:    y[s] = W_dn[sel[s]] . h[s]
// with W = e2m1(code) * e4m3(block scale) * global, gate and up using their own globals.
//
//   std::vector<double> h(slots * ff);
//   RETURN_IF_ERROR(SelGuSiluReference(banks, x, sel, absl::MakeSpan(h)));
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "kernels/moe_banks.h"

namespace gpuprobe {

// x: tokens * hidden fp32, tokens = ceil(slots / selected); sel: slots expert ids;
// h: slots * ff outputs.
absl::Status SelGuSiluReference(const MoeBanks& banks, absl::Span<const float> x,
                                absl::Span<const int32_t> sel, absl::Span<double> h);

// h: slots * ff fp32 inputs; sel: slots expert ids; y: slots * hidden outputs.
absl::Status SelDownReference(const MoeBanks& banks, absl::Span<const float> h,
                              absl::Span<const int32_t> sel, absl::Span<double> y);

}  // namespace gpuprobe
