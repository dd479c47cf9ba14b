// The one place that lists the daemon's probes. A probe lives in its own folder under
// server/probes/ (whose CMakeLists.txt the build finds) and is added here by two lines: its
// include and its Add in ProbeRegistry::Builtin.
//
//   ASSIGN_OR_RETURN(ProbeRegistry registry, ProbeRegistry::Builtin({.commands = commands}));
//   const Probe* probe = registry.Find("moe-union");
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuprobe/v1/probe.pb.h"
#include "server/probes/command/command_probe.pb.h"
#include "server/probes/probe.h"

namespace gpuprobe {

// What the daemon's options say about its probes.
struct ProbeOptions {
  std::vector<v1::CommandRegistration> commands;  // the command probe's (its registrations)
};

class ProbeRegistry {
 public:
  // Every probe this build serves; INVALID_ARGUMENT when two of them share a name.
  static absl::StatusOr<ProbeRegistry> Builtin(const ProbeOptions& options);

  // INVALID_ARGUMENT when a probe of that name is already there.
  absl::Status Add(std::unique_ptr<Probe> probe);
  // Null for an unknown name.
  const Probe* Find(absl::string_view name) const;
  // The probe a request names; INVALID_ARGUMENT naming `probe` and the served names otherwise.
  absl::StatusOr<const Probe*> Get(absl::string_view name) const;
  // Sorted by name.
  std::vector<const Probe*> All() const;

 private:
  std::vector<std::unique_ptr<Probe>> probes_;
};

// A request's work as a probe request: a SweepRequest or CheckRequest becomes the moe-union
// probe's (their labels the request's). INVALID_ARGUMENT when the request has no work.
absl::StatusOr<v1::ProbeRequest> ProbeRequestOf(const v1::SubmitRequest& request);

// The name of the probe that serves moe-union's own SweepRequest and CheckRequest.
inline constexpr char kMoeUnionProbe[] = "moe-union";

}  // namespace gpuprobe
