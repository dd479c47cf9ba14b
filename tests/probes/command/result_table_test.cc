// A command's stdout as results (ParseResultTable): the seed probe's table, and what is refused.
#include "server/probes/command/result_table.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

std::string Refusal(const std::string& table) {
  absl::StatusOr<std::vector<v1::Result>> r = ParseResultTable(table, {});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << table;
  return std::string(r.status().message());
}

TEST(ResultTableTest, RowsBecomeResultsWithTheirAxisAndNumericColumns) {
  absl::StatusOr<std::vector<v1::Result>> r = ParseResultTable(
      "# a comment\nsize\tvariant\ttime_us\tratio\n1\tper-slot\t2.5\t1.02x\n2\tunion\t3e1\t98%\n",
      {});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].axes(0).name(), "size");
  ASSERT_EQ((*r)[0].metrics_size(), 2);  // the text column is no metric
  EXPECT_EQ((*r)[0].metrics(0).name(), "time_us");
  EXPECT_DOUBLE_EQ((*r)[1].metrics(0).median(), 30.0);
  EXPECT_DOUBLE_EQ((*r)[1].metrics(1).median(), 98.0);
}

TEST(ResultTableTest, NumbersThatAreNoFiniteDecimalDuplicateColumnsAndNoRowsAreRefused) {
  for (const std::string cell : {"nan", "NaN", "inf", "-inf", "1e309", "0x10"}) {
    EXPECT_THAT(Refusal("size\ttime_us\n1\t" + cell + "\n"),
                HasSubstr("stdout line 2: column time_us: \"" + cell +
                          "\" is not a finite decimal number"));
  }
  EXPECT_THAT(Refusal("size\ttime_us\ttime_us\n1\t2\t3\n"),
              HasSubstr("stdout line 1: the header names column \"time_us\" twice"));
  EXPECT_THAT(Refusal("# only\nsize\ttime_us\n"),
              HasSubstr("a header and no rows: the command measured nothing"));
  EXPECT_THAT(Refusal("# nothing\n\n"), HasSubstr("no table"));
}

TEST(ResultTableTest, AResultIsBoundedSoThatItReadsBackWhole) {
  EXPECT_THAT(Refusal("size\ttime_us\n" + std::string(10 << 20, 'x') + "\t1\n"),
              HasSubstr("stdout line 2: column size: a cell of 10485760 bytes; at most 256"));
  EXPECT_THAT(Refusal(std::string(200, 'c') + "\ttime_us\n1\t2\n"),
              HasSubstr("stdout line 1: column \""));
  std::string wide = "size";
  for (int i = 0; i < 300; ++i) wide += "\tm" + std::to_string(i);
  EXPECT_THAT(Refusal(wide + "\n"), HasSubstr("the header has 301 columns; at most 256"));
}

}  // namespace
}  // namespace gpuprobe
