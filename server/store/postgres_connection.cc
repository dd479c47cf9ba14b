#include "server/store/postgres_connection.h"

#include <poll.h>

#include <cctype>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "common/status_macros.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {
namespace {

// Type OIDs of the parameters the store binds (pg_type.h).
constexpr Oid kInt8Oid = 20, kFloat8Oid = 701, kByteaOid = 17;

struct ResultClearer {
  void operator()(PGresult* r) const { PQclear(r); }
};
using Result = std::unique_ptr<PGresult, ResultClearer>;

// ?N placeholders (SQLite's numbered form) as PostgreSQL's $N. The store's SQL has no '?' in
// its string literals.
std::string Numbered(absl::string_view sql) {
  std::string out;
  out.reserve(sql.size());
  for (size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] == '?' && i + 1 < sql.size() &&
        std::isdigit(static_cast<unsigned char>(sql[i + 1]))) {
      out.push_back('$');
    } else {
      out.push_back(sql[i]);
    }
  }
  return out;
}

absl::Status PostgresError(PGconn* conn, const PGresult* result, absl::string_view what) {
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  const std::string sqlstate = state != nullptr ? state : "";
  absl::StatusCode code = absl::StatusCode::kInternal;
  if (sqlstate == "23505") {
    code = absl::StatusCode::kAlreadyExists;  // unique_violation
  } else if (sqlstate.starts_with("53")) {
    code = absl::StatusCode::kResourceExhausted;  // disk full, out of memory, too many connections
  } else if (sqlstate.starts_with("08") || sqlstate.starts_with("57") ||
             PQstatus(conn) != CONNECTION_OK) {
    code = absl::StatusCode::kUnavailable;  // connection lost, server shutting down
  }
  std::string message = result != nullptr ? PQresultErrorMessage(result) : PQerrorMessage(conn);
  // Clients may read the message: the server's reason, never the statement (the debug log's).
  spdlog::debug("postgresql: statement failed: {}", std::string(what));
  return absl::Status(code,
                      absl::StrCat("postgresql: ", absl::StripTrailingAsciiWhitespace(message)));
}

}  // namespace

absl::StatusOr<std::unique_ptr<PostgresConnection>> PostgresConnection::Open(
    const std::string& url) {
  std::unique_ptr<PostgresConnection> db(new PostgresConnection(PQconnectdb(url.c_str())));
  if (db->conn_ == nullptr) return absl::ResourceExhaustedError("postgresql: out of memory");
  if (PQstatus(db->conn_.get()) != CONNECTION_OK) {
    return absl::UnavailableError(absl::StrCat(
        "cannot connect: ", absl::StripTrailingAsciiWhitespace(PQerrorMessage(db->conn_.get()))));
  }
  // The store's messages stay in English whatever the server's locale; notices are not news.
  RETURN_IF_ERROR(db->Exec("SET client_min_messages = warning"));
  return db;
}

absl::Status PostgresConnection::EnsureConnected() {
  if (PQstatus(conn_.get()) == CONNECTION_OK) return absl::OkStatus();
  if (in_transaction_) {
    in_transaction_ = false;
    return absl::UnavailableError(
        "postgresql: the connection broke inside a transaction; the server rolled it back");
  }
  PQreset(conn_.get());
  if (PQstatus(conn_.get()) == CONNECTION_OK) {
    for (const std::string& channel : channels_) RETURN_IF_ERROR(Exec("LISTEN " + channel));
    reconnected_ = !channels_.empty();
    return absl::OkStatus();
  }
  return absl::UnavailableError(
      absl::StrCat("postgresql: the connection is lost and cannot be re-established: ",
                   absl::StripTrailingAsciiWhitespace(PQerrorMessage(conn_.get()))));
}

absl::StatusOr<SqlRows> PostgresConnection::Query(absl::string_view sql,
                                                  const std::vector<SqlValue>& params) {
  RETURN_IF_ERROR(EnsureConnected());
  const size_t n = params.size();
  std::vector<std::string> text(n);
  std::vector<const char*> values(n, nullptr);
  std::vector<int> lengths(n, 0), formats(n, 0);
  std::vector<Oid> types(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const SqlValue& p = params[i];
    if (const auto* v = std::get_if<int64_t>(&p)) {
      text[i] = absl::StrCat(*v);
      types[i] = kInt8Oid;
    } else if (const auto* d = std::get_if<double>(&p)) {
      text[i] = absl::StrCat(*d);
      types[i] = kFloat8Oid;
    } else if (const auto* s = std::get_if<std::string>(&p)) {
      text[i] = *s;
    } else if (const auto* b = std::get_if<SqlBlob>(&p)) {
      text[i] = b->bytes;
      types[i] = kByteaOid;
      formats[i] = 1;  // binary: the bytes as they are
    }
    if (!std::holds_alternative<std::nullptr_t>(p)) {
      values[i] = text[i].data();
      lengths[i] = static_cast<int>(text[i].size());
    }
  }
  const std::string numbered = Numbered(sql);
  Result result(PQexecParams(conn_.get(), numbered.c_str(), static_cast<int>(n), types.data(),
                             values.data(), lengths.data(), formats.data(), 0));
  const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
    return PostgresError(conn_.get(), result.get(), sql);
  }
  SqlRows rows;
  const int columns = PQnfields(result.get());
  for (int r = 0; r < PQntuples(result.get()); ++r) {
    std::vector<std::optional<std::string>> row;
    row.reserve(columns);
    for (int c = 0; c < columns; ++c) {
      if (PQgetisnull(result.get(), r, c)) {
        row.emplace_back(std::nullopt);
        continue;
      }
      const char* cell = PQgetvalue(result.get(), r, c);
      if (PQftype(result.get(), c) != kByteaOid) {
        row.emplace_back(std::string(cell, PQgetlength(result.get(), r, c)));
        continue;
      }
      size_t bytes = 0;
      unsigned char* raw = PQunescapeBytea(reinterpret_cast<const unsigned char*>(cell), &bytes);
      if (raw == nullptr) return absl::ResourceExhaustedError("postgresql: out of memory");
      row.emplace_back(std::string(reinterpret_cast<const char*>(raw), bytes));
      PQfreemem(raw);
    }
    rows.AddRow(std::move(row));
  }
  return rows;
}

absl::Status PostgresConnection::Notify(absl::string_view channel, const std::string& payload) {
  return Query("SELECT pg_notify(?1, ?2)", {std::string(channel), payload}).status();
}

absl::Status PostgresConnection::Listen(absl::string_view channel) {
  RETURN_IF_ERROR(Exec(absl::StrCat("LISTEN ", channel)));
  channels_.emplace_back(channel);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<SqlConnection::Notification>> PostgresConnection::AwaitNotifications(
    absl::Duration timeout) {
  RETURN_IF_ERROR(EnsureConnected());
  std::vector<Notification> heard;
  if (reconnected_) {
    reconnected_ = false;
    for (const std::string& channel : channels_) heard.push_back({channel, ""});
    return heard;
  }
  auto take = [&]() {
    while (PGnotify* n = PQnotifies(conn_.get())) {
      heard.push_back({n->relname, n->extra});
      PQfreemem(n);
    }
  };
  take();
  if (!heard.empty()) return heard;
  pollfd socket{.fd = PQsocket(conn_.get()), .events = POLLIN, .revents = 0};
  const int ready = poll(&socket, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  if (ready < 0 && errno != EINTR) {
    return absl::UnavailableError(absl::StrCat("postgresql: poll: ", std::strerror(errno)));
  }
  if (ready > 0 && PQconsumeInput(conn_.get()) == 0) {
    return absl::UnavailableError(absl::StrCat(
        "postgresql: ", absl::StripTrailingAsciiWhitespace(PQerrorMessage(conn_.get()))));
  }
  take();
  return heard;
}

absl::Status PostgresConnection::Begin() {
  RETURN_IF_ERROR(Exec("BEGIN"));
  in_transaction_ = true;
  return absl::OkStatus();
}

absl::Status PostgresConnection::Exec(absl::string_view sql) {
  // A ROLLBACK has nothing to lose on a new connection; a COMMIT on a broken one fails in
  // EnsureConnected (else it would "commit" on a fresh connection what the server rolled back).
  if (sql == "ROLLBACK") in_transaction_ = false;
  RETURN_IF_ERROR(EnsureConnected());
  Result result(PQexec(conn_.get(), std::string(sql).c_str()));
  if (sql == "COMMIT") in_transaction_ = false;  // ended, either way
  const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return PostgresError(conn_.get(), result.get(), sql);
  }
  return absl::OkStatus();
}

}  // namespace gpuprobe
