#include "server/daemon/tls_credentials.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gpuprobe {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* flag) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, ": cannot read ", path));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsOf(
    const DaemonOptions& options) {
  const std::string &cert = options.tls_cert_file, &key = options.tls_key_file;
  if (cert.empty() && key.empty()) return grpc::InsecureServerCredentials();
  if (cert.empty() || key.empty()) {
    return absl::InvalidArgumentError("tls-cert and tls-key go together");
  }
  grpc::SslServerCredentialsOptions ssl;
  grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
  ASSIGN_OR_RETURN(pair.cert_chain, ReadFile(cert, "tls-cert"));
  ASSIGN_OR_RETURN(pair.private_key, ReadFile(key, "tls-key"));
  if (!absl::StrContains(pair.cert_chain, "-----BEGIN CERTIFICATE-----")) {
    return absl::InvalidArgumentError(
        absl::StrCat("tls-cert: ", cert, " holds no PEM certificate (swapped with --tls-key?)"));
  }
  if (!absl::StrContains(pair.private_key, "PRIVATE KEY-----")) {
    return absl::InvalidArgumentError(
        absl::StrCat("tls-key: ", key, " holds no PEM private key (swapped with --tls-cert?)"));
  }
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  return grpc::SslServerCredentials(ssl);
}

}  // namespace gpuprobe
