// A command probe's stdout as results: the seed probe's kind of table. Lines starting with '#'
// are comments; the first other line is the header, tab-separated; every later non-empty line is
// a row of as many cells. The axis columns become the arm's axes (integers where they parse,
// else text); every other column whose cell is a number (a trailing 'x' or '%' allowed, as the
// seed prints ratios) becomes a metric of one sample. A header naming a column twice, a number
// that is no finite decimal (nan, inf, 1e309, 0x10) and a table without rows are errors, as are
// more than 256 columns, a column name over 128 bytes and an axis cell over 256 bytes (so that
// every result reads back whole).
//
//   ASSIGN_OR_RETURN(std::vector<v1::Result> rows, ParseResultTable(stdout, {"t", "union"}));
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

// `axes` empty: the first column. DATA_LOSS names the line and what is wrong with it.
absl::StatusOr<std::vector<gpuprobe::v1::Result>> ParseResultTable(
    const std::string& text, const std::vector<std::string>& axes);

}  // namespace gpuprobe
