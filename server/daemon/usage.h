// gpuprobed's --help and --version: the usage line, the daemon's own flags (those declared in
// server/options/) under their file's path in the repository rather than the build machine's,
// and the version with the commit it was built from.
#pragma once

namespace gpuprobe {

// Before the flags are parsed.
void ConfigureDaemonUsage();

}  // namespace gpuprobe
