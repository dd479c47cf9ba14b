// Who may call what. Without a tokens file every caller is admin (the daemon listens on
// 127.0.0.1 by default). With one, each call must carry "authorization: Bearer TOKEN" and the
// token's role decides:
//   read    GetServerInfo, GetJob, ListJobs, Watch
//   submit  also Submit, Run, Check, and CancelJob of the caller's own jobs
//   kernel  also UploadModule, and Submit of a probe that runs client GPU code (the kernel
//           probe: ProbeInfo.client_code), which runs with the daemon's
//           user's access to the device
//   admin   also CancelJob of anyone's jobs
// Tokens file: one "TOKEN ROLE NAME" per line; '#' starts a comment. NAME is recorded as the
// submitter of the jobs the token submits.
//
//   ASSIGN_OR_RETURN(AccessControl access, AccessControl::FromFile(path));
//   ASSIGN_OR_RETURN(Caller caller, access.Authorize(context->client_metadata(), peer, kSubmit));
#pragma once

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/support/string_ref.h"

namespace gpuprobe {

enum class Role { kRead = 0, kSubmit = 1, kKernel = 2, kAdmin = 3 };

struct Caller {
  std::string name;  // the token's name, or the peer address without tokens
  Role role = Role::kAdmin;
  // Whose idempotency keys this caller's share: its token's name; everyone's ("") without
  // tokens, where a peer address says nothing lasting about who asks.
  std::string key_scope;
};

class AccessControl {
 public:
  // Everyone is admin.
  AccessControl() = default;
  // INVALID_ARGUMENT names the line of a malformed file.
  static absl::StatusOr<AccessControl> FromFile(const std::string& path);

  bool enabled() const { return !tokens_.empty(); }

  // UNAUTHENTICATED without a known token, PERMISSION_DENIED when its role is below `needed`.
  absl::StatusOr<Caller> Authorize(
      const std::multimap<grpc::string_ref, grpc::string_ref>& metadata, const std::string& peer,
      Role needed, const std::string& what) const;

 private:
  std::map<std::string, Caller> tokens_;
};

}  // namespace gpuprobe
