#include "server/store/sql_connection.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

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

absl::Status SqlConnection::Listen(absl::string_view channel) {
  return absl::UnimplementedError(absl::StrCat("no notifications to listen to on ", channel));
}

absl::StatusOr<std::vector<SqlConnection::Notification>> SqlConnection::AwaitNotifications(
    absl::Duration) {
  return absl::UnimplementedError("no notifications to wait for");
}

}  // namespace gpuprobe
