#include "server/probes/probe.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"

namespace gpuprobe {

absl::StatusOr<ProbeSpec> Probe::Open(const google::protobuf::Any& resolved, bool check) const {
  // A check takes the probe's params message where it declares no message of its own.
  const std::string& type = check && !Info().check_params_type().empty()
                                ? Info().check_params_type()
                                : Info().params_type();
  const google::protobuf::Descriptor* descriptor =
      google::protobuf::DescriptorPool::generated_pool()->FindMessageTypeByName(type);
  if (descriptor == nullptr) {
    return absl::InternalError(
        absl::StrCat("probe ", Name(), ": its params type ", type, " is not linked in"));
  }
  std::unique_ptr<google::protobuf::Message> spec(
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(descriptor)->New());
  if (!resolved.UnpackTo(spec.get())) {
    return absl::DataLossError(absl::StrCat("resolved: a ", resolved.type_url(), ", not the ",
                                            Name(), " probe's ", type, " (or it does not parse)"));
  }
  return ProbeSpec(std::move(spec));
}

}  // namespace gpuprobe
