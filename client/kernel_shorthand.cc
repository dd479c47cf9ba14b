#include "client/kernel_shorthand.h"

#include <regex>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"

namespace gpuprobe {
namespace {

using Json = nlohmann::ordered_json;

absl::Status Bad(const std::string& flag, const std::string& value, const std::string& form) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: \"%s\" is not of the form %s", flag, value, form));
}

absl::StatusOr<Json> Dims(const std::string& flag, const std::string& text) {
  Json dims = Json::array();
  for (const absl::string_view part : absl::StrSplit(text, ',')) {
    uint32_t d = 0;
    if (!absl::SimpleAtoi(part, &d) || d == 0) return Bad(flag, text, "X[,Y,Z] (positive)");
    dims.push_back(d);
  }
  if (dims.empty() || dims.size() > 3) return Bad(flag, text, "X[,Y,Z] (positive)");
  return dims;
}

absl::StatusOr<double> Number(const std::string& flag, const std::string& whole,
                              absl::string_view text, const std::string& form) {
  double v = 0;
  if (!absl::SimpleAtod(text, &v)) return Bad(flag, whole, form);
  return v;
}

absl::StatusOr<Json> Buffer(const std::string& text) {
  const std::string form = "NAME=DTYPE:COUNT[:zeros|:constant:V|:uniform:A:B|:normal:MEAN:STD]";
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return Bad("--buffer", text, form);
  const std::vector<std::string> parts = absl::StrSplit(text.substr(eq + 1), ':');
  uint64_t count = 0;
  if (parts.size() < 2 || !absl::SimpleAtoi(parts[1], &count)) return Bad("--buffer", text, form);
  Json b = {{"name", text.substr(0, eq)}, {"dtype", parts[0]}, {"count", count}};
  const std::string fill = parts.size() > 2 ? parts[2] : "zeros";
  const size_t values = fill == "zeros" ? 0 : fill == "constant" ? 1 : 2;
  const size_t parts_wanted = parts.size() == 2 ? 2 : 3 + values;
  if ((fill != "zeros" && fill != "constant" && fill != "uniform" && fill != "normal") ||
      parts.size() != parts_wanted) {
    return Bad("--buffer", text, form);
  }
  std::vector<double> v;
  for (size_t i = 3; i < parts.size(); ++i) {
    absl::StatusOr<double> n = Number("--buffer", text, parts[i], form);
    if (!n.ok()) return n.status();
    v.push_back(*n);
  }
  if (fill == "constant") b["constant"] = v[0];
  if (fill == "uniform" || fill == "normal") b[fill] = {{"a", v[0]}, {"b", v[1]}};
  return b;
}

absl::StatusOr<Json> Argument(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return Json{{"buffer", text}};
  const std::string dtype = text.substr(0, colon), value = text.substr(colon + 1);
  const std::string form = "NAME or DTYPE:VALUE";
  if (dtype == "f32" || dtype == "f64") {
    absl::StatusOr<double> v = Number("--arg", text, value, form);
    if (!v.ok()) return v.status();
    return Json{{"scalar", {{"dtype", dtype}, {"floatValue", *v}}}};
  }
  int64_t v = 0;
  if (!absl::SimpleAtoi(value, &v)) return Bad("--arg", text, form);
  return Json{{"scalar", {{"dtype", dtype}, {"intValue", std::to_string(v)}}}};
}

}  // namespace

absl::StatusOr<std::string> ShorthandSpecJson(const ClientFlags& f, const std::string& module) {
  if (f.kernel_grid.empty() || f.kernel_block.empty()) {
    return absl::InvalidArgumentError("--kernel: needs --grid and --block");
  }
  Json launch = {{"kernel", f.kernel_name}};
  if (!module.empty()) launch["module"] = module;
  absl::StatusOr<Json> grid = Dims("--grid", f.kernel_grid);
  if (!grid.ok()) return grid.status();
  absl::StatusOr<Json> block = Dims("--block", f.kernel_block);
  if (!block.ok()) return block.status();
  launch["grid"] = *grid;
  launch["block"] = *block;
  if (f.kernel_smem > 0) launch["sharedBytes"] = f.kernel_smem;
  launch["args"] = Json::array();
  for (const std::string& arg : f.kernel_args) {
    absl::StatusOr<Json> a = Argument(arg);
    if (!a.ok()) return a.status();
    launch["args"].push_back(*a);
  }
  Json spec = {{"buffers", Json::array()}};
  for (const std::string& buffer : f.kernel_buffers) {
    absl::StatusOr<Json> b = Buffer(buffer);
    if (!b.ok()) return b.status();
    spec["buffers"].push_back(*b);
  }
  static const std::regex kArmName("[A-Za-z_][A-Za-z0-9_.-]{0,63}");
  const std::string arm = std::regex_match(f.kernel_name, kArmName) ? f.kernel_name : "kernel";
  spec["arms"] = Json::array({{{"name", arm}, {"launches", Json::array({launch})}}});
  return spec.dump();
}

}  // namespace gpuprobe
