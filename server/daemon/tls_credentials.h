// The gRPC listener's credentials from the daemon's options: TLS with --tls-cert and --tls-key
// (PEM files, checked to hold what they should and to match, so that swapped or mismatched files
// are named rather than surfacing as "cannot listen"), plaintext with neither.
//
//   ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
//                    ServerCredentialsOf(options));
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "grpcpp/security/server_credentials.h"
#include "server/options/daemon_options.h"

namespace gpuprobe {

// INVALID_ARGUMENT for one of the two flags alone, a file that holds the wrong PEM block or none
// that parses, or a key that is not the certificate's;
// NOT_FOUND for a file that cannot be read.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsOf(
    const DaemonOptions& options);

}  // namespace gpuprobe
