// The shape of one MoE layer and the NVFP4 byte counts that follow from it.
//
//   MoeGeometry g{.experts = 512, .hidden = 2560, .ff = 640, .selected = 10};
//   int64_t gate_up = GateUpExpertBytes(g);  // 1,843,200 B
#pragma once

#include <cstdint>

namespace gpuprobe {

// One scale byte covers this many consecutive inputs of a row (NVFP4, ModelOpt layout).
inline constexpr int kNvfp4BlockSize = 16;

struct MoeGeometry {
  int experts = 0;   // experts in the banks
  int hidden = 0;    // model width: gate/up inputs, down outputs
  int ff = 0;        // expert width: gate and up outputs each, down inputs
  int selected = 0;  // experts per token

  // Spelled out: this header is also compiled as C++17 by nvcc.
  friend bool operator==(const MoeGeometry& a, const MoeGeometry& b) {
    return a.experts == b.experts && a.hidden == b.hidden && a.ff == b.ff &&
           a.selected == b.selected;
  }
};

// Bytes of an NVFP4 row of `inputs` values: inputs/2 code bytes plus inputs/16 scale bytes.
constexpr int64_t Nvfp4RowBytes(int64_t inputs) { return inputs / 2 + inputs / kNvfp4BlockSize; }

// One expert's gate and up rows: 2*ff rows of `hidden` inputs.
constexpr int64_t GateUpExpertBytes(const MoeGeometry& g) {
  return 2 * static_cast<int64_t>(g.ff) * Nvfp4RowBytes(g.hidden);
}

// One expert's down rows: `hidden` rows of `ff` inputs.
constexpr int64_t DownExpertBytes(const MoeGeometry& g) {
  return static_cast<int64_t>(g.hidden) * Nvfp4RowBytes(g.ff);
}

// Every expert's weights plus global scales (gate, up, down: one fp32 each per expert).
constexpr int64_t BankBytes(const MoeGeometry& g) {
  return static_cast<int64_t>(g.experts) * (GateUpExpertBytes(g) + DownExpertBytes(g) + 3 * 4);
}

}  // namespace gpuprobe
