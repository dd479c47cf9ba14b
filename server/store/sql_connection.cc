#include "server/store/sql_connection.h"

#include "absl/strings/numbers.h"

namespace gpuprobe {
namespace {

const std::string kEmpty;

}  // namespace

int64_t SqlRows::Int(size_t row, int column) const {
  int64_t value = 0;
  const auto& cell = cells_[row][column];
  if (cell) (void)absl::SimpleAtoi(*cell, &value);
  return value;
}

double SqlRows::Double(size_t row, int column) const {
  double value = 0;
  const auto& cell = cells_[row][column];
  if (cell) (void)absl::SimpleAtod(*cell, &value);
  return value;
}

const std::string& SqlRows::Text(size_t row, int column) const {
  const auto& cell = cells_[row][column];
  return cell ? *cell : kEmpty;
}

std::optional<int64_t> SqlRows::OptionalInt(size_t row, int column) const {
  if (IsNull(row, column)) return std::nullopt;
  return Int(row, column);
}

std::optional<std::string> SqlRows::OptionalText(size_t row, int column) const {
  return cells_[row][column];
}

}  // namespace gpuprobe
