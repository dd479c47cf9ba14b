#include "server/probes/param_text.h"

#include "gmock/gmock.h"
#include "gpuprobe/v1/probe.pb.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

using ::testing::HasSubstr;

google::protobuf::Map<std::string, std::string> Values(
    std::initializer_list<std::pair<const std::string, std::string>> values) {
  return google::protobuf::Map<std::string, std::string>(values.begin(), values.end());
}

TEST(ParamTextTest, ScalarsNestedFieldsEnumsAndListsAreSetByName) {
  v1::SweepRequest sweep;
  ASSERT_TRUE(SetParamsFromText(Values({{"hidden", "512"},
                                        {"t_values", "1, 3,6"},
                                        {"timing", "GRAPH"},
                                        {"variants", "per-slot,floor,floor-distinct"},
                                        {"seed", "18446744073709551615"},
                                        {"require_clean", "true"}}),
                                sweep)
                  .ok());
  EXPECT_EQ(sweep.geometry().hidden(), 512u);
  EXPECT_FALSE(sweep.geometry().has_experts());
  EXPECT_THAT(sweep.t_values(), ::testing::ElementsAre(1u, 3u, 6u));
  EXPECT_EQ(sweep.timing(), v1::TIMING_MODE_GRAPH);
  EXPECT_THAT(sweep.variants(),
              ::testing::ElementsAre(v1::KERNEL_VARIANT_PER_SLOT, v1::KERNEL_VARIANT_FLOOR,
                                     v1::KERNEL_VARIANT_FLOOR_DISTINCT));
  EXPECT_EQ(sweep.seed(), 18446744073709551615u);
  EXPECT_TRUE(sweep.require_clean());
}

TEST(ParamTextTest, BadValuesAndUnknownNamesAreRefusedNamingTheParameter) {
  v1::SweepRequest sweep;
  absl::Status s = SetParamsFromText(Values({{"reps", "-3"}}), sweep);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("param reps: \"-3\" is not a non-negative integer"));
  s = SetParamsFromText(Values({{"timing", "slow"}}), sweep);
  EXPECT_THAT(s.message(), HasSubstr("param timing: \"slow\" is not one of events|graph"));
  s = SetParamsFromText(Values({{"t_values", "1,x"}}), sweep);
  EXPECT_THAT(s.message(), HasSubstr("param t_values: \"x\" is not a non-negative integer"));
  s = SetParamsFromText(Values({{"hiden", "512"}}), sweep);
  EXPECT_THAT(s.message(), HasSubstr("param hiden: not a parameter of this probe"));
  EXPECT_THAT(s.message(), HasSubstr("hidden"));
  // Labels are a map: not a parameter.
  s = SetParamsFromText(Values({{"labels", "a=b"}}), sweep);
  EXPECT_THAT(s.message(), HasSubstr("param labels: not a parameter"));
}

TEST(ParamTextTest, UnpackParamsTakesTheProbesMessageOrTextNeverBothOrAnotherType) {
  v1::ProbeRequest request;
  request.set_probe("moe-union");
  v1::SweepRequest given;
  given.set_reps(7);
  request.mutable_params()->PackFrom(given);
  v1::SweepRequest sweep;
  ASSERT_TRUE(UnpackParams(request, sweep).ok());
  EXPECT_EQ(sweep.reps(), 7u);

  (*request.mutable_param_values())["reps"] = "9";
  EXPECT_THAT(UnpackParams(request, sweep).message(), HasSubstr("not both"));

  request.clear_param_values();
  request.mutable_params()->PackFrom(v1::CheckRequest());
  const absl::Status wrong = UnpackParams(request, sweep);
  EXPECT_EQ(wrong.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wrong.message(), HasSubstr("takes a gpuprobe.v1.SweepRequest, not "
                                         "\"gpuprobe.v1.CheckRequest\""));
}

TEST(ParamTextTest, EnumValuesReadWithoutTheirPrefixInLowerCase) {
  EXPECT_EQ(
      EnumValueText(*v1::KernelVariant_descriptor()->FindValueByName("KERNEL_VARIANT_PER_SLOT")),
      "per-slot");
  EXPECT_EQ(EnumValueText(*v1::TimingMode_descriptor()->FindValueByName("TIMING_MODE_GRAPH")),
            "graph");
}

}  // namespace
}  // namespace gpuprobe
