// A kernel job's results as a summary fit for a pull-request comment (`gpuprobe kernel --format
// markdown`): one table row per arm with its median and 95% interval, and for a candidate arm its
// ratio to its baseline with the interval, the verdict, and whether both ran identical code; an
// impossible time marked as such, never as a plain figure.
//
//   KernelSummary summary({{"scale.candidate", "scale.base"}});
//   handlers.result = [&](const v1::Result& r) { summary.Add(r); };
//   std::cout << summary.Markdown(job_id, exit_state);
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

class KernelSummary {
 public:
  // `baselines`: each candidate arm's baseline arm, by name.
  explicit KernelSummary(std::map<std::string, std::string> baselines)
      : baselines_(std::move(baselines)) {}
  void Add(const v1::Result& result) { results_.push_back(result); }
  // Arms whose verdict is slower; slower, unsure or too few reps.
  int Slower() const;
  int NotSame() const;
  // The markdown, for job `job_id` that ended as `finished` describes.
  std::string Markdown(const std::string& job_id, const v1::JobFinished& finished) const;

 private:
  const std::map<std::string, std::string> baselines_;
  std::vector<v1::Result> results_;
};

}  // namespace gpuprobe
