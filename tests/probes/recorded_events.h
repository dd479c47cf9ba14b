// The events a probe publishes, recorded in order, for tests that run a probe or the measuring
// helper in process.
//
//   RecordedEvents recorded;
//   probe.Run(run, cpu, recorded.Publisher(), cancelled);
//   EXPECT_EQ(recorded.Results().size(), 2u);
#pragma once

#include <utility>
#include <vector>

#include "gpuprobe/v1/probe.pb.h"
#include "server/probes/probe.h"

namespace gpuprobe {

struct RecordedEvents {
  std::vector<v1::JobEvent> events;

  EventPublisher Publisher() {
    return [this](v1::JobEvent e) { events.push_back(std::move(e)); };
  }
  std::vector<v1::Result> Results() const {
    std::vector<v1::Result> out;
    for (const auto& e : events) {
      if (e.has_result()) out.push_back(e.result());
    }
    return out;
  }
  std::vector<v1::KernelCheck> Checks() const {
    std::vector<v1::KernelCheck> out;
    for (const auto& e : events) {
      if (e.has_check()) out.push_back(e.check());
    }
    return out;
  }
  std::vector<v1::JobProgress> Progress() const {
    std::vector<v1::JobProgress> out;
    for (const auto& e : events) {
      if (e.has_progress()) out.push_back(e.progress());
    }
    return out;
  }
};

}  // namespace gpuprobe
