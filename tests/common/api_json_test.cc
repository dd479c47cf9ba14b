// ApiJson spells enums and 64-bit integers as csv and the CLI do, and reads back to the same
// message; ApiJsonToMessage also reads protobuf's own mapping.
#include "common/api_json.h"

#include <cstdint>
#include <limits>

#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gpuprobe/v1/probe.pb.h"
#include "gtest/gtest.h"
#include "server/probes/command/command_probe.pb.h"

namespace gpuprobe {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A job with an enum in a nested message, in a repeated message and in an Any; a uint64 past
// 2^53 beside it; a map; a Timestamp.
v1::Job SampleJob() {
  v1::Job job;
  job.set_id("job-7");
  job.set_state(v1::JOB_STATE_SUCCEEDED);
  job.mutable_created_at()->set_seconds(1764800000);
  v1::SweepRequest* sweep = job.mutable_request()->mutable_sweep();
  sweep->set_seed(std::numeric_limits<uint64_t>::max() - 6);
  sweep->add_variants(v1::KERNEL_VARIANT_FLOOR_DISTINCT);
  sweep->set_timing(v1::TIMING_MODE_GRAPH);
  (*sweep->mutable_labels())["branch"] = "main";
  v1::Row row;
  row.set_sampling_end(v1::SAMPLING_END_MAX_SECONDS);
  row.set_gu_read_bytes(9007199254740993u);  // 2^53 + 1: not a double
  job.mutable_resolved()->PackFrom(row);
  return job;
}

TEST(ApiJsonTest, EnumsHaveTheirShortNamesAndSixtyFourBitIntegersAreNumbers) {
  const std::string json = ApiJson(SampleJob());
  EXPECT_THAT(json, HasSubstr(R"("state":"succeeded")"));
  EXPECT_THAT(json, HasSubstr(R"("variants":["floor-distinct"])"));
  EXPECT_THAT(json, HasSubstr(R"("timing":"graph")"));
  EXPECT_THAT(json, HasSubstr(R"("seed":18446744073709551609)"));
  EXPECT_THAT(json, HasSubstr(R"("labels":{"branch":"main"})"));
  EXPECT_THAT(json, HasSubstr(R"("created_at":"2025-12-03T22:13:20Z")"));
  // Inside the Any, by the packed message's own fields.
  EXPECT_THAT(json, HasSubstr(R"("@type":"type.googleapis.com/gpuprobe.v1.Row")"));
  EXPECT_THAT(json, HasSubstr(R"("sampling_end":"max-seconds")"));
  EXPECT_THAT(json, HasSubstr(R"("gu_read_bytes":9007199254740993)"));
  // UNSPECIFIED is absent: null, never its protobuf name.
  EXPECT_THAT(json, HasSubstr(R"("order":null)"));
  EXPECT_THAT(json, Not(HasSubstr("UNSPECIFIED")));
  EXPECT_THAT(json, Not(HasSubstr("JOB_STATE")));
  EXPECT_EQ(json.find('\n'), std::string::npos);
}

TEST(ApiJsonTest, ReadsBackToTheSameMessage) {
  const v1::Job job = SampleJob();
  v1::Job read;
  ASSERT_TRUE(ApiJsonToMessage(ApiJson(job), &read).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(job, read)) << read.DebugString();
}

// A job whose parameters are of a type this build does not know (a newer daemon's probe) still
// prints whole: that Any as its type and base64 payload, everything else as always.
TEST(ApiJsonTest, AnAnyOfAnUnknownTypeStillGivesWholeJson) {
  v1::Job job = SampleJob();
  job.mutable_resolved()->set_type_url("type.googleapis.com/gpuprobe.v1.NoSuchParams");
  job.mutable_resolved()->set_value("\x08\x01");
  v1::ProbeRequest* probe = job.mutable_request()->mutable_probe();
  probe->set_probe("future");
  probe->mutable_params()->set_type_url("type.googleapis.com/gpuprobe.v1.NoSuchParams");
  const std::string json = ApiJson(job);
  EXPECT_THAT(
      json,
      HasSubstr(
          R"("resolved":{"@type":"type.googleapis.com/gpuprobe.v1.NoSuchParams","value":"CAE="})"));
  EXPECT_THAT(
      json,
      HasSubstr(R"("params":{"@type":"type.googleapis.com/gpuprobe.v1.NoSuchParams","value":""})"));
  EXPECT_THAT(json, HasSubstr(R"("state":"succeeded")"));
  EXPECT_THAT(json, HasSubstr(R"("probe":"future")"));
}

TEST(ApiJsonTest, ReadsProtobufsOwnMappingToo) {
  const v1::Job job = SampleJob();
  std::string protobuf_json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(job, &protobuf_json).ok());
  ASSERT_THAT(protobuf_json, HasSubstr("JOB_STATE_SUCCEEDED"));
  v1::Job read;
  ASSERT_TRUE(ApiJsonToMessage(protobuf_json, &read).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(job, read));
}

TEST(ApiJsonTest, AValueWithoutTheEnumsPrefixKeepsItsWholeName) {
  v1::CommandParam param;
  param.set_type(v1::CommandParam::INTEGER);
  EXPECT_THAT(ApiJson(param), HasSubstr(R"("type":"integer")"));
  v1::CommandParam read;
  ASSERT_TRUE(ApiJsonToMessage(R"({"name":"t","type":"integer","min":1,"max":"8"})", &read).ok());
  EXPECT_EQ(read.type(), v1::CommandParam::INTEGER);
  EXPECT_EQ(read.max(), 8);
}

TEST(ApiJsonTest, BadInputIsAnErrorNamingWhatIsWrong) {
  v1::Job read;
  EXPECT_EQ(ApiJsonToMessage("{", &read).message(), "not valid JSON");
  EXPECT_THAT(ApiJsonToMessage(R"({"state":"finished"})", &read).message(), HasSubstr("state"));
  EXPECT_THAT(ApiJsonToMessage(R"({"sate":"succeeded"})", &read).message(), HasSubstr("sate"));
}

}  // namespace
}  // namespace gpuprobe
