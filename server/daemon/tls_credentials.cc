#include "server/daemon/tls_credentials.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fstream>
#include <memory>
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

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

std::unique_ptr<BIO, BioFree> Memory(const std::string& pem) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

// That the certificate and the key parse, and that the key is the certificate's: a pair that
// does not match otherwise surfaces as "cannot listen".
absl::Status CheckPair(const std::string& cert, const std::string& cert_pem, const std::string& key,
                       const std::string& key_pem) {
  std::unique_ptr<X509, X509Free> certificate(
      PEM_read_bio_X509(Memory(cert_pem).get(), nullptr, nullptr, nullptr));
  if (certificate == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("tls-cert: ", cert,
                                                   " holds no certificate "
                                                   "that parses"));
  }
  std::unique_ptr<EVP_PKEY, KeyFree> private_key(
      PEM_read_bio_PrivateKey(Memory(key_pem).get(), nullptr, nullptr, nullptr));
  if (private_key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "tls-key: ", key, " holds no private key that parses (an encrypted key is not taken)"));
  }
  if (X509_check_private_key(certificate.get(), private_key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat("tls-key: ", key,
                                                   " is not the private key of "
                                                   "the certificate in --tls-cert ",
                                                   cert));
  }
  return absl::OkStatus();
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
  RETURN_IF_ERROR(CheckPair(cert, pair.cert_chain, key, pair.private_key));
  ssl.pem_key_cert_pairs.push_back(std::move(pair));
  return grpc::SslServerCredentials(ssl);
}

}  // namespace gpuprobe
