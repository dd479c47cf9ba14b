#include "server/probes/kernel/kernel_params.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/abbreviated.h"
#include "common/param_spec.h"
#include "common/sha256.h"
#include "common/status_macros.h"

namespace gpuprobe {
namespace {

// An element type: its size, and what a fill of it may be.
struct Dtype {
  int bytes;
  bool floating;
  double min;  // an integer type's range
  double max;
};

const std::map<std::string, Dtype>& Dtypes() {
  static const auto* dtypes = new std::map<std::string, Dtype>{
      {"f64", {8, true, 0, 0}},
      {"f32", {4, true, 0, 0}},
      {"f16", {2, true, 0, 0}},
      {"bf16", {2, true, 0, 0}},
      {"i64", {8, false, -9223372036854775808.0, 9223372036854775807.0}},
      {"i32", {4, false, -2147483648.0, 2147483647.0}},
      {"i16", {2, false, -32768.0, 32767.0}},
      {"i8", {1, false, -128.0, 127.0}},
      {"u64", {8, false, 0.0, 18446744073709551615.0}},
      {"u32", {4, false, 0.0, 4294967295.0}},
      {"u16", {2, false, 0.0, 65535.0}},
      {"u8", {1, false, 0.0, 255.0}}};
  return *dtypes;
}

std::string DtypeNames() {
  std::vector<std::string> names;
  for (const auto& [name, dtype] : Dtypes()) names.push_back(name);
  return absl::StrJoin(names, ", ");
}

absl::Status Invalid(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", what));
}

// A letter or '_', then letters, digits, '_' (and `extra`), at most 64 characters.
absl::Status CheckName(const std::string& field, const std::string& name,
                       const std::string& extra = "") {
  bool ok = !name.empty() && name.size() <= 64 && (absl::ascii_isalpha(name[0]) || name[0] == '_');
  for (const char c : name) {
    ok = ok && (absl::ascii_isalnum(c) || c == '_' || extra.find(c) != std::string::npos);
  }
  if (ok) return absl::OkStatus();
  return Invalid(field, absl::StrFormat("\"%s\" is not a name (a letter or '_', then letters, "
                                        "digits or '_%s', at most 64)",
                                        Abbreviated(name), extra));
}

absl::Status ResolveBuffer(const std::string& field, v1::KernelBuffer& b,
                           const KernelLimits& limits) {
  RETURN_IF_ERROR(CheckName(field + ".name", b.name()));
  const Dtype* dtype = nullptr;
  if (!b.dtype().empty()) {
    auto found = Dtypes().find(b.dtype());
    if (found == Dtypes().end()) {
      return Invalid(field + ".dtype", absl::StrFormat("\"%s\" is not one of %s",
                                                       Abbreviated(b.dtype()), DtypeNames()));
    }
    dtype = &found->second;
  }
  if (b.count() > 0) {
    if (dtype == nullptr) return Invalid(field + ".count", "needs a dtype");
    if (b.count() > static_cast<uint64_t>(limits.max_buffer_bytes) / dtype->bytes) {
      return Invalid(field + ".count", absl::StrFormat("%d %s is more than %d bytes", b.count(),
                                                       b.dtype(), limits.max_buffer_bytes));
    }
    // Both given (as a resolved spec has them): they must agree.
    if (b.size_bytes() > 0 && b.size_bytes() != b.count() * dtype->bytes) {
      return Invalid(field, absl::StrFormat("size_bytes %d is not %d %s", b.size_bytes(), b.count(),
                                            b.dtype()));
    }
    b.set_size_bytes(b.count() * dtype->bytes);
  }
  if (b.size_bytes() == 0) return Invalid(field, "no size: set size_bytes, or dtype and count");
  if (b.size_bytes() > static_cast<uint64_t>(limits.max_buffer_bytes)) {
    return Invalid(field + ".size_bytes",
                   absl::StrFormat("%d is more than %d", b.size_bytes(), limits.max_buffer_bytes));
  }
  if (dtype != nullptr) {
    if (b.size_bytes() % dtype->bytes != 0) {
      return Invalid(field + ".size_bytes",
                     absl::StrFormat("%d is not a multiple of %s's %d bytes", b.size_bytes(),
                                     b.dtype(), dtype->bytes));
    }
    b.set_count(b.size_bytes() / dtype->bytes);
  }
  switch (b.init_case()) {
    case v1::KernelBuffer::INIT_NOT_SET:
      b.set_zeros(true);
      break;
    case v1::KernelBuffer::kZeros:
      if (!b.zeros()) return Invalid(field + ".zeros", "false: set another fill instead");
      break;
    case v1::KernelBuffer::kConstant:
      if (dtype == nullptr) return Invalid(field + ".constant", "needs a dtype");
      if (!std::isfinite(b.constant()) ||
          (!dtype->floating && (b.constant() < dtype->min || b.constant() > dtype->max ||
                                b.constant() != std::floor(b.constant())))) {
        return Invalid(field + ".constant",
                       absl::StrFormat("%g is not a %s", b.constant(), b.dtype()));
      }
      break;
    case v1::KernelBuffer::kUniform:
      if (dtype == nullptr) return Invalid(field + ".uniform", "needs a dtype");
      if (!std::isfinite(b.uniform().a()) || !std::isfinite(b.uniform().b()) ||
          !(b.uniform().a() < b.uniform().b())) {
        return Invalid(field + ".uniform", absl::StrFormat("[%g, %g) is not a range (a < b)",
                                                           b.uniform().a(), b.uniform().b()));
      }
      if (!dtype->floating && (b.uniform().a() < dtype->min || b.uniform().b() > dtype->max + 1)) {
        return Invalid(field + ".uniform",
                       absl::StrFormat("[%g, %g) is outside %s's range", b.uniform().a(),
                                       b.uniform().b(), b.dtype()));
      }
      break;
    case v1::KernelBuffer::kNormal:
      if (dtype == nullptr || !dtype->floating) {
        return Invalid(field + ".normal", "needs a floating dtype (f64, f32, f16, bf16)");
      }
      if (!std::isfinite(b.normal().a()) || !std::isfinite(b.normal().b()) ||
          !(b.normal().b() > 0)) {
        return Invalid(field + ".normal", absl::StrFormat("mean %g, stddev %g: the stddev must "
                                                          "be positive",
                                                          b.normal().a(), b.normal().b()));
      }
      break;
    case v1::KernelBuffer::kCopyOf:
      break;  // checked once every buffer is known
  }
  if (b.rotation() == 0) b.set_rotation(1);
  if (b.rotation() > static_cast<uint32_t>(limits.max_rotation)) {
    return Invalid(field + ".rotation",
                   absl::StrFormat("%d is more than %d copies", b.rotation(), limits.max_rotation));
  }
  return absl::OkStatus();
}

// Grid, block or cluster dimensions: 1 to 3 values, each at least 1 and at most `max[i]`.
absl::Status CheckDims(const std::string& field,
                       const google::protobuf::RepeatedField<uint32_t>& dims,
                       const uint32_t (&max)[3]) {
  if (dims.empty() || dims.size() > 3) {
    return Invalid(field, absl::StrFormat("%d values; 1 to 3 (x, y, z)", dims.size()));
  }
  for (int i = 0; i < dims.size(); ++i) {
    if (dims[i] < 1 || dims[i] > max[i]) {
      return Invalid(field,
                     absl::StrFormat("%c = %d is outside [1, %d]", "xyz"[i], dims[i], max[i]));
    }
  }
  return absl::OkStatus();
}

uint64_t Product(const google::protobuf::RepeatedField<uint32_t>& dims) {
  uint64_t product = 1;
  for (const uint32_t d : dims) product *= d;
  return product;
}

absl::Status CheckScalar(const std::string& field, const v1::KernelScalar& s) {
  const auto found = Dtypes().find(s.dtype());
  if (found == Dtypes().end() || s.dtype() == "f16" || s.dtype() == "bf16") {
    return Invalid(field + ".dtype", absl::StrFormat("\"%s\" is not one of f64, f32, i64, i32, "
                                                     "i16, i8, u64, u32, u16, u8",
                                                     Abbreviated(s.dtype())));
  }
  const Dtype& dtype = found->second;
  switch (s.value_case()) {
    case v1::KernelScalar::kFloatValue:
      if (!dtype.floating) return Invalid(field, absl::StrCat("a ", s.dtype(), " takes int_value"));
      return absl::OkStatus();
    case v1::KernelScalar::kIntValue: {
      if (dtype.floating)
        return Invalid(field, absl::StrCat("a ", s.dtype(), " takes float_value"));
      const double v = static_cast<double>(s.int_value());
      if (v < dtype.min || v > dtype.max) {
        return Invalid(field,
                       absl::StrFormat("%d is outside %s's range", s.int_value(), s.dtype()));
      }
      return absl::OkStatus();
    }
    default:
      return Invalid(field, "no value: set int_value or float_value");
  }
}

absl::Status ResolveLaunch(const std::string& field, const v1::KernelLaunch& l,
                           const std::map<std::string, const v1::KernelBuffer*>& buffers,
                           const KernelLimits& limits) {
  if (!IsSha256Hex(l.module())) {
    return Invalid(field + ".module",
                   absl::StrFormat("\"%s\" is not a module id (the sha256 UploadModule returned)",
                                   Abbreviated(l.module())));
  }
  if (l.kernel().empty() || l.kernel().size() > 1024) {
    return Invalid(field + ".kernel", "a kernel's name, 1 to 1024 characters");
  }
  RETURN_IF_ERROR(CheckDims(field + ".grid", l.grid(), {2147483647u, 65535u, 65535u}));
  RETURN_IF_ERROR(CheckDims(field + ".block", l.block(), {1024u, 1024u, 64u}));
  if (Product(l.block()) > 1024) {
    return Invalid(field + ".block",
                   absl::StrFormat("%d threads is more than 1024", Product(l.block())));
  }
  if (l.shared_bytes() > static_cast<uint32_t>(limits.max_shared_bytes)) {
    return Invalid(field + ".shared_bytes", absl::StrFormat("%d is more than %d", l.shared_bytes(),
                                                            limits.max_shared_bytes));
  }
  if (!l.cluster().empty()) {
    RETURN_IF_ERROR(CheckDims(field + ".cluster", l.cluster(), {16u, 16u, 16u}));
    if (Product(l.cluster()) > 16) {
      return Invalid(field + ".cluster",
                     absl::StrFormat("%d blocks is more than 16", Product(l.cluster())));
    }
    for (int i = 0; i < l.cluster().size(); ++i) {
      const uint32_t grid = i < l.grid().size() ? l.grid(i) : 1;
      if (grid % l.cluster(i) != 0) {
        return Invalid(field + ".cluster", absl::StrFormat("grid %c = %d is not a multiple of %d",
                                                           "xyz"[i], grid, l.cluster(i)));
      }
    }
  }
  if (l.args_size() > limits.max_args) {
    return Invalid(field + ".args",
                   absl::StrFormat("%d arguments; at most %d", l.args_size(), limits.max_args));
  }
  for (int a = 0; a < l.args_size(); ++a) {
    const std::string arg = absl::StrCat(field, ".args[", a, "]");
    const v1::KernelArgument& x = l.args(a);
    if (x.has_scalar()) {
      RETURN_IF_ERROR(CheckScalar(arg + ".scalar", x.scalar()));
      if (x.offset_bytes() != 0) return Invalid(arg + ".offset_bytes", "a scalar has no offset");
      continue;
    }
    if (x.value_case() != v1::KernelArgument::kBuffer) {
      return Invalid(arg, "neither a buffer nor a scalar");
    }
    const auto buffer = buffers.find(x.buffer());
    if (buffer == buffers.end()) {
      return Invalid(arg + ".buffer",
                     absl::StrFormat("\"%s\" names no buffer", Abbreviated(x.buffer())));
    }
    if (x.offset_bytes() >= buffer->second->size_bytes()) {
      return Invalid(arg + ".offset_bytes",
                     absl::StrFormat("%d is not inside %s's %d bytes", x.offset_bytes(), x.buffer(),
                                     buffer->second->size_bytes()));
    }
  }
  return absl::OkStatus();
}

// An arm's outputs: buffers, each named once, all of them within max_output_bytes (a check
// keeps the reference arm's on the host).
absl::Status CheckOutputs(const std::string& field, const v1::KernelArm& arm,
                          const std::map<std::string, const v1::KernelBuffer*>& buffers,
                          const KernelLimits& limits) {
  std::set<std::string> seen;
  int64_t bytes = 0;
  for (int o = 0; o < arm.outputs_size(); ++o) {
    const std::string output = absl::StrCat(field, ".outputs[", o, "]");
    const auto buffer = buffers.find(arm.outputs(o));
    if (buffer == buffers.end()) {
      return Invalid(output,
                     absl::StrFormat("\"%s\" names no buffer", Abbreviated(arm.outputs(o))));
    }
    if (!seen.insert(arm.outputs(o)).second) {
      return Invalid(output, absl::StrCat("\"", arm.outputs(o), "\" is named twice"));
    }
    bytes += static_cast<int64_t>(buffer->second->size_bytes());
  }
  if (bytes > limits.max_output_bytes) {
    return Invalid(field + ".outputs", absl::StrFormat("%d bytes; a check compares at most %d",
                                                       bytes, limits.max_output_bytes));
  }
  return absl::OkStatus();
}

// The check's reference arm (default the first) and tolerance (default bitwise).
absl::Status ResolveCheck(v1::KernelParams& p, const std::set<std::string>& arms) {
  if (p.reference().empty()) p.set_reference(p.arms(0).name());
  if (!arms.count(p.reference())) {
    return Invalid("reference", absl::StrFormat("\"%s\" names no arm", Abbreviated(p.reference())));
  }
  v1::KernelTolerance& t = *p.mutable_tolerance();
  for (const auto& [name, value] : {std::pair{"abs", t.abs()}, {"rel", t.rel()}}) {
    if (!std::isfinite(value) || value < 0) {
      return Invalid(absl::StrCat("tolerance.", name),
                     absl::StrFormat("%g is not a tolerance (finite, at least 0)", value));
    }
  }
  if (t.bitwise() && (t.abs() > 0 || t.rel() > 0)) {
    return Invalid("tolerance", "bitwise, or abs and rel: not both");
  }
  if (t.abs() == 0 && t.rel() == 0) t.set_bitwise(true);
  if (!t.bitwise()) {
    for (const v1::KernelArm& arm : p.arms()) {
      for (const std::string& output : arm.outputs()) {
        for (const v1::KernelBuffer& b : p.buffers()) {
          if (b.name() == output && b.dtype().empty()) {
            return Invalid("tolerance", absl::StrFormat("output %s has no dtype to compare values "
                                                        "of: compare bitwise",
                                                        output));
          }
        }
      }
    }
  }
  const v1::KernelArm* reference = nullptr;
  for (const v1::KernelArm& arm : p.arms()) {
    if (arm.name() == p.reference()) reference = &arm;
  }
  for (int i = 0; i < p.arms_size(); ++i) {
    for (int o = 0; o < p.arms(i).outputs_size(); ++o) {
      const std::string& output = p.arms(i).outputs(o);
      if (std::find(reference->outputs().begin(), reference->outputs().end(), output) ==
          reference->outputs().end()) {
        return Invalid(absl::StrCat("arms[", i, "].outputs[", o, "]"),
                       absl::StrFormat("%s is not an output of the reference arm %s, so a check "
                                       "has nothing to compare it with",
                                       output, p.reference()));
      }
    }
  }
  const bool outputs = std::any_of(p.arms().begin(), p.arms().end(),
                                   [](const v1::KernelArm& a) { return !a.outputs().empty(); });
  if (p.verify() && !outputs) return Invalid("verify", "no arm declares outputs to check");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::KernelParams> ResolveKernelParams(v1::KernelParams p,
                                                     const KernelLimits& limits) {
  RETURN_IF_ERROR(CompleteParams(p));
  if (p.buffers().empty() || p.buffers_size() > limits.max_buffers) {
    return Invalid("buffers",
                   absl::StrFormat("%d buffers; 1 to %d", p.buffers_size(), limits.max_buffers));
  }
  std::map<std::string, const v1::KernelBuffer*> buffers;
  int64_t total = 0;
  for (int i = 0; i < p.buffers_size(); ++i) {
    const std::string field = absl::StrCat("buffers[", i, "]");
    v1::KernelBuffer& b = *p.mutable_buffers(i);
    RETURN_IF_ERROR(ResolveBuffer(field, b, limits));
    if (!buffers.emplace(b.name(), &b).second) {
      return Invalid(field + ".name", absl::StrCat("\"", b.name(), "\" names two buffers"));
    }
    total += static_cast<int64_t>(b.size_bytes()) * b.rotation();
  }
  if (total > limits.max_total_bytes) {
    return Invalid("buffers", absl::StrFormat("%d bytes with their rotations; at most %d", total,
                                              limits.max_total_bytes));
  }
  for (int i = 0; i < p.buffers_size(); ++i) {
    const v1::KernelBuffer& b = p.buffers(i);
    if (!b.has_copy_of()) continue;
    const auto source = buffers.find(b.copy_of());
    if (source == buffers.end() || source->second == &b || source->second->has_copy_of() ||
        source->second->size_bytes() != b.size_bytes()) {
      return Invalid(absl::StrCat("buffers[", i, "].copy_of"),
                     absl::StrFormat("\"%s\" is no other buffer of %d bytes that is not a copy",
                                     Abbreviated(b.copy_of()), b.size_bytes()));
    }
  }
  if (p.arms().empty() || p.arms_size() > limits.max_arms) {
    return Invalid("arms", absl::StrFormat("%d arms; 1 to %d", p.arms_size(), limits.max_arms));
  }
  std::set<std::string> arms;
  for (int i = 0; i < p.arms_size(); ++i) {
    const std::string field = absl::StrCat("arms[", i, "]");
    const v1::KernelArm& arm = p.arms(i);
    RETURN_IF_ERROR(CheckName(field + ".name", arm.name(), "-."));
    if (!arms.insert(arm.name()).second) {
      return Invalid(field + ".name", absl::StrCat("\"", arm.name(), "\" names two arms"));
    }
    if (arm.launches().empty() || arm.launches_size() > limits.max_launches) {
      return Invalid(
          field + ".launches",
          absl::StrFormat("%d launches; 1 to %d", arm.launches_size(), limits.max_launches));
    }
    for (int l = 0; l < arm.launches_size(); ++l) {
      RETURN_IF_ERROR(ResolveLaunch(absl::StrCat(field, ".launches[", l, "]"), arm.launches(l),
                                    buffers, limits));
    }
    if (!std::isfinite(arm.flops()) || arm.flops() < 0) {
      return Invalid(field + ".flops", absl::StrFormat("%g is not a count", arm.flops()));
    }
    RETURN_IF_ERROR(CheckOutputs(field, arm, buffers, limits));
  }
  RETURN_IF_ERROR(ResolveCheck(p, arms));
  if (RotationPeriod(p) > limits.max_rotation) {
    return Invalid("buffers", absl::StrFormat("rotations whose least common multiple is %d: a "
                                              "graph sample would take that many launches; at "
                                              "most %d (use rotations that divide one another)",
                                              RotationPeriod(p), limits.max_rotation));
  }
  if (p.graph_launches() % RotationPeriod(p) != 0) {
    return Invalid(
        "graph_launches",
        absl::StrFormat("%d is not a multiple of the rotations' period %d: a sample's first "
                        "launch would reuse the copies the previous one's last used",
                        p.graph_launches(), RotationPeriod(p)));
  }
  if (static_cast<int>(ModuleIds(p).size()) > limits.max_modules) {
    return Invalid("arms", absl::StrFormat("the launches name %d modules; at most %d",
                                           ModuleIds(p).size(), limits.max_modules));
  }
  for (int i = 0; i < p.arms_size(); ++i) {
    const std::string& baseline = p.arms(i).baseline();
    if (!baseline.empty() && (baseline == p.arms(i).name() || !arms.count(baseline))) {
      return Invalid(absl::StrCat("arms[", i, "].baseline"),
                     absl::StrFormat("\"%s\" names no other arm", Abbreviated(baseline)));
    }
  }
  if (static_cast<int64_t>(p.arms_size()) * p.reps() * p.blocks() > limits.max_arm_reps) {
    return Invalid("reps",
                   absl::StrFormat("%d arms x %d reps x %d blocks is more than %d "
                                   "launches",
                                   p.arms_size(), p.reps(), p.blocks(), limits.max_arm_reps));
  }
  return p;
}

std::vector<std::string> ModuleIds(const v1::KernelParams& params) {
  std::vector<std::string> ids;
  for (const v1::KernelArm& arm : params.arms()) {
    for (const v1::KernelLaunch& launch : arm.launches()) {
      if (std::find(ids.begin(), ids.end(), launch.module()) == ids.end()) {
        ids.push_back(launch.module());
      }
    }
  }
  return ids;
}

int RotationPeriod(const v1::KernelParams& params) {
  int64_t period = 1;
  for (const v1::KernelBuffer& b : params.buffers()) {
    period = std::lcm(period, int64_t{std::max<uint32_t>(b.rotation(), 1)});
    if (period > std::numeric_limits<int>::max()) return std::numeric_limits<int>::max();
  }
  return static_cast<int>(period);
}

int64_t BufferBytes(const v1::KernelParams& params) {
  int64_t total = 0;
  for (const v1::KernelBuffer& b : params.buffers()) {
    total += static_cast<int64_t>(b.size_bytes()) * std::max<uint32_t>(b.rotation(), 1);
  }
  return total;
}

}  // namespace gpuprobe
