#include "common/param_spec.h"

#include "absl/status/statusor.h"
#include "common/param_text.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/probes/testdata/declared_params.pb.h"

namespace gpuprobe {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

using test::SampleParams;

absl::StatusOr<SampleParams> Completed(
    std::initializer_list<std::pair<const std::string, std::string>> values) {
  SampleParams p;
  google::protobuf::Map<std::string, std::string> map(values.begin(), values.end());
  if (absl::Status set = SetParamsFromText(map, p); !set.ok()) return set;
  if (absl::Status complete = CompleteParams(p); !complete.ok()) return complete;
  return p;
}

std::string Refusal(std::initializer_list<std::pair<const std::string, std::string>> values) {
  absl::StatusOr<SampleParams> p = Completed(values);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument) << p.status();
  return std::string(p.status().message());
}

TEST(ParamSpecTest, ProbeInfoParamsComeFromTheDeclarations) {
  const std::vector<v1::ProbeParam> params = DeclaredParams(*SampleParams::descriptor());
  std::vector<std::string> names;
  for (const v1::ProbeParam& p : params) names.push_back(p.name());
  // Field order, the nested message's fields in its place.
  EXPECT_THAT(names,
              ElementsAre("reps", "sizes", "timing", "max_seconds", "width", "seed", "verbose"));
  EXPECT_EQ(params[0].type(), "a non-negative integer");
  EXPECT_EQ(params[0].default_value(), "20");
  EXPECT_EQ(params[0].limits(), "in [2, 10000]");
  EXPECT_EQ(params[0].description(), "reps per arm");
  EXPECT_EQ(params[1].type(), "a comma-separated list, each an integer");
  EXPECT_EQ(params[1].limits(), "each in [1, inf), at most 3 items");
  EXPECT_EQ(params[1].unit(), "bytes");
  EXPECT_EQ(params[2].type(), "one of events|graph");
  EXPECT_EQ(params[3].default_value(), "computed");  // default_text where no value says it
  EXPECT_EQ(params[3].limits(), "in (0, 60]");
  EXPECT_EQ(params[4].limits(), "a multiple of 16 in [16, 4096]");
  EXPECT_EQ(params[5].limits(), "");  // undeclared: listed bare
  EXPECT_EQ(params[5].default_value(), "");
}

TEST(ParamSpecTest, UnsetFieldsTakeTheirDefaultsAndGivenOnesStay) {
  absl::StatusOr<SampleParams> p = Completed({});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->reps(), 20u);
  EXPECT_THAT(p->sizes(), ElementsAre(8, 16));
  EXPECT_EQ(p->timing(), v1::TIMING_MODE_GRAPH);
  EXPECT_FALSE(p->has_max_seconds());  // no default_value: left for the probe
  EXPECT_EQ(p->geometry().width(), 64u);
  EXPECT_FALSE(p->has_seed());
  EXPECT_FALSE(p->verbose());

  p = Completed({{"reps", "3"}, {"sizes", "5"}, {"timing", "events"}, {"width", "32"}});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->reps(), 3u);
  EXPECT_THAT(p->sizes(), ElementsAre(5));
  EXPECT_EQ(p->timing(), v1::TIMING_MODE_EVENTS);
  EXPECT_EQ(p->geometry().width(), 32u);
}

TEST(ParamSpecTest, EveryLimitIsCheckedAndTheRefusalNamesFieldValueAndLimit) {
  EXPECT_EQ(Refusal({{"reps", "1"}}), "reps: 1 is outside [2, 10000]");
  EXPECT_EQ(Refusal({{"reps", "10001"}}), "reps: 10001 is outside [2, 10000]");
  EXPECT_EQ(Refusal({{"sizes", "4,0"}}), "sizes: 0 is outside [1, inf)");
  EXPECT_EQ(Refusal({{"sizes", "1,2,3,4"}}), "sizes: 4 items; at most 3");
  EXPECT_EQ(Refusal({{"max_seconds", "0"}}), "max_seconds: 0 is outside (0, 60]");
  EXPECT_EQ(Refusal({{"max_seconds", "nan"}}), "max_seconds: nan is outside (0, 60]");
  EXPECT_EQ(Refusal({{"width", "40"}}), "width: 40 is not a multiple of 16 in [16, 4096]");
  EXPECT_TRUE(Completed({{"max_seconds", "60"}, {"width", "4096"}, {"reps", "2"}}).ok());

  // A binary request may carry an enum number this build does not know.
  SampleParams p;
  p.set_timing(static_cast<v1::TimingMode>(9));
  const absl::Status status = CompleteParams(p);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "timing: unknown value 9");
}

TEST(ParamSpecTest, ADefaultThatDoesNotParseIsTheProbesBug) {
  test::BadDefault p;
  const absl::Status status = CompleteParams(p);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("the declared default \"many\" does not parse"));
}

}  // namespace
}  // namespace gpuprobe
