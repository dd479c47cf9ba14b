// Every command of `gpuprobe` but `help`, each defined beside its handler (subcommand.h).
#pragma once

#include <vector>

#include "client/subcommand.h"

namespace gpuprobe {

// In the order `gpuprobe help` lists them.
std::vector<Subcommand> Subcommands();

Subcommand SweepSubcommand();
Subcommand CheckSubcommand();
Subcommand SubmitSubcommand();
Subcommand WaitSubcommand();
Subcommand WatchSubcommand();
Subcommand JobsSubcommand();
Subcommand ShowSubcommand();
Subcommand CancelSubcommand();
Subcommand CompareSubcommand();
Subcommand InfoSubcommand();
Subcommand ProbesSubcommand();
Subcommand RunSubcommand();
Subcommand UploadSubcommand();
Subcommand KernelSubcommand();

}  // namespace gpuprobe
