#include "server/probes/moe_union/routing.h"

#include <set>

#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

struct Case {
  int experts, selected, t, union_size;
};

class ExactUnionTest : public testing::TestWithParam<Case> {};

TEST_P(ExactUnionTest, NamesExactlyUnionDistinctExpertsAndDistinctWithinEachToken) {
  const Case c = GetParam();
  absl::StatusOr<std::vector<int32_t>> sel =
      ExactUnionRouting(c.experts, c.selected, c.t, c.union_size, 42);
  ASSERT_TRUE(sel.ok()) << sel.status();
  ASSERT_EQ(static_cast<int>(sel->size()), c.t * c.selected);
  EXPECT_EQ(static_cast<int>(std::set<int32_t>(sel->begin(), sel->end()).size()), c.union_size);
  for (int token = 0; token < c.t; ++token) {
    std::set<int32_t> experts;
    for (int k = 0; k < c.selected; ++k) {
      const int32_t e = (*sel)[token * c.selected + k];
      EXPECT_GE(e, 0);
      EXPECT_LT(e, c.experts);
      experts.insert(e);
    }
    EXPECT_EQ(static_cast<int>(experts.size()), c.selected) << "token " << token;
  }
}

INSTANTIATE_TEST_SUITE_P(Geometries, ExactUnionTest,
                         testing::Values(Case{512, 10, 6, 60}, Case{512, 10, 6, 10},
                                         Case{512, 10, 6, 37}, Case{64, 4, 3, 4},
                                         Case{64, 4, 3, 12}, Case{12, 4, 8, 12}, Case{8, 8, 1, 8}));

TEST(ExactUnionRoutingTest, SameSeedSameRoutingOtherSeedOther) {
  EXPECT_EQ(*ExactUnionRouting(512, 10, 6, 30, 7), *ExactUnionRouting(512, 10, 6, 30, 7));
  EXPECT_NE(*ExactUnionRouting(512, 10, 6, 30, 7), *ExactUnionRouting(512, 10, 6, 30, 8));
}

TEST(ExactUnionRoutingTest, RefusesImpossibleUnions) {
  EXPECT_FALSE(ExactUnionRouting(512, 10, 6, 9, 1).ok());   // union < selected: repeats
  EXPECT_FALSE(ExactUnionRouting(512, 10, 6, 61, 1).ok());  // union > slots
  EXPECT_FALSE(ExactUnionRouting(32, 10, 6, 40, 1).ok());   // union > experts
  EXPECT_FALSE(ExactUnionRouting(512, 0, 6, 10, 1).ok());
  const absl::Status s = ExactUnionRouting(512, 10, 6, 61, 1).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("union"), std::string_view::npos);
}

}  // namespace
}  // namespace gpuprobe
