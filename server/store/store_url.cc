#include "server/store/store_url.h"

#include <regex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "server/store/postgres_job_store.h"
#include "server/store/sqlite_job_store.h"

namespace gpuprobe {
namespace {

constexpr char kForms[] = "sqlite:///absolute/path/jobs.db or postgresql://user@host:port/database";

}  // namespace

std::string MaskedUrl(const std::string& url) {
  static const std::regex password("(://[^:/@?]*:)[^@/?]*@");
  std::string masked = std::regex_replace(url, password, "$1***@");
  static const std::regex param("(password=)[^&\\s]*");
  return std::regex_replace(masked, param, "$1***");
}

absl::StatusOr<StoreUrl> ParseStoreUrl(const std::string& flag, const std::string& data_dir) {
  if (flag.empty()) return StoreUrl{StoreUrl::Kind::kSqlite, data_dir + "/gpuprobe.sqlite"};
  if (absl::StartsWith(flag, "sqlite://")) {
    const std::string path = flag.substr(std::string("sqlite://").size());
    if (path.size() < 2 || path[0] != '/' || path.back() == '/') {
      return absl::InvalidArgumentError(
          absl::StrCat("--store: \"", flag, "\" names no absolute file path (", kForms, ")"));
    }
    return StoreUrl{StoreUrl::Kind::kSqlite, path};
  }
  if (absl::StartsWith(flag, "postgresql://") || absl::StartsWith(flag, "postgres://")) {
    return StoreUrl{StoreUrl::Kind::kPostgres, flag};
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--store: \"", MaskedUrl(flag), "\" is not a store URL (", kForms, ")"));
}

absl::StatusOr<std::unique_ptr<JobStore>> OpenStore(const StoreUrl& url, int64_t max_bytes) {
  if (url.kind == StoreUrl::Kind::kSqlite) return SqliteJobStore::Open(url.target, max_bytes);
  absl::StatusOr<std::unique_ptr<JobStore>> store = PostgresJobStore::Open(url.target);
  if (!store.ok()) {
    return absl::Status(store.status().code(), absl::StrCat("--store ", MaskedUrl(url.target), ": ",
                                                            store.status().message()));
  }
  return store;
}

}  // namespace gpuprobe
