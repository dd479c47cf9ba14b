// The small sweep the probe tests share: experts 64, hidden 512, ff 128, selected 4,
// t = 1..3 (6 arms), 3 reps.
#pragma once

#include "server/probes/moe_union/sweep_spec.h"

namespace gpuprobe {

inline v1::SweepRequest SmallSweepRequest() {
  v1::SweepRequest r;
  r.mutable_geometry()->set_experts(64);
  r.mutable_geometry()->set_hidden(512);
  r.mutable_geometry()->set_ff(128);
  r.mutable_geometry()->set_selected(4);
  r.set_t_max(3);
  r.set_reps(3);
  return r;
}

}  // namespace gpuprobe
