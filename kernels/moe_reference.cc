#include "kernels/moe_reference.h"

#include <cmath>

#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "kernels/nvfp4.h"

namespace gpuprobe {
namespace {

// One row of an NVFP4 matrix dotted with fp32 inputs, in float64, before the global scale.
double Nvfp4RowDot(const uint8_t* codes, const uint8_t* scales, const float* in, int64_t cols) {
  const std::array<double, 256>& e4m3 = E4m3Table();
  double row = 0.0;
  for (int64_t block = 0; block < cols / kNvfp4BlockSize; ++block) {
    double acc = 0.0;
    const uint8_t* c = codes + block * (kNvfp4BlockSize / 2);
    const float* v = in + block * kNvfp4BlockSize;
    for (int j = 0; j < kNvfp4BlockSize / 2; ++j) {
      acc += static_cast<double>(E2m1Value(c[j] & 0xF)) * v[2 * j];
      acc += static_cast<double>(E2m1Value(c[j] >> 4)) * v[2 * j + 1];
    }
    row += acc * e4m3[scales[block]];
  }
  return row;
}

absl::Status CheckSlots(const MoeGeometry& g, absl::Span<const int32_t> sel) {
  for (size_t s = 0; s < sel.size(); ++s) {
    if (sel[s] < 0 || sel[s] >= g.experts) {
      return absl::InvalidArgumentError(
          absl::StrFormat("sel[%d] = %d is outside [0, experts=%d)", s, sel[s], g.experts));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSize(const char* name, size_t got, int64_t want) {
  if (static_cast<int64_t>(got) != want) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s has %d elements, expected %d", name, got, want));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SelGuSiluReference(const MoeBanks& banks, absl::Span<const float> x,
                                absl::Span<const int32_t> sel, absl::Span<double> h) {
  const MoeGeometry& g = banks.geometry;
  const int64_t slots = static_cast<int64_t>(sel.size());
  const int64_t tokens = (slots + g.selected - 1) / g.selected;
  RETURN_IF_ERROR(CheckSlots(g, sel));
  RETURN_IF_ERROR(CheckSize("x", x.size(), tokens * g.hidden));
  RETURN_IF_ERROR(CheckSize("h", h.size(), slots * g.ff));

  const Nvfp4Bank& w = banks.gate_up;
  const int64_t row_codes = w.cols / 2;
  const int64_t row_scales = w.cols / kNvfp4BlockSize;
  for (int64_t s = 0; s < slots; ++s) {
    const int e = sel[s];
    const float* xs = x.data() + (s / g.selected) * g.hidden;
    for (int64_t j = 0; j < g.ff; ++j) {
      const int64_t up_row = g.ff + j;
      const double gate = Nvfp4RowDot(w.ExpertCodes(e) + j * row_codes,
                                      w.ExpertScales(e) + j * row_scales, xs, w.cols) *
                          banks.gate_global[e];
      const double up = Nvfp4RowDot(w.ExpertCodes(e) + up_row * row_codes,
                                    w.ExpertScales(e) + up_row * row_scales, xs, w.cols) *
                        banks.up_global[e];
      h[s * g.ff + j] = gate / (1.0 + std::exp(-gate)) * up;
    }
  }
  return absl::OkStatus();
}

absl::Status SelDownReference(const MoeBanks& banks, absl::Span<const float> h,
                              absl::Span<const int32_t> sel, absl::Span<double> y) {
  const MoeGeometry& g = banks.geometry;
  const int64_t slots = static_cast<int64_t>(sel.size());
  RETURN_IF_ERROR(CheckSlots(g, sel));
  RETURN_IF_ERROR(CheckSize("h", h.size(), slots * g.ff));
  RETURN_IF_ERROR(CheckSize("y", y.size(), slots * g.hidden));

  const Nvfp4Bank& w = banks.down;
  const int64_t row_codes = w.cols / 2;
  const int64_t row_scales = w.cols / kNvfp4BlockSize;
  for (int64_t s = 0; s < slots; ++s) {
    const int e = sel[s];
    const float* hs = h.data() + s * g.ff;
    for (int64_t i = 0; i < g.hidden; ++i) {
      y[s * g.hidden + i] = Nvfp4RowDot(w.ExpertCodes(e) + i * row_codes,
                                        w.ExpertScales(e) + i * row_scales, hs, w.cols) *
                            banks.down_global[e];
    }
  }
  return absl::OkStatus();
}

}  // namespace gpuprobe
