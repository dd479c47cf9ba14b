// A job's events as a v1 client of the moe-union probe reads them (the Run rpc, and Watch
// without WatchRequest.results): each arm of a moe-union sweep as a Row, not a Result, and the
// reference row's section in JobFinished.reference_section_us. Every other event, and every
// event of another probe's job, passes as it is.
//
//   MoeUnionRowView view;
//   for (v1::JobEvent& e : events) Send(view.View(std::move(e)));
#pragma once

#include <optional>

#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

class MoeUnionRowView {
 public:
  // The event as the v1 client sees it; events come in the job's order.
  v1::JobEvent View(v1::JobEvent event);

 private:
  std::optional<v1::ResolvedSweep> sweep_;  // set while a moe-union sweep's attempt streams
  std::optional<double> reference_section_us_;
};

}  // namespace gpuprobe
