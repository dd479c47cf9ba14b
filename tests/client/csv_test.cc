#include "client/csv.h"

#include <string>

#include "absl/strings/numbers.h"
#include "client/proto_names.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

TEST(CsvTest, FieldsAreQuotedOnlyWhereTheyMustBeAndTheirQuotesDoubled) {
  EXPECT_EQ(CsvField("cpu"), "cpu");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(CsvField("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(CsvLine({"job-1", "branch=main,commit=abc", "", "NVIDIA \"H200\""}),
            "job-1,\"branch=main,commit=abc\",,\"NVIDIA \"\"H200\"\"\"\n");
}

TEST(CsvTest, NumbersAreWrittenInFullAndReadBackExactly) {
  for (const double v : {0.0, 1.0, 93.538, 1.0 / 3.0, 2.022844981955426, 6.02e23, 1e-300}) {
    double back = -1;
    ASSERT_TRUE(absl::SimpleAtod(CsvNumber(v), &back)) << CsvNumber(v);
    EXPECT_EQ(back, v) << CsvNumber(v);
  }
  EXPECT_EQ(CsvNumber(93.538), "93.538");  // the shortest text, not %.3f or %.17g
  EXPECT_EQ(CsvNumber(12), "12");
}

TEST(CliNameTest, EnumValuesAreSpelledAsTheFlagsTakeThemAndUnspecifiedIsAbsent) {
  EXPECT_EQ(CliName(v1::SAMPLING_END_MAX_SECONDS), "max-seconds");
  EXPECT_EQ(CliName(v1::VERDICT_TOO_FEW_REPS), "too-few-reps");
  EXPECT_EQ(CliName(v1::ARM_ORDER_ROTATE), "rotate");
  EXPECT_EQ(CliName(v1::KERNEL_VARIANT_PER_SLOT), "per-slot");
  EXPECT_EQ(CliName(v1::VERDICT_UNSPECIFIED), "");
  EXPECT_EQ(CliName(static_cast<v1::Verdict>(99)), "unknown (99)");
}

}  // namespace
}  // namespace gpuprobe
