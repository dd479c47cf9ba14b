#include "common/param_text.h"

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
  // An empty item is no value (issue 55, item 14); an empty list is.
  for (const std::string list : {"1,,2", "1,2,", ",1", " , "}) {
    EXPECT_THAT(SetParamsFromText(Values({{"t_values", list}}), sweep).message(),
                HasSubstr("param t_values: \"" + list + "\" has an empty item"))
        << list;
  }
  ASSERT_TRUE(SetParamsFromText(Values({{"t_values", " "}}), sweep).ok());
  EXPECT_TRUE(sweep.t_values().empty());
}

// A number declared a fraction takes a percentage; a list of an enum takes "all"; elsewhere
// neither is a value.
TEST(ParamTextTest, FractionsTakePercentagesAndEnumListsTakeAll) {
  v1::SweepRequest sweep;
  ASSERT_TRUE(
      SetParamsFromText(Values({{"precision", "0.5%"}, {"variants", " ALL "}}), sweep).ok());
  EXPECT_DOUBLE_EQ(sweep.precision(), 0.005);
  EXPECT_THAT(sweep.variants(),
              ::testing::ElementsAre(v1::KERNEL_VARIANT_PER_SLOT, v1::KERNEL_VARIANT_UNION,
                                     v1::KERNEL_VARIANT_FLOOR, v1::KERNEL_VARIANT_FLOOR_DISTINCT));
  EXPECT_THAT(SetParamsFromText(Values({{"max_seconds", "5%"}}), sweep).message(),
              ::testing::HasSubstr("param max_seconds: \"5%\" is not a number"));
  EXPECT_THAT(SetParamsFromText(Values({{"timing", "all"}}), sweep).message(),
              ::testing::HasSubstr("param timing: \"all\" is not one of events|graph"));
}

// What ParamsAsText writes, SetParamsFromText reads back to the same message; unset optional
// fields are empty, in field order with nested fields flattened, maps left out.
TEST(ParamTextTest, ParamsAsTextReadsBackToTheSameMessage) {
  v1::SweepRequest sweep;
  sweep.mutable_geometry()->set_hidden(512);
  sweep.add_t_values(1);
  sweep.add_t_values(6);
  sweep.set_timing(v1::TIMING_MODE_GRAPH);
  sweep.set_cache(v1::CACHE_MODE_COLD);
  sweep.set_order(v1::ARM_ORDER_SHUFFLE);
  sweep.add_variants(v1::KERNEL_VARIANT_PER_SLOT);
  sweep.add_variants(v1::KERNEL_VARIANT_FLOOR_DISTINCT);
  sweep.set_precision(0.0005);
  sweep.set_seed(18446744073709551615u);
  (*sweep.mutable_labels())["branch"] = "main";
  const std::vector<std::pair<std::string, std::string>> text = ParamsAsText(sweep);
  ASSERT_GE(text.size(), 4u);
  EXPECT_EQ(text[0], std::make_pair(std::string("experts"), std::string()));  // unset
  EXPECT_EQ(text[1], std::make_pair(std::string("hidden"), std::string("512")));
  google::protobuf::Map<std::string, std::string> values;
  for (const auto& [name, value] : text) {
    EXPECT_NE(name, "labels");
    if (!value.empty()) values[name] = value;
  }
  EXPECT_EQ(values.at("t_values"), "1,6");
  EXPECT_EQ(values.at("variants"), "per-slot,floor-distinct");
  EXPECT_EQ(std::stod(values.at("precision")), 0.0005);  // the shortest text that reads back
  v1::SweepRequest read;
  ASSERT_TRUE(SetParamsFromText(values, read).ok());
  sweep.clear_labels();
  EXPECT_EQ(read.SerializeAsString(), sweep.SerializeAsString());
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
  // A value is decimal digits only: no '+', space or base prefix (a list's items may have
  // spaces around them); past the field's range named as such.
  for (const std::string text : {" 3", "3 ", "+5", "0x10", "1e3"}) {
    s = SetParamsFromText(Values({{"reps", text}}), sweep);
    EXPECT_THAT(s.message(),
                HasSubstr("param reps: \"" + text + "\" is not a non-negative integer"));
  }
  s = SetParamsFromText(Values({{"experts", "1180591620717411303424"}}), sweep);
  EXPECT_THAT(s.message(),
              HasSubstr("param experts: 1180591620717411303424 is outside [0, 4294967295]"));
  s = SetParamsFromText(Values({{"precision", " 0.5"}}), sweep);
  EXPECT_THAT(s.message(), HasSubstr("param precision: \" 0.5\" is not a number"));
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
  EXPECT_THAT(UnpackParams(request, sweep).message(),
              HasSubstr("set one of params, param_values and params_json"));

  // The message in protobuf's JSON mapping, for clients without the probe's message.
  v1::ProbeRequest json;
  json.set_params_json(R"({"reps": 11, "timing": "TIMING_MODE_GRAPH", "cache": "cold"})");
  ASSERT_TRUE(UnpackParams(json, sweep).ok());
  EXPECT_EQ(sweep.reps(), 11u);
  EXPECT_EQ(sweep.timing(), v1::TIMING_MODE_GRAPH);
  EXPECT_EQ(sweep.cache(), v1::CACHE_MODE_COLD);  // as the CLI spells it
  json.set_params_json(R"({"reps": "many"})");
  EXPECT_THAT(UnpackParams(json, sweep).message(),
              HasSubstr("params_json: not a gpuprobe.v1.SweepRequest"));
  (*json.mutable_param_values())["reps"] = "9";
  EXPECT_THAT(UnpackParams(json, sweep).message(), HasSubstr("set one of"));

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
