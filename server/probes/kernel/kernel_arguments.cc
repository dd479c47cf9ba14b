#include "server/probes/kernel/kernel_arguments.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace gpuprobe {
namespace {

// A scalar's size by its dtype (resolved specs hold only these).
size_t ScalarSize(const std::string& dtype) {
  if (dtype == "f64" || dtype == "i64" || dtype == "u64") return 8;
  if (dtype == "f32" || dtype == "i32" || dtype == "u32") return 4;
  if (dtype == "i16" || dtype == "u16") return 2;
  return 1;
}

PackedArgument Scalar(const v1::KernelScalar& scalar) {
  PackedArgument packed;
  packed.size = ScalarSize(scalar.dtype());
  if (scalar.dtype() == "f64") {
    const double v = scalar.float_value();
    std::memcpy(packed.bytes.data(), &v, sizeof v);
  } else if (scalar.dtype() == "f32") {
    const float v = static_cast<float>(scalar.float_value());
    std::memcpy(packed.bytes.data(), &v, sizeof v);
  } else {
    // Two's complement, little-endian: the low `size` bytes of the 64-bit value.
    const uint64_t v = static_cast<uint64_t>(scalar.int_value());
    for (size_t i = 0; i < packed.size; ++i) {
      packed.bytes[i] = static_cast<unsigned char>(v >> (8 * i));
    }
  }
  return packed;
}

}  // namespace

absl::StatusOr<std::vector<PackedArgument>> PackArguments(const std::string& field,
                                                          const v1::KernelLaunch& launch,
                                                          const std::vector<ParamSlot>& layout) {
  if (static_cast<size_t>(launch.args_size()) != layout.size()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.args: %d arguments, but kernel %s takes %d parameters", field,
                        launch.args_size(), launch.kernel(), layout.size()));
  }
  std::vector<PackedArgument> packed;
  for (int a = 0; a < launch.args_size(); ++a) {
    const v1::KernelArgument& arg = launch.args(a);
    PackedArgument p;
    if (arg.has_scalar()) {
      p = Scalar(arg.scalar());
    } else {
      p.buffer = arg.buffer();
      p.offset_bytes = arg.offset_bytes();
      p.size = sizeof(uint64_t);
    }
    if (p.size != layout[a].size) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.args[%d]: %s is %d bytes, but parameter %d of kernel %s is %d bytes", field, a,
          arg.has_scalar() ? absl::StrCat("a ", arg.scalar().dtype())
                           : absl::StrCat("buffer ", arg.buffer(), "'s address"),
          p.size, a, launch.kernel(), layout[a].size));
    }
    packed.push_back(p);
  }
  return packed;
}

}  // namespace gpuprobe
