// gpuprobed's --store: which job store a daemon opens.
//   sqlite:///abs/path/jobs.db       the embedded store, this daemon alone
//   postgresql://user@host:port/db   a PostgreSQL database a fleet shares (postgres:// too,
//                                    and libpq's query parameters, e.g. ?host=/run/postgresql)
// Without --store: sqlite at DATA_DIR/gpuprobe.sqlite, as before the fleet.
//
//   ASSIGN_OR_RETURN(StoreUrl url, ParseStoreUrl(flag, data_dir));
//   ASSIGN_OR_RETURN(std::unique_ptr<JobStore> store, OpenStore(url, max_store_bytes));
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "server/store/job_store.h"

namespace gpuprobe {

struct StoreUrl {
  enum class Kind { kSqlite, kPostgres };
  Kind kind = Kind::kSqlite;
  std::string target;  // the SQLite file's absolute path, or the PostgreSQL URL as given
};

// INVALID_ARGUMENT naming --store and the forms it takes for anything else, and libpq's reason
// for a PostgreSQL URL that libpq cannot read (PQconninfoParse).
absl::StatusOr<StoreUrl> ParseStoreUrl(const std::string& flag, const std::string& data_dir);

// Opens the store. Errors name --store (a PostgreSQL URL with its password masked): a database
// that cannot be reached is UNAVAILABLE. `max_bytes` bounds a SQLite file only.
absl::StatusOr<std::unique_ptr<JobStore>> OpenStore(const StoreUrl& url, int64_t max_bytes);

// The URL with any password replaced by "***", for logs and errors: a PostgreSQL URL as libpq
// reads it (PQconninfoParse), rebuilt without its password; nothing of one libpq cannot read.
std::string MaskedUrl(const std::string& url);

}  // namespace gpuprobe
