// A device for tests whose clock only its work moves: each launch enqueued takes LaunchUs(launch)
// of fake time, each overwrite (a cold flush) kFlushUs and each wait its own length; marks read
// that clock, so a sample is exactly what its timed region held. Work runs as it is enqueued (as on
// the cpu), and a replay runs the captured work again. Every primitive called is logged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/device/backend.h"

namespace gpuprobe {

class FakeClockDevice : public Backend {
 public:
  static constexpr double kFlushUs = 1000.0;

  std::string Name() const override { return "fake"; }
  std::string Description() const override { return "fake device"; }
  int64_t MemoryCapacityBytes() const override { return int64_t{1} << 40; }
  DeviceDetails Details() const override { return {}; }
  int64_t LastLevelCacheBytes() const override { return 4096; }

  absl::Status Bind() override { return absl::OkStatus(); }
  absl::Status Enqueue(DeviceLaunch& launch) override {
    log.push_back("launch");
    absl::StatusOr<double> us = LaunchUs(launch);
    if (!us.ok()) return us.status();
    now_us += *us;
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<DeviceMemory>> Allocate(int64_t bytes) override {
    allocated.push_back(bytes);
    return std::make_unique<Memory>(bytes);
  }
  absl::Status Overwrite(DeviceMemory&, uint8_t value) override {
    log.push_back("flush");
    flush_values.push_back(value);
    now_us += kFlushUs;
    return absl::OkStatus();
  }
  absl::StatusOr<std::unique_ptr<TimeMarks>> NewMarks(int count) override {
    marks_made.push_back(count);
    return std::make_unique<Marks>(*this, count);
  }
  absl::StatusOr<std::unique_ptr<CapturedWork>> Capture(
      absl::AnyInvocable<absl::Status()> enqueue) override {
    ++captures;
    return std::make_unique<Work>(std::move(enqueue));
  }
  absl::Status Synchronize() override {
    log.push_back("sync");
    return absl::OkStatus();
  }
  absl::Status EnqueueWait(int64_t ns) override {
    log.push_back("wait");
    now_us += static_cast<double>(ns) / 1e3;
    return absl::OkStatus();
  }

  double now_us = 0.0;
  std::vector<std::string> log;
  std::vector<int> flush_values;
  std::vector<int64_t> allocated;
  std::vector<int> marks_made;
  int captures = 0;

 protected:
  // How long `launch` takes, or its failure; also where the launch's work is done.
  virtual absl::StatusOr<double> LaunchUs(DeviceLaunch& launch) = 0;

 private:
  struct Memory final : DeviceMemory {
    explicit Memory(int64_t bytes) : size(bytes) {}
    int64_t bytes() const override { return size; }
    int64_t size;
  };
  struct Marks final : TimeMarks {
    Marks(FakeClockDevice& device, int count) : device(device), at(count, -1.0) {}
    absl::Status Record(int mark) override {
      device.log.push_back(absl::StrCat("mark", mark));
      at[mark] = device.now_us;
      return absl::OkStatus();
    }
    absl::StatusOr<double> ElapsedUs(int from, int to) override { return at[to] - at[from]; }
    FakeClockDevice& device;
    std::vector<double> at;
  };
  struct Work final : CapturedWork {
    explicit Work(absl::AnyInvocable<absl::Status()> work) : work(std::move(work)) {}
    absl::Status Replay() override { return work(); }
    absl::AnyInvocable<absl::Status()> work;
  };
};

}  // namespace gpuprobe
