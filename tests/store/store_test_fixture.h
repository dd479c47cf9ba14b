// The stores' contract tests' fixture: each test on a fresh database of both stores, SQLite (a
// file in a temporary directory) and PostgreSQL (a cluster this test binary starts with
// deploy/local-postgres.sh, a fresh database per test). Two stores opened on one database stand
// for two daemons.
//
//   class ModuleStoreTest : public StoreTest {};
//   TEST_P(ModuleStoreTest, ...) { std::unique_ptr<JobStore> store = Open(); ... }
//   INSTANTIATE_TEST_SUITE_P(BothStores, ModuleStoreTest, testing::Values("sqlite", "postgresql"));
#pragma once

#include <stdlib.h>

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "server/store/postgres_connection.h"
#include "server/store/sqlite_connection.h"
#include "server/store/store_url.h"
#include "tests/e2e/subprocess.h"
#include "tests/temp_dir.h"

namespace gpuprobe {

// One PostgreSQL cluster for the whole test binary, started on first use, stopped at exit.
class PostgresCluster {
 public:
  static absl::StatusOr<std::string> Url() {
    static const auto* url = new absl::StatusOr<std::string>(Start());
    return *url;
  }

 private:
  static std::string& Dir() {
    static auto* dir = new std::string();
    return *dir;
  }
  static absl::StatusOr<std::string> Start() {
    // Stopped and removed when the test program exits.
    static auto* temp = new testing_support::ScopedTempDir("gpuprobe_pg");
    Dir() = temp->path();
    absl::StatusOr<testing_support::CommandResult> started =
        testing_support::RunCommand({LOCAL_POSTGRES_PATH, "start", Dir()}, {}, Dir());
    if (!started.ok()) return started.status();
    if (started->exit_code != 0) {
      return absl::UnavailableError(absl::StrCat("local-postgres.sh start: ", started->err));
    }
    std::atexit([] {
      (void)testing_support::RunCommand({LOCAL_POSTGRES_PATH, "stop", Dir()}, {}, Dir());
      delete temp;
    });
    return std::string(absl::StripTrailingAsciiWhitespace(started->out));
  }
};

class StoreTest : public testing::TestWithParam<std::string> {
 protected:
  testing_support::ScopedTempDir temp_{"gpuprobe_store"};  // removed last

  void SetUp() override {
    dir_ = temp_.path();
    if (GetParam() == "sqlite") {
      url_ = absl::StrCat("sqlite://", dir_, "/jobs.db");
      return;
    }
    absl::StatusOr<std::string> base = PostgresCluster::Url();
    ASSERT_TRUE(base.ok()) << base.status();
    static int databases = 0;
    const std::string name = absl::StrCat("contract_", ++databases);
    absl::StatusOr<std::unique_ptr<PostgresConnection>> admin = PostgresConnection::Open(*base);
    ASSERT_TRUE(admin.ok()) << admin.status();
    ASSERT_TRUE((*admin)->Exec(absl::StrCat("CREATE DATABASE ", name)).ok());
    url_ = absl::StrReplaceAll(*base, {{"/postgres?", absl::StrCat("/", name, "?")}});
  }

  // A store on the test's database, as one daemon opens it.
  std::unique_ptr<JobStore> Open() {
    absl::StatusOr<StoreUrl> url = ParseStoreUrl(url_, dir_);
    EXPECT_TRUE(url.ok()) << url.status();
    absl::StatusOr<std::unique_ptr<JobStore>> store = OpenStore(*url, 0);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  // A connection to the test's database behind the stores' backs.
  std::unique_ptr<SqlConnection> Raw() {
    absl::StatusOr<std::unique_ptr<SqlConnection>> raw;
    if (GetParam() == "sqlite") {
      raw = SqliteConnection::Open(dir_ + "/jobs.db");
    } else {
      raw = PostgresConnection::Open(url_);
    }
    EXPECT_TRUE(raw.ok()) << raw.status();
    return raw.ok() ? *std::move(raw) : nullptr;
  }

  std::string dir_, url_;
};

}  // namespace gpuprobe
