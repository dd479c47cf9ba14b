// The end-to-end tests' shared daemon: a real gpuprobed on the cpu backend, started once per test
// suite on ports 0, with the real CLI run against it; and the helpers that read the CLI's output.
// GPUPROBED_PATH and GPUPROBE_PATH are the built binaries (tests/CMakeLists.txt).
#pragma once

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "common/api_json.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "gpuprobe/v1/probe.pb.h"
#include "gtest/gtest.h"
#include "tests/e2e/subprocess.h"
#include "tests/temp_dir.h"

namespace gpuprobe {

using testing::DoubleNear;
using testing::HasSubstr;
using testing::Not;
using testing_support::ChildProcess;
using testing_support::CommandResult;
using testing_support::RunCommand;

// A sweep small enough for seconds on the cpu backend.
inline const std::vector<std::string> kSmallSweep = {"--experts", "32", "--hidden",   "256",
                                                     "--ff",      "64", "--selected", "4",
                                                     "--t",       "2",  "--reps",     "3"};

class SweepEndToEndTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    temp_ = new testing_support::ScopedTempDir("gpuprobe_e2e");
    dir_ = new std::string(temp_->path());
    absl::StatusOr<ChildProcess> daemon =
        ChildProcess::Start({GPUPROBED_PATH, "--listen", "127.0.0.1:0", "--backend", "cpu",
                             "--http", "127.0.0.1:0", "--data-dir", *dir_ + "/data"},
                            *dir_ + "/daemon.log");
    ASSERT_TRUE(daemon.ok()) << daemon.status();
    daemon_ = new ChildProcess(*std::move(daemon));
    absl::StatusOr<std::string> server = daemon_->GrpcAddress();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = new std::string(*server);
    absl::StatusOr<std::string> http = daemon_->HttpAddress();
    ASSERT_TRUE(http.ok()) << http.status();
    http_ = new std::string(*http);
  }

  // A daemon that did not start fails every test of the suite (never skips it).
  void SetUp() override { ASSERT_NE(server_, nullptr) << "gpuprobed did not start"; }

  static void TearDownTestSuite() {
    delete daemon_;  // SIGKILLs it if a test did not stop it
    delete server_;
    delete http_;
    delete dir_;
    delete temp_;
  }

  // A small sweep submitted and waited for; its id ("" and a test failure if it failed).
  static std::string SucceededJob() {
    const CommandResult submitted =
        Cli({"submit", "--experts", "32", "--hidden", "256", "--ff", "64", "--selected", "4", "--t",
             "2", "--reps", "3", "--wait"});
    EXPECT_EQ(submitted.exit_code, 0) << submitted.err;
    const std::vector<std::string> lines = absl::StrSplit(submitted.out, '\n', absl::SkipEmpty());
    return submitted.exit_code == 0 && !lines.empty() ? lines.back() : "";
  }
  static CommandResult Cli(std::vector<std::string> args, std::vector<std::string> env = {}) {
    args.insert(args.begin(), {GPUPROBE_PATH, "--server", *server_});
    absl::StatusOr<CommandResult> r = RunCommand(args, env, *dir_);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  static inline testing_support::ScopedTempDir* temp_ = nullptr;
  static inline std::string* dir_ = nullptr;
  static inline std::string* server_ = nullptr;
  static inline std::string* http_ = nullptr;
  static inline ChildProcess* daemon_ = nullptr;
};

struct Tsv {
  std::vector<std::string> comments;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

inline Tsv ParseTsv(const std::string& text) {
  Tsv tsv;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) {
      tsv.comments.emplace_back(line);
    } else if (tsv.header.empty()) {
      tsv.header = absl::StrSplit(line, '\t');
    } else {
      tsv.rows.push_back(absl::StrSplit(line, '\t'));
    }
  }
  return tsv;
}

// Fields in one CSV line: commas outside quotes, plus one.
inline int CsvFieldCount(const std::string& line) {
  bool quoted = false;
  int n = 1;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted) ++n;
  }
  return n;
}

// The job id in a command's "gpuprobe: job J queued" line on stderr; empty if there is none.
inline std::string JobNamedIn(const std::string& err) {
  const size_t at = err.find("gpuprobe: job ");
  if (at == std::string::npos) return "";
  const size_t start = at + std::string("gpuprobe: job ").size();
  return err.substr(start, err.find(' ', start) - start);
}

}  // namespace gpuprobe
