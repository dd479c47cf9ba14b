// The little of a SQL database that the job store needs, so that one store implementation
// (SqlJobStore) runs on SQLite and PostgreSQL alike: numbered parameters (?1, ?2, ... each usable
// more than once), results read whole, errors as absl::Status naming the statement.
//
//   ASSIGN_OR_RETURN(SqlRows rows, db.Query("SELECT id FROM jobs WHERE state = ?1", {int64_t{1}}));
//   for (size_t r = 0; r < rows.size(); ++r) ids.push_back(rows.Text(r, 0));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace gpuprobe {

// Bytes stored as a blob (BLOB, BYTEA) rather than text.
struct SqlBlob {
  std::string bytes;
};
using SqlValue = std::variant<std::nullptr_t, int64_t, double, std::string, SqlBlob>;

// A statement's result rows; every cell as bytes (numbers in decimal, blobs decoded), or null.
class SqlRows {
 public:
  size_t size() const { return cells_.size(); }
  bool empty() const { return cells_.empty(); }
  int64_t Int(size_t row, int column) const;
  double Double(size_t row, int column) const;
  // Text or blob bytes; "" for null.
  const std::string& Text(size_t row, int column) const;
  bool IsNull(size_t row, int column) const { return !cells_[row][column].has_value(); }
  std::optional<int64_t> OptionalInt(size_t row, int column) const;
  std::optional<std::string> OptionalText(size_t row, int column) const;

  void AddRow(std::vector<std::optional<std::string>> row) { cells_.push_back(std::move(row)); }

 private:
  std::vector<std::vector<std::optional<std::string>>> cells_;
};

class SqlConnection {
 public:
  virtual ~SqlConnection() = default;
  // Runs one statement with parameters ?1, ?2, ...; returns its rows (none for most writes).
  // A unique constraint violated: ALREADY_EXISTS; a full disk or store: RESOURCE_EXHAUSTED.
  virtual absl::StatusOr<SqlRows> Query(absl::string_view sql,
                                        const std::vector<SqlValue>& params = {}) = 0;
  // Runs statements without parameters nor rows (schema, transaction control).
  virtual absl::Status Exec(absl::string_view sql) = 0;
  // Starts a transaction that writes (SQLite takes the write lock at once, so two writers
  // never deadlock upgrading).
  virtual absl::Status Begin() = 0;
  // Appended to a SELECT that picks rows to update: " FOR UPDATE SKIP LOCKED" where concurrent
  // writers exist (PostgreSQL), else "" (SQLite's one writer at a time).
  virtual absl::string_view LockRowsClause() const = 0;

  // Tells the listeners of `channel` (PostgreSQL's NOTIFY, delivered when the transaction
  // commits); a database without listeners (SQLite) has no one to tell.
  virtual absl::Status Notify(absl::string_view /*channel*/, const std::string& /*payload*/) {
    return absl::OkStatus();
  }
  // Listens on `channel` from now on (PostgreSQL); UNIMPLEMENTED where there are no
  // notifications.
  virtual absl::Status Listen(absl::string_view channel);
  // A notification heard on a channel listened to. An empty payload stands for every payload:
  // the connection was re-established, and what was announced meanwhile is unknown.
  struct Notification {
    std::string channel;
    std::string payload;
  };
  // Waits up to `timeout` for notifications on the channels listened to; returns those that
  // came (none: the time passed).
  virtual absl::StatusOr<std::vector<Notification>> AwaitNotifications(absl::Duration timeout);
};

}  // namespace gpuprobe
