// A small RAII wrapper over SQLite: a connection and prepared statements, errors as
// absl::Status naming the statement.
//
//   ASSIGN_OR_RETURN(SqliteDb db, SqliteDb::Open(path));
//   ASSIGN_OR_RETURN(SqliteStatement st, db.Prepare("SELECT state FROM jobs WHERE id = ?"));
//   st.Bind(1, id);
//   ASSIGN_OR_RETURN(bool row, st.Step());
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuprobe {

class SqliteStatement {
 public:
  // Parameters are 1-based, as in SQLite.
  void Bind(int index, int64_t value);
  void Bind(int index, absl::string_view text);
  void BindBlob(int index, absl::string_view bytes);
  void BindNull(int index);
  // True while a row is available; false when done.
  absl::StatusOr<bool> Step();
  // Runs to completion (statements without result rows).
  absl::Status Run();
  void Reset();

  // Columns are 0-based.
  int64_t Int(int column) const;
  std::string Text(int column) const;
  bool IsNull(int column) const;

 private:
  friend class SqliteDb;
  struct Finalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
  };
  SqliteStatement(sqlite3* db, sqlite3_stmt* stmt, std::string sql)
      : db_(db), stmt_(stmt), sql_(std::move(sql)) {}

  sqlite3* db_;
  std::unique_ptr<sqlite3_stmt, Finalizer> stmt_;
  std::string sql_;
};

class SqliteDb {
 public:
  // Opens (creating if missing) the database file.
  static absl::StatusOr<SqliteDb> Open(const std::string& path);

  absl::StatusOr<SqliteStatement> Prepare(absl::string_view sql);
  // Runs one or more statements that return no rows.
  absl::Status Exec(absl::string_view sql);
  int64_t LastInsertRowId() const { return sqlite3_last_insert_rowid(db_.get()); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close(db); }
  };
  explicit SqliteDb(sqlite3* db) : db_(db) {}
  std::unique_ptr<sqlite3, Closer> db_;
};

}  // namespace gpuprobe
