// Modules for the kernel probe, as the commands that send them share it: a file checked here
// (InspectModule), then stored in the daemon unless it has the same bytes already.
//
//   v1::Module stored;
//   if (int code = UploadModuleFile(context, "scale.cubin", &stored); code != kExitOk) return code;
#pragma once

#include <string>

#include "client/commands.h"
#include "gpuprobe/v1/module.pb.h"

namespace gpuprobe {

// The daemon's record of the file's module in `stored`; kExitOk, or the exit code of what went
// wrong, told on stderr (an unreadable file or no module: kExitUsage).
int UploadModuleFile(const ClientContext& context, const std::string& file, v1::Module* stored);

}  // namespace gpuprobe
