#include "server/jobs/sqlite_db.h"

#include "absl/strings/str_cat.h"

namespace gpuprobe {
namespace {

absl::Status SqliteError(sqlite3* db, int rc, absl::string_view what) {
  const absl::StatusCode code = rc == SQLITE_CONSTRAINT ? absl::StatusCode::kAlreadyExists
                                : rc == SQLITE_BUSY || rc == SQLITE_LOCKED
                                    ? absl::StatusCode::kUnavailable
                                : rc == SQLITE_FULL ? absl::StatusCode::kResourceExhausted
                                                    : absl::StatusCode::kInternal;
  return absl::Status(code, absl::StrCat("sqlite: ", what, ": ",
                                         db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}

}  // namespace

void SqliteStatement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_.get(), index, value);
}

void SqliteStatement::Bind(int index, absl::string_view text) {
  sqlite3_bind_text(stmt_.get(), index, text.data(), static_cast<int>(text.size()),
                    SQLITE_TRANSIENT);
}

void SqliteStatement::BindBlob(int index, absl::string_view bytes) {
  sqlite3_bind_blob(stmt_.get(), index, bytes.data(), static_cast<int>(bytes.size()),
                    SQLITE_TRANSIENT);
}

void SqliteStatement::BindNull(int index) { sqlite3_bind_null(stmt_.get(), index); }

absl::StatusOr<bool> SqliteStatement::Step() {
  const int rc = sqlite3_step(stmt_.get());
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, sql_);
}

absl::Status SqliteStatement::Run() {
  absl::StatusOr<bool> row = Step();
  while (row.ok() && *row) row = Step();
  return row.status();
}

void SqliteStatement::Reset() {
  sqlite3_reset(stmt_.get());
  sqlite3_clear_bindings(stmt_.get());
}

int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(stmt_.get(), column); }

std::string SqliteStatement::Text(int column) const {
  const void* data = sqlite3_column_blob(stmt_.get(), column);
  const int bytes = sqlite3_column_bytes(stmt_.get(), column);
  return data == nullptr ? std::string() : std::string(static_cast<const char*>(data), bytes);
}

bool SqliteStatement::IsNull(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

absl::StatusOr<SqliteDb> SqliteDb::Open(const std::string& path) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  SqliteDb db(raw);
  if (rc != SQLITE_OK) return SqliteError(raw, rc, absl::StrCat("open ", path));
  sqlite3_busy_timeout(raw, 5000);
  return db;
}

absl::StatusOr<SqliteStatement> SqliteDb::Prepare(absl::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc =
      sqlite3_prepare_v2(db_.get(), sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_.get(), rc, sql);
  return SqliteStatement(db_.get(), stmt, std::string(sql));
}

absl::Status SqliteDb::Exec(absl::string_view sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_.get(), std::string(sql).c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return absl::OkStatus();
  const std::string text = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  return absl::InternalError(absl::StrCat("sqlite: ", sql.substr(0, 80), ": ", text));
}

}  // namespace gpuprobe
