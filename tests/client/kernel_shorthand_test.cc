// `gpuprobe kernel`'s flags for one kernel, as the spec JSON they stand for: buffers with their
// fills, the launch's dimensions and arguments in order; what cannot be read named with its flag.
#include "client/kernel_shorthand.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace gpuprobe {
namespace {

using testing::HasSubstr;

ClientFlags Scale() {
  ClientFlags f;
  f.kernel_name = "scale";
  f.kernel_grid = "4096";
  f.kernel_block = "256,1";
  f.kernel_smem = 1024;
  f.kernel_buffers = {"x=f32:1024:normal:0:1", "y=f32:1024", "c=i32:4:constant:7",
                      "u=u8:16:uniform:0:255"};
  f.kernel_args = {"y", "x", "f32:2.5", "i32:-1024"};
  return f;
}

TEST(KernelShorthandTest, FlagsMakeTheSpecOfOneLaunch) {
  absl::StatusOr<std::string> json = ShorthandSpecJson(Scale(), "k");
  ASSERT_TRUE(json.ok()) << json.status();
  const nlohmann::json spec = nlohmann::json::parse(*json);
  EXPECT_EQ(spec["buffers"][0]["normal"]["b"], 1.0);
  EXPECT_EQ(spec["buffers"][1].contains("normal"), false);
  EXPECT_EQ(spec["buffers"][2]["constant"], 7.0);
  EXPECT_EQ(spec["buffers"][3]["uniform"]["b"], 255.0);
  EXPECT_EQ(spec["arms"][0]["name"], "scale");
  const nlohmann::json& launch = spec["arms"][0]["launches"][0];
  EXPECT_EQ(launch["module"], "k");
  EXPECT_EQ(launch["block"], nlohmann::json::array({256, 1}));
  EXPECT_EQ(launch["sharedBytes"], 1024);
  EXPECT_EQ(launch["args"][0]["buffer"], "y");
  EXPECT_EQ(launch["args"][2]["scalar"]["floatValue"], 2.5);
  EXPECT_EQ(launch["args"][3]["scalar"]["intValue"], "-1024");
  // A mangled name is no arm name; the build's module is named by none.
  ClientFlags mangled = Scale();
  mangled.kernel_name = "_Z5scalePfS_fi";
  EXPECT_THAT(*ShorthandSpecJson(mangled, ""), HasSubstr("\"name\":\"_Z5scalePfS_fi\""));
  mangled.kernel_name = "void scale<float>(float*)";
  EXPECT_THAT(*ShorthandSpecJson(mangled, ""), HasSubstr("\"name\":\"kernel\""));
  EXPECT_THAT(*ShorthandSpecJson(mangled, ""), testing::Not(HasSubstr("\"module\"")));
}

TEST(KernelShorthandTest, WhatCannotBeReadIsNamedWithItsFlag) {
  auto refusal = [](void (*change)(ClientFlags&)) {
    ClientFlags f = Scale();
    change(f);
    return std::string(ShorthandSpecJson(f, "k").status().message());
  };
  EXPECT_THAT(refusal([](ClientFlags& f) { f.kernel_grid = "0"; }),
              HasSubstr("--grid: \"0\" is not of the form X[,Y,Z]"));
  EXPECT_THAT(refusal([](ClientFlags& f) { f.kernel_block = "1,2,3,4"; }), HasSubstr("--block"));
  EXPECT_THAT(refusal([](ClientFlags& f) { f.kernel_buffers = {"x=f32"}; }),
              HasSubstr("--buffer: \"x=f32\""));
  EXPECT_THAT(refusal([](ClientFlags& f) { f.kernel_buffers = {"x=f32:8:normal:0"}; }),
              HasSubstr("--buffer"));
  EXPECT_THAT(refusal([](ClientFlags& f) { f.kernel_buffers = {"x=f32:8:gauss:0:1"}; }),
              HasSubstr("--buffer"));
  EXPECT_THAT(refusal([](ClientFlags& f) { f.kernel_args = {"i32:many"}; }),
              HasSubstr("--arg: \"i32:many\" is not of the form NAME or DTYPE:VALUE"));
  EXPECT_THAT(refusal([](ClientFlags& f) { f.kernel_block.clear(); }),
              HasSubstr("needs --grid and --block"));
}

}  // namespace
}  // namespace gpuprobe
