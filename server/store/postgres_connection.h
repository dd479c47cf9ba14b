// SqlConnection over one libpq connection to a PostgreSQL server. A connection that broke (the
// server restarted, the network dropped) is re-established before the next statement.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<PostgresConnection> db,
//                    PostgresConnection::Open("postgresql://gpuprobe@db.example/gpuprobe"));
#pragma once

#include <libpq-fe.h>

#include <memory>
#include <string>
#include <vector>

#include "server/store/sql_connection.h"

namespace gpuprobe {

class PostgresConnection : public SqlConnection {
 public:
  // Connects; UNAVAILABLE with libpq's reason (the URL's password left out) when it cannot.
  static absl::StatusOr<std::unique_ptr<PostgresConnection>> Open(const std::string& url);

  absl::StatusOr<SqlRows> Query(absl::string_view sql,
                                const std::vector<SqlValue>& params = {}) override;
  absl::Status Exec(absl::string_view sql) override;
  absl::Status Begin() override;
  absl::string_view LockRowsClause() const override { return " FOR UPDATE SKIP LOCKED"; }
  absl::Status Notify(absl::string_view channel, const std::string& payload) override;
  absl::Status Listen(absl::string_view channel) override;
  absl::StatusOr<std::vector<Notification>> AwaitNotifications(absl::Duration timeout) override;

 private:
  struct Closer {
    void operator()(PGconn* c) const { PQfinish(c); }
  };
  explicit PostgresConnection(PGconn* conn) : conn_(conn) {}
  // Re-establishes a broken connection (listening again on its channels); UNAVAILABLE when the
  // server still cannot be reached, or when the connection broke inside a transaction: the
  // server rolled it back, and the transaction's remaining statements must not run outside it.
  absl::Status EnsureConnected();
  std::unique_ptr<PGconn, Closer> conn_;
  std::vector<std::string> channels_;  // listened to
  bool in_transaction_ = false;        // between Begin and COMMIT or ROLLBACK
  bool reconnected_ = false;           // since the last AwaitNotifications: some may be lost
};

}  // namespace gpuprobe
