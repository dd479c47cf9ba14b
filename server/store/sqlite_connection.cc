#include "server/store/sqlite_connection.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

// The error of `rc`. Clients may read the message: it names what failed and SQLite's reason,
// never the statement, which only the debug log shows.
absl::Status SqliteError(sqlite3* db, int rc, absl::string_view what) {
  const absl::StatusCode code = rc == SQLITE_CONSTRAINT ? absl::StatusCode::kAlreadyExists
                                : rc == SQLITE_BUSY || rc == SQLITE_LOCKED
                                    ? absl::StatusCode::kUnavailable
                                : rc == SQLITE_FULL ? absl::StatusCode::kResourceExhausted
                                                    : absl::StatusCode::kInternal;
  return absl::Status(code, absl::StrCat("sqlite: ", what, ": ",
                                         db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
}

absl::Status StatementError(sqlite3* db, int rc, absl::string_view sql) {
  spdlog::debug("sqlite: statement failed ({}): {}", sqlite3_errstr(rc), std::string(sql));
  return SqliteError(db, rc, "a statement of the job store");
}

struct Finalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};

void Bind(sqlite3_stmt* st, int index, const SqlValue& value) {
  struct Binder {
    sqlite3_stmt* st;
    int index;
    void operator()(std::nullptr_t) const { sqlite3_bind_null(st, index); }
    void operator()(int64_t v) const { sqlite3_bind_int64(st, index, v); }
    void operator()(double v) const { sqlite3_bind_double(st, index, v); }
    void operator()(const std::string& v) const {
      sqlite3_bind_text(st, index, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    }
    void operator()(const SqlBlob& v) const {
      sqlite3_bind_blob(st, index, v.bytes.data(), static_cast<int>(v.bytes.size()),
                        SQLITE_TRANSIENT);
    }
  };
  std::visit(Binder{st, index}, value);
}

std::optional<std::string> Cell(sqlite3_stmt* st, int column) {
  switch (sqlite3_column_type(st, column)) {
    case SQLITE_NULL:
      return std::nullopt;
    case SQLITE_INTEGER:
      return absl::StrCat(sqlite3_column_int64(st, column));
    case SQLITE_FLOAT:
      return absl::StrCat(sqlite3_column_double(st, column));
    default: {
      const void* data = sqlite3_column_blob(st, column);
      const int bytes = sqlite3_column_bytes(st, column);
      return data == nullptr ? std::string() : std::string(static_cast<const char*>(data), bytes);
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<SqliteConnection>> SqliteConnection::Open(const std::string& path,
                                                                         Sharing sharing) {
  sqlite3* raw = nullptr;
  const int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  std::unique_ptr<SqliteConnection> db(new SqliteConnection(raw));
  if (rc != SQLITE_OK) return SqliteError(raw, rc, absl::StrCat("open ", path));
  sqlite3_busy_timeout(raw, 5000);
  if (sharing == kThisProcessOnly) RETURN_IF_ERROR(db->LockFile(path));
  return db;
}

SqliteConnection::~SqliteConnection() {
  db_.reset();
  if (lock_fd_ >= 0) close(lock_fd_);
}

absl::Status SqliteConnection::LockFile(const std::string& path) {
  // sqlite3_open_v2 has created the file; this descriptor follows links to the same inode.
  lock_fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (lock_fd_ < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat("store: cannot open ", path, ": ", std::strerror(errno)));
  }
  if (flock(lock_fd_, LOCK_EX | LOCK_NB) == 0) return absl::OkStatus();
  const int error = errno;
  std::error_code ec;
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  const std::string reached = ec || real == path ? "" : absl::StrCat(" (reached as ", path, ")");
  if (error == EWOULDBLOCK) {
    return absl::FailedPreconditionError(absl::StrCat(
        "store: ", ec ? path : real.string(), reached,
        " is in use by another gpuprobed; one daemon per store file, whatever path, symlink or "
        "hard link names it: stop that daemon or pass another --store"));
  }
  return absl::PermissionDeniedError(
      absl::StrCat("store: cannot lock ", path, ": ", std::strerror(error)));
}

absl::StatusOr<SqlRows> SqliteConnection::Query(absl::string_view sql,
                                                const std::vector<SqlValue>& params) {
  sqlite3_stmt* raw = nullptr;
  const int prepared =
      sqlite3_prepare_v2(db_.get(), sql.data(), static_cast<int>(sql.size()), &raw, nullptr);
  if (prepared != SQLITE_OK) return StatementError(db_.get(), prepared, sql);
  std::unique_ptr<sqlite3_stmt, Finalizer> st(raw);
  for (size_t i = 0; i < params.size(); ++i) Bind(raw, static_cast<int>(i + 1), params[i]);
  SqlRows rows;
  const int columns = sqlite3_column_count(raw);
  while (true) {
    const int rc = sqlite3_step(raw);
    if (rc == SQLITE_DONE) return rows;
    if (rc != SQLITE_ROW) return StatementError(db_.get(), rc, sql);
    std::vector<std::optional<std::string>> row;
    row.reserve(columns);
    for (int c = 0; c < columns; ++c) row.push_back(Cell(raw, c));
    rows.AddRow(std::move(row));
  }
}

absl::Status SqliteConnection::Exec(absl::string_view sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_.get(), std::string(sql).c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return absl::OkStatus();
  const std::string text = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  // As StatementError: the reason for clients, the statement for the debug log.
  spdlog::debug("sqlite: statements failed ({}): {}", text, std::string(sql));
  const absl::StatusCode code =
      rc == SQLITE_FULL ? absl::StatusCode::kResourceExhausted : absl::StatusCode::kInternal;
  return absl::Status(code, absl::StrCat("sqlite: statements of the job store: ", text));
}

}  // namespace gpuprobe
