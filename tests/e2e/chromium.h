// Debian's Chromium, headless, for end-to-end tests of the daemon's page.
//
//   CommandResult dom = Chromium(dir, {"--dump-dom"}, "http://127.0.0.1:7071/");
#pragma once

#include <stdlib.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/e2e/subprocess.h"

namespace gpuprobe::testing_support {

// Debian's Chromium, headless, as the probe of this machine kind ran it (deploy/install-deps.sh
// installs it): what a person's browser would show, after the page's scripts ran.
inline CommandResult Chromium(const std::string& dir, std::vector<std::string> extra,
                              const std::string& url) {
  std::vector<std::string> argv = {"/usr/bin/chromium",
                                   "--headless",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--disable-quic",
                                   "--no-first-run",
                                   "--disable-background-networking",
                                   "--disable-component-update",
                                   "--disable-sync",
                                   "--user-data-dir=" + dir + "/chromium-" + std::to_string(rand()),
                                   "--window-size=1280,1000",
                                   "--virtual-time-budget=5000"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back(url);
  absl::StatusOr<CommandResult> r = RunCommand(argv, {}, dir, absl::Seconds(120));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : CommandResult{};
}

}  // namespace gpuprobe::testing_support
