// SqlConnection over one SQLite database file (full-mutex mode, 5 s busy timeout).
//
//   ASSIGN_OR_RETURN(std::unique_ptr<SqliteConnection> db, SqliteConnection::Open(path));
#pragma once

#include <sqlite3.h>

#include <memory>
#include <string>

#include "server/store/sql_connection.h"

namespace gpuprobe {

class SqliteConnection : public SqlConnection {
 public:
  // Opens (creating if missing) the database file.
  static absl::StatusOr<std::unique_ptr<SqliteConnection>> Open(const std::string& path);

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
  std::unique_ptr<sqlite3, Closer> db_;
};

}  // namespace gpuprobe
