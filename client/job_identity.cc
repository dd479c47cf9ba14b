#include "client/job_identity.h"

#include <map>

#include "absl/strings/str_join.h"

namespace gpuprobe {

std::string LabelsText(const google::protobuf::Map<std::string, std::string>& labels) {
  const std::map<std::string, std::string> sorted(labels.begin(), labels.end());
  return absl::StrJoin(sorted, ",", absl::PairFormatter("="));
}

JobIdentity IdentityOf(const v1::Job& job) {
  const v1::SubmitRequest& r = job.request();
  const auto& labels = r.has_check()   ? r.check().labels()
                       : r.has_probe() ? r.probe().labels()
                                       : r.sweep().labels();
  return {.job_id = job.id(),
          .probe = job.probe().empty() ? "moe-union" : job.probe(),
          .labels = LabelsText(labels)};
}

}  // namespace gpuprobe
