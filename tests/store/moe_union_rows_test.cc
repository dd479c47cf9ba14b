#include "server/store/moe_union_rows.h"

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

// A row with every field set, as the last gpuprobed that reported Rows stored them.
v1::Row FullRow() {
  v1::Row r;
  r.set_arm_index(3);
  r.mutable_arm()->set_variant(v1::KERNEL_VARIANT_FLOOR_DISTINCT);
  r.mutable_arm()->set_t(6);
  r.mutable_arm()->set_slots(60);
  r.mutable_arm()->set_union_size(20);
  r.set_gu_us(31.5);
  r.set_down_us(15.25);
  r.set_section_us(46.75);
  r.set_gu_spread(0.04);
  r.set_dn_spread(0.03);
  r.set_gu_bw_vs_union_tbps(1.2);
  r.set_gu_bw_vs_slots_tbps(3.6);
  r.set_vs_reference(1.7);
  r.set_gu_min_us(30.0);
  r.set_gu_max_us(33.0);
  r.set_down_min_us(15.0);
  r.set_down_max_us(16.0);
  r.set_kept_reps(3);
  r.set_timing(v1::TIMING_MODE_GRAPH);
  r.set_cache(v1::CACHE_MODE_COLD);
  r.set_device("NVIDIA H100 80GB HBM3 (cuda:0)");
  r.set_gu_read_bytes(36864000);
  r.set_down_read_bytes(18432000);
  r.set_gu_pct_of_read_bw(37.5);
  r.set_down_pct_of_read_bw(36.0);
  r.set_attempt(2);
  for (double v : {30.0, 31.5, 33.0}) r.add_gu_samples_us(v);
  for (double v : {15.0, 15.25, 16.0}) r.add_down_samples_us(v);
  r.set_gu_us_low(30.0);
  r.set_gu_us_high(33.0);
  r.set_down_us_low(15.0);
  r.set_down_us_high(16.0);
  r.set_vs_reference_low(1.6);
  r.set_vs_reference_high(1.8);
  r.set_verdict(v1::VERDICT_TOO_FEW_REPS);
  r.set_disturbance("rep 2: sw_power_cap");
  r.set_sampling_end(v1::SAMPLING_END_PRECISION);
  r.set_job_id("job-12");
  for (double v : {46.0, 47.0, 46.5}) r.add_block_section_us(v);
  return r;
}

TEST(MoeUnionRowsTest, AStoredRowReadsAsItsResultAndShowsToV1ClientsAsItWas) {
  const v1::Row row = FullRow();
  const v1::Result result = ResultOfRow(row);
  ASSERT_EQ(result.axes_size(), 4);
  EXPECT_EQ(result.axes(0).text_value(), "floor-distinct");
  EXPECT_EQ(result.metrics(0).name(), "gu_us");
  EXPECT_EQ(result.metrics(0).median(), 31.5);
  EXPECT_EQ(result.metrics(1).samples_size(), 3);
  EXPECT_EQ(result.verdict(), v1::VERDICT_TOO_FEW_REPS);
  EXPECT_EQ(result.block_section_us_size(), 3);

  v1::ResolvedSweep sweep;
  sweep.set_timing(v1::TIMING_MODE_GRAPH);
  sweep.set_cache(v1::CACHE_MODE_COLD);
  std::string diff;
  google::protobuf::util::MessageDifferencer differ;
  differ.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differ.Compare(row, RowOfResult(result, sweep))) << diff;
}

TEST(MoeUnionRowsTest, AbsentValuesStayAbsent) {
  v1::Row row = FullRow();
  row.clear_vs_reference();
  row.clear_vs_reference_low();
  row.clear_vs_reference_high();
  row.set_verdict(v1::VERDICT_UNSPECIFIED);
  row.set_gu_pct_of_read_bw(0.0);  // the cpu: no calibrated read
  row.set_down_pct_of_read_bw(0.0);
  const v1::Result result = ResultOfRow(row);
  for (const v1::DerivedValue& d : result.derived()) {
    EXPECT_NE(d.name(), "vs_reference");
    EXPECT_NE(d.name(), "gu_pct_of_read");
  }
  v1::ResolvedSweep sweep;
  sweep.set_timing(v1::TIMING_MODE_GRAPH);
  sweep.set_cache(v1::CACHE_MODE_COLD);
  const v1::Row back = RowOfResult(result, sweep);
  EXPECT_FALSE(back.has_vs_reference());
  EXPECT_FALSE(back.has_vs_reference_low());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(row, back));
}

TEST(MoeUnionRowsTest, OnlyAMoeUnionArmsAxesNameAnArm) {
  const v1::Result result = ResultOfRow(FullRow());
  const std::optional<v1::Arm> arm = ArmOfAxes(result.axes());
  ASSERT_TRUE(arm.has_value());
  EXPECT_EQ(arm->variant(), v1::KERNEL_VARIANT_FLOOR_DISTINCT);
  EXPECT_EQ(arm->union_size(), 20u);
  v1::Result other;
  other.add_axes()->set_name("size_bytes");
  EXPECT_FALSE(ArmOfAxes(other.axes()).has_value());
}

TEST(MoeUnionRowsTest, OtherEventsPassUnchanged) {
  v1::JobEvent progress;
  progress.mutable_progress()->set_reps_done(3);
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(UpgradedEvent(progress), progress));
  v1::JobEvent row;
  *row.mutable_row() = FullRow();
  row.set_attempt(2);
  const v1::JobEvent upgraded = UpgradedEvent(row);
  ASSERT_TRUE(upgraded.has_result());
  EXPECT_EQ(upgraded.attempt(), 2u);
}

}  // namespace
}  // namespace gpuprobe
