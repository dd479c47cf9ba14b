#include "server/probes/command/result_table.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/abbreviated.h"
#include "server/probes/results.h"

namespace gpuprobe {
namespace {

// What a metric column's cell holds: a number (decimal, a trailing 'x' or '%' allowed), text
// (not a number at all: the cell is not a metric), or a number that is no finite decimal (nan,
// inf, 1e309, 0x10): the table's error.
enum class Cell { kNumber, kText, kBadNumber };

Cell Number(absl::string_view cell, double* value) {
  cell = absl::StripAsciiWhitespace(cell);
  if (!absl::SimpleAtod(cell, value)) {
    if (!(absl::ConsumeSuffix(&cell, "x") || absl::ConsumeSuffix(&cell, "%")) ||
        !absl::SimpleAtod(cell, value)) {
      return Cell::kText;
    }
  }
  const bool decimal =
      !cell.empty() && cell.find_first_not_of("0123456789+-.eE") == absl::string_view::npos;
  return decimal && std::isfinite(*value) ? Cell::kNumber : Cell::kBadNumber;
}

// What one result may hold, so that every stored result reads back whole (each is one event of
// the job's stream): its columns, a column's name, an axis cell's text.
constexpr size_t kMaxColumns = 256;
constexpr size_t kMaxNameBytes = 128;
constexpr size_t kMaxAxisCellBytes = 256;

absl::Status Bad(int line, const std::string& what) {
  return absl::DataLossError(absl::StrFormat("stdout line %d: %s", line, what));
}

}  // namespace

absl::StatusOr<std::vector<v1::Result>> ParseResultTable(const std::string& text,
                                                         const std::vector<std::string>& axes) {
  std::vector<std::string> header;
  std::vector<bool> is_axis;
  std::vector<v1::Result> results;
  int number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++number;
    line = absl::StripTrailingAsciiWhitespace(line);
    if (line.empty() || absl::StartsWith(line, "#")) continue;
    const std::vector<std::string> cells = absl::StrSplit(line, '\t');
    if (header.empty()) {
      if (cells.size() > kMaxColumns) {
        return Bad(number, absl::StrFormat("the header has %d columns; at most %d", cells.size(),
                                           kMaxColumns));
      }
      for (const std::string& name : cells) {
        if (name.size() > kMaxNameBytes) {
          return Bad(number, absl::StrFormat("column \"%s\": a name of %d bytes; at most %d",
                                             Abbreviated(name), name.size(), kMaxNameBytes));
        }
      }
      header = cells;
      is_axis.assign(header.size(), false);
      if (axes.empty()) is_axis[0] = true;
      for (size_t i = 0; i < header.size(); ++i) {
        if (std::find(header.begin(), header.begin() + i, header[i]) != header.begin() + i) {
          return Bad(number, absl::StrFormat("the header names column \"%s\" twice",
                                             Abbreviated(header[i])));
        }
      }
      for (const std::string& axis : axes) {
        auto it = std::find(header.begin(), header.end(), axis);
        if (it == header.end()) {
          return Bad(number,
                     absl::StrFormat("the header has no column \"%s\", a declared axis "
                                     "(its columns: %s)",
                                     Abbreviated(axis), Abbreviated(absl::StrJoin(header, ", "))));
        }
        is_axis[it - header.begin()] = true;
      }
      continue;
    }
    if (cells.size() != header.size()) {
      return Bad(number,
                 absl::StrFormat("%d cells, where the header has %d", cells.size(), header.size()));
    }
    v1::Result& r = results.emplace_back();
    r.set_arm_index(static_cast<uint32_t>(results.size() - 1));
    for (size_t i = 0; i < cells.size(); ++i) {
      int64_t integer = 0;
      double value = 0;
      if (is_axis[i]) {
        if (cells[i].size() > kMaxAxisCellBytes) {
          return Bad(number,
                     absl::StrFormat("column %s: a cell of %d bytes; at most %d",
                                     Abbreviated(header[i]), cells[i].size(), kMaxAxisCellBytes));
        }
        *r.add_axes() = absl::SimpleAtoi(cells[i], &integer) ? IntAxis(header[i], integer)
                                                             : TextAxis(header[i], cells[i]);
      } else if (const Cell cell = Number(cells[i], &value); cell == Cell::kNumber) {
        *r.add_metrics() = MetricOf(header[i], "", {value});
      } else if (cell == Cell::kBadNumber) {
        return Bad(number, absl::StrFormat("column %s: \"%s\" is not a finite decimal number",
                                           Abbreviated(header[i]), Abbreviated(cells[i])));
      }
    }
  }
  if (header.empty()) return Bad(number, "no table: every line is empty or a # comment");
  if (results.empty()) return Bad(number, "a header and no rows: the command measured nothing");
  return results;
}

}  // namespace gpuprobe
