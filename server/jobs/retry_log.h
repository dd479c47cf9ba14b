// The log of a loop that retries against the store: an error is logged when it first appears
// (or changes), not at every retry, and the recovery once.
//
//   RetryLog log("queue");
//   while (...) log.Record(store->ClaimNext(...).status());
#pragma once

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "spdlog/spdlog.h"

namespace gpuprobe {

class RetryLog {
 public:
  explicit RetryLog(std::string what) : what_(std::move(what)) {}

  void Record(const absl::Status& status) {
    if (status.ok()) {
      if (!last_.empty()) spdlog::info("{}: the store answers again", what_);
      last_.clear();
      return;
    }
    std::string text = status.ToString();
    if (text == last_) return;
    spdlog::error("{}: {} (retrying; logged again when it changes)", what_, text);
    last_ = std::move(text);
  }

 private:
  const std::string what_;
  std::string last_;  // the error logged last; empty while the store answers
};

}  // namespace gpuprobe
