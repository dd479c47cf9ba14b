// A test's own temporary directory under ::testing::TempDir() (deploy/run-tests.sh points it at
// a directory of its own and fails when anything is left there), removed with everything in it
// when the object goes, also when the test failed.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"

namespace gpuprobe::testing_support {

class ScopedTempDir {
 public:
  // `prefix`: what the directory's name starts with, e.g. "gpuprobe_store".
  explicit ScopedTempDir(const std::string& prefix) {
    std::string tmpl = ::testing::TempDir() + prefix + "_XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
    EXPECT_FALSE(path_.empty()) << "mkdtemp " << tmpl;
  }
  ~ScopedTempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace gpuprobe::testing_support
