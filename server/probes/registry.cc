#include "server/probes/registry.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/abbreviated.h"
#include "common/status_macros.h"
#include "server/probes/command/command_probe.h"
#include "server/probes/kernel/kernel_probe.h"
#include "server/probes/launch_latency/launch_latency_probe.h"
#include "server/probes/moe_union/moe_union_probe.h"
#include "server/probes/read_bandwidth/read_bandwidth_probe.h"

namespace gpuprobe {

absl::StatusOr<ProbeRegistry> ProbeRegistry::Builtin(const ProbeOptions& options) {
  ProbeRegistry registry;
  RETURN_IF_ERROR(registry.Add(std::make_unique<MoeUnionProbe>(SweepLimits{})));
  RETURN_IF_ERROR(registry.Add(std::make_unique<ReadBandwidthProbe>()));
  RETURN_IF_ERROR(registry.Add(std::make_unique<CommandProbe>(options.commands)));
  RETURN_IF_ERROR(registry.Add(std::make_unique<LaunchLatencyProbe>()));
  RETURN_IF_ERROR(registry.Add(std::make_unique<KernelProbe>()));
  return registry;
}

absl::Status ProbeRegistry::Add(std::unique_ptr<Probe> probe) {
  if (Find(probe->Name()) != nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("probe: \"", probe->Name(), "\" is registered twice"));
  }
  probes_.push_back(std::move(probe));
  return absl::OkStatus();
}

const Probe* ProbeRegistry::Find(absl::string_view name) const {
  for (const auto& p : probes_) {
    if (p->Name() == name) return p.get();
  }
  return nullptr;
}

absl::StatusOr<const Probe*> ProbeRegistry::Get(absl::string_view name) const {
  if (const Probe* probe = Find(name)) return probe;
  std::vector<std::string> names;
  for (const Probe* p : All()) names.push_back(p->Name());
  return absl::InvalidArgumentError(absl::StrCat("probe: no probe \"", Abbreviated(name),
                                                 "\" (this daemon serves ",
                                                 absl::StrJoin(names, ", "), ")"));
}

std::vector<const Probe*> ProbeRegistry::All() const {
  std::vector<const Probe*> all;
  for (const auto& p : probes_) all.push_back(p.get());
  std::sort(all.begin(), all.end(),
            [](const Probe* a, const Probe* b) { return a->Name() < b->Name(); });
  return all;
}

absl::StatusOr<v1::ProbeRequest> ProbeRequestOf(const v1::SubmitRequest& request) {
  if (request.has_probe()) return request.probe();
  v1::ProbeRequest probe;
  probe.set_probe(kMoeUnionProbe);
  if (request.has_sweep()) {
    v1::SweepRequest sweep = request.sweep();
    probe.mutable_labels()->swap(*sweep.mutable_labels());
    probe.mutable_params()->PackFrom(sweep);
  } else if (request.has_check()) {
    v1::CheckRequest check = request.check();
    probe.mutable_labels()->swap(*check.mutable_labels());
    probe.mutable_params()->PackFrom(check);
    probe.set_check(true);
  } else {
    return absl::InvalidArgumentError("work: a job needs a probe request, a sweep or a check");
  }
  return probe;
}

}  // namespace gpuprobe
