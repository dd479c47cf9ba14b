// SqlConnection over one SQLite database file (full-mutex mode, 5 s busy timeout), optionally
// held by this process alone.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<SqliteConnection> db,
//                    SqliteConnection::Open(path, SqliteConnection::kThisProcessOnly));
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>

#include "server/store/sql_connection.h"

namespace gpuprobe {

class SqliteConnection : public SqlConnection {
 public:
  enum Sharing { kShared, kThisProcessOnly };
  // Opens (creating if missing) the database file. kThisProcessOnly also takes an exclusive
  // flock on the file itself (its inode, whatever path, symlink or hard link reaches it) and
  // holds it while the connection is open: FAILED_PRECONDITION if another process holds it.
  static absl::StatusOr<std::unique_ptr<SqliteConnection>> Open(const std::string& path,
                                                                Sharing sharing = kShared);
  ~SqliteConnection() override;

  absl::StatusOr<SqlRows> Query(absl::string_view sql,
                                const std::vector<SqlValue>& params = {}) override;
  absl::Status Exec(absl::string_view sql) override;
  absl::Status Begin() override { return Exec("BEGIN IMMEDIATE"); }
  absl::string_view LockRowsClause() const override { return ""; }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close(db); }
  };
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  absl::Status LockFile(const std::string& path);

  std::unique_ptr<sqlite3, Closer> db_;
  // The flock's descriptor; closed only after the database, since closing any descriptor of
  // the file drops SQLite's own (POSIX) locks on it.
  int lock_fd_ = -1;
};

}  // namespace gpuprobe
