#include "client/subcommands.h"

namespace gpuprobe {

std::vector<Subcommand> Subcommands() {
  return {SweepSubcommand(),   CheckSubcommand(), SubmitSubcommand(), WaitSubcommand(),
          WatchSubcommand(),   JobsSubcommand(),  ShowSubcommand(),   CancelSubcommand(),
          CompareSubcommand(), InfoSubcommand(),  ProbesSubcommand(), RunSubcommand(),
          UploadSubcommand(),  KernelSubcommand()};
}

}  // namespace gpuprobe
