#include "server/store/store_url.h"

#include <libpq-fe.h>

#include <memory>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/store/postgres_job_store.h"
#include "server/store/sqlite_job_store.h"

namespace gpuprobe {
namespace {

constexpr char kForms[] = "sqlite:///absolute/path/jobs.db or postgresql://user@host:port/database";

bool IsPostgresUrl(const std::string& url) {
  return absl::StartsWith(url, "postgresql://") || absl::StartsWith(url, "postgres://");
}

// libpq's own reading of a connection URL (PQconninfoParse): every option it sets, or libpq's
// reason why it cannot read the URL.
struct ConnectionOptions {
  std::vector<std::pair<std::string, std::string>> set;  // keyword, value; in libpq's order
  std::string error;
};

ConnectionOptions ParseConnectionUrl(const std::string& url) {
  ConnectionOptions out;
  char* error = nullptr;
  std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> options(
      PQconninfoParse(url.c_str(), &error), &PQconninfoFree);
  if (options == nullptr) {
    // libpq quotes the URL, or part of it, after its reason: keep the reason alone, so that no
    // password reaches a log.
    out.error = error != nullptr ? error : "out of memory";
    out.error = out.error.substr(0, out.error.rfind(": \""));
    while (!out.error.empty() &&
           (out.error.back() == '\n' || out.error.back() == ' ' || out.error.back() == ':')) {
      out.error.pop_back();
    }
    PQfreemem(error);
    return out;
  }
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    if (o->val != nullptr && *o->val != '\0') out.set.emplace_back(o->keyword, o->val);
  }
  return out;
}

}  // namespace

std::string MaskedUrl(const std::string& url) {
  if (!IsPostgresUrl(url)) return url;  // a SQLite path holds no secret
  const ConnectionOptions parsed = ParseConnectionUrl(url);
  if (!parsed.error.empty())
    return "postgresql://(not shown: libpq cannot read it, and it may hold a password)";
  // Rebuilt from what libpq read: user, a masked password, host, port and database in the URL's
  // places (a socket directory as ?host=), every other option as a query parameter.
  std::string user, password, host, port, dbname;
  std::vector<std::string> query;
  for (const auto& [keyword, value] : parsed.set) {
    if (keyword == "user") {
      user = value;
    } else if (keyword == "password") {
      password = ":***";
    } else if (keyword == "host" && value.find('/') == std::string::npos) {
      host = value;
    } else if (keyword == "port") {
      port = ":" + value;
    } else if (keyword == "dbname") {
      dbname = "/" + value;
    } else {
      query.push_back(absl::StrCat(keyword, "=", value));
    }
  }
  const std::string who = user.empty() && password.empty() ? "" : absl::StrCat(user, password, "@");
  return absl::StrCat("postgresql://", who, host, port, dbname, query.empty() ? "" : "?",
                      absl::StrJoin(query, "&"));
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
  if (IsPostgresUrl(flag)) {
    if (const ConnectionOptions parsed = ParseConnectionUrl(flag); !parsed.error.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--store: ", MaskedUrl(flag), " is not a PostgreSQL URL libpq reads: ", parsed.error));
    }
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
