// A check's comparison of one output buffer of an arm with the reference arm's: element by
// element in the buffer's dtype, |x - ref| <= abs + rel * |ref| (a NaN matches only a NaN), or
// byte for byte. Device-free.
//
//   OutputComparison c = CompareOutput("f32", tolerance, reference_bytes, arm_bytes);
//   if (!c.passed) ... c.detail
#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "server/probes/kernel/kernel.pb.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

struct OutputComparison {
  bool passed = false;
  // "max abs error 3e-07, max rel error 1.2e-07 (element 17)" or "all 4096 bytes equal".
  std::string detail;
};

// `dtype` is the buffer's (empty: bytes, compared bitwise whatever the tolerance); `reference`
// and `output` are its bytes, of the same size.
OutputComparison CompareOutput(const std::string& dtype, const v1::KernelTolerance& tolerance,
                               absl::string_view reference, absl::string_view output);

}  // namespace gpuprobe
