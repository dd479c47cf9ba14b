// What a compiled CUDA module is, read from its bytes alone (no GPU, no driver): a cubin (an ELF
// for the CUDA machine), a fatbin (nvcc's fat binary container) or PTX text, its kernels and the
// sha256 of each kernel's machine code. The daemon checks every upload with it before anything is
// stored; the CLI, before anything is sent.
//
//   ASSIGN_OR_RETURN(v1::Module module, InspectModule(bytes));   // id, format, size, kernels
#pragma once

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuprobe/v1/module.pb.h"

namespace gpuprobe {

namespace v1 = ::gpuprobe::v1;

// The module's id (sha256 of the bytes), format, size and kernels. INVALID_ARGUMENT for anything
// else than a well-formed cubin, fatbin or PTX, saying what the bytes are (an ELF for another
// machine, a gzip file, CUDA source, text without a .version directive, a truncated ELF...).
absl::StatusOr<v1::Module> InspectModule(absl::string_view bytes);

}  // namespace gpuprobe
