// A launch's arguments against a kernel's parameter layout: counts and sizes checked, naming the
// argument; scalars packed little-endian in their dtype's size.
#include "server/probes/kernel/kernel_arguments.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

v1::KernelLaunch ScaleLaunch() {
  v1::KernelLaunch l;
  l.set_kernel("scale");
  l.add_args()->set_buffer("y");
  v1::KernelArgument* x = l.add_args();
  x->set_buffer("x");
  x->set_offset_bytes(64);
  v1::KernelScalar* factor = l.add_args()->mutable_scalar();
  factor->set_dtype("f32");
  factor->set_float_value(2.0);
  v1::KernelScalar* n = l.add_args()->mutable_scalar();
  n->set_dtype("i16");
  n->set_int_value(-2);
  return l;
}

// scale(float* out, const float* in, float factor, short n) as the driver lays it out.
const std::vector<ParamSlot> kLayout = {{0, 8}, {8, 8}, {16, 4}, {20, 2}};

TEST(KernelArgumentsTest, ArgumentsMatchingTheLayoutArePacked) {
  absl::StatusOr<std::vector<PackedArgument>> packed =
      PackArguments("arms[0].launches[0]", ScaleLaunch(), kLayout);
  ASSERT_TRUE(packed.ok()) << packed.status();
  ASSERT_EQ(packed->size(), 4u);
  EXPECT_EQ((*packed)[0].buffer, "y");
  EXPECT_EQ((*packed)[1].buffer, "x");
  EXPECT_EQ((*packed)[1].offset_bytes, 64u);
  EXPECT_EQ((*packed)[2].size, 4u);
  // 2.0f is 0x40000000.
  EXPECT_THAT(std::vector<int>((*packed)[2].bytes.begin(), (*packed)[2].bytes.begin() + 4),
              ElementsAre(0, 0, 0, 0x40));
  // -2 as i16 is 0xfffe.
  EXPECT_THAT(std::vector<int>((*packed)[3].bytes.begin(), (*packed)[3].bytes.begin() + 2),
              ElementsAre(0xfe, 0xff));
}

TEST(KernelArgumentsTest, AWrongCountOrSizeIsRefusedNamingTheArgument) {
  std::vector<ParamSlot> three(kLayout.begin(), kLayout.begin() + 3);
  absl::StatusOr<std::vector<PackedArgument>> fewer =
      PackArguments("arms[0].launches[0]", ScaleLaunch(), three);
  EXPECT_EQ(fewer.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(fewer.status().message(),
              HasSubstr("arms[0].launches[0].args: 4 arguments, but kernel scale takes 3 "
                        "parameters"));
  std::vector<ParamSlot> wide = kLayout;
  wide[3].size = 4;  // an int where the launch passes an i16
  absl::StatusOr<std::vector<PackedArgument>> size =
      PackArguments("arms[0].launches[0]", ScaleLaunch(), wide);
  EXPECT_THAT(size.status().message(),
              HasSubstr("args[3]: a i16 is 2 bytes, but parameter 3 of kernel scale is 4 bytes"));
  std::vector<ParamSlot> narrow = kLayout;
  narrow[1].size = 4;  // a pointer passed where the kernel takes an int
  EXPECT_THAT(PackArguments("l", ScaleLaunch(), narrow).status().message(),
              HasSubstr("args[1]: buffer x's address is 8 bytes"));
}

}  // namespace
}  // namespace gpuprobe
