// The small sweep the probe tests share: experts 64, hidden 512, ff 128, selected 4,
// t = 1..3 (6 arms), 3 reps.
#pragma once

#include "server/probes/moe_union/sweep_spec.h"

namespace gpuprobe {

inline SweepOptions SmallSweepOptions() {
  SweepOptions o;
  o.experts = 64;
  o.hidden = 512;
  o.ff = 128;
  o.selected = 4;
  o.t_max = 3;
  o.reps = 3;
  return o;
}

}  // namespace gpuprobe
