// gpuprobe: the command-line client of gpuprobed.
//
//   gpuprobe [--server HOST:PORT] [--format table|tsv|csv|json] COMMAND [flags]
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "client/commands.h"
#include "client/exit_codes.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

ABSL_FLAG(std::string, server, "",
          "gpuprobed address HOST:PORT (default $GPUPROBE_SERVER, else 127.0.0.1:7070)");
ABSL_FLAG(std::string, format, "table", "table, tsv, csv or json");

namespace {

constexpr char kUsage[] =
    "gpuprobe [--server HOST:PORT] [--format table|tsv|csv|json] COMMAND [flags]\n"
    "commands:\n"
    "  sweep  submit a MoE union sweep and print its rows as they stream in\n"
    "         --experts --hidden --ff --selected --t --t-values --unions --reps\n"
    "         --timing events|graph --cache warm|cold --variant --seed --label k=v\n"
    "  check  exactness of every kernel variant against the float64 reference\n"
    "         --experts --hidden --ff --selected --t --unions --variant --seed --dump DIR\n"
    "  info   describe the server and its device\n";

// Flag names use dashes on the command line (--t-values) and underscores in code.
std::vector<char*> DashesToUnderscores(int argc, char** argv, std::vector<std::string>& storage) {
  storage.assign(argv, argv + argc);
  for (std::string& arg : storage) {
    if (arg.rfind("--", 0) != 0 || arg == "--") continue;
    const size_t end = std::min(arg.find('='), arg.size());
    for (size_t i = 2; i < end; ++i) {
      if (arg[i] == '-') arg[i] = '_';
    }
  }
  std::vector<char*> out;
  for (std::string& arg : storage) out.push_back(arg.data());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<std::string> storage;
  std::vector<char*> args = DashesToUnderscores(argc, argv, storage);
  std::vector<char*> positional = absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  if (positional.size() != 2) {
    std::cerr << "usage: " << kUsage;
    return gpuprobe::kExitUsage;
  }
  gpuprobe::ClientContext context;
  context.server = absl::GetFlag(FLAGS_server);
  if (context.server.empty()) {
    const char* env = std::getenv("GPUPROBE_SERVER");
    context.server = env != nullptr && *env != '\0' ? env : "127.0.0.1:7070";
  }
  context.format = absl::GetFlag(FLAGS_format);
  context.channel = grpc::CreateChannel(context.server, grpc::InsecureChannelCredentials());

  const std::string command = positional[1];
  if (command == "sweep") return gpuprobe::SweepCommand(context);
  if (command == "check") return gpuprobe::CheckCommand(context);
  if (command == "info") return gpuprobe::InfoCommand(context);
  std::cerr << "gpuprobe: unknown command \"" << command << "\"\nusage: " << kUsage;
  return gpuprobe::kExitUsage;
}
