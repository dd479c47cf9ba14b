// gpuprobe: the command-line client of gpuprobed.
//
//   gpuprobe [--server HOST:PORT] [--format table|tsv|csv|json] COMMAND [flags]
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "client/commands.h"
#include "client/exit_codes.h"
#include "client/probe_commands.h"
#include "common/flag_names.h"
#include "common/host_port.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

ABSL_FLAG(std::string, server, "",
          "gpuprobed address HOST:PORT (default $GPUPROBE_SERVER, else 127.0.0.1:7070)");
ABSL_FLAG(std::string, format, "table", "table, tsv, csv or json");
ABSL_FLAG(std::string, token, "",
          "bearer token for a daemon with --tokens (default $GPUPROBE_TOKEN)");
ABSL_FLAG(std::string, tls_ca, "",
          "PEM root certificate(s): connect with TLS, trusting these (default $GPUPROBE_TLS_CA)");

namespace {

constexpr char kUsage[] =
    "gpuprobe [--server HOST:PORT] [--format table|tsv|csv|json] COMMAND [flags]\n"
    "commands:\n"
    "  sweep  submit a MoE union sweep and print its rows as they stream in\n"
    "         --experts --hidden --ff --selected --t --t-values --unions --reps\n"
    "         --timing events|graph --cache warm|cold --variant --seed --label k=v\n"
    "  check  exactness of every kernel variant against the float64 reference\n"
    "         --experts --hidden --ff --selected --t --unions --variant --seed --dump DIR\n"
    "  submit queue a sweep (sweep flags, --priority, --idempotency-key, --device, --gpu,\n"
    "         --host, --wait); prints the job id\n"
    "  wait JOB    block until JOB ends (--timeout); exit 0 ok, 1 failed, 3 cancelled,\n"
    "              5 timed out, 4 unreachable\n"
    "  watch JOB   print JOB's rows as they are stored (earlier ones first; the last\n"
    "              attempt's, or every attempt's with --all-attempts)\n"
    "  jobs        newest jobs (--state, --label k=v, --limit)\n"
    "  show JOB    JOB's record and rows\n"
    "  cancel JOB  remove JOB from the queue, or stop it running\n"
    "  compare BASE CAND  arm by arm: CAND's section time over BASE's with a 95% interval\n"
    "              and a verdict (faster, slower, same, unsure); BASE: a job id or\n"
    "              label:KEY=VALUE (the newest succeeded sweep so labelled); --threshold 2%,\n"
    "              --fail-on slower|unsure: exit 6 when found\n"
    "  info   describe the server and its device\n"
    "  probes the probes the daemon serves, with their parameters, axes and metrics\n"
    "  run PROBE  submit a job of any probe and print its results as they arrive:\n"
    "         --param NAME=VALUE (repeatable), --check, --label k=v\n"
    "  show, watch, wait, cancel and compare work for every probe's jobs; submit takes\n"
    "  --probe NAME --param NAME=VALUE for any probe\n";

// `gpuprobe --help`: the usage, then every flag of the client with its help and default
// (Abseil's own --help lists only flags defined in main.cc).
void PrintHelp() {
  std::cout << "usage: " << kUsage << "flags:\n";
  std::vector<std::pair<std::string, const absl::CommandLineFlag*>> flags;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->Filename().find("client/") != std::string::npos) flags.emplace_back(name, flag);
  }
  std::sort(flags.begin(), flags.end());
  for (const auto& [name, flag] : flags) {
    std::string spelled(name);
    std::replace(spelled.begin(), spelled.end(), '_', '-');
    std::cout << "  --" << spelled << "  " << flag->Help() << " (default: \""
              << flag->DefaultValue() << "\")\n";
  }
}

// The flag's value, else the environment variable's, else empty.
std::string FlagOrEnv(const std::string& flag, const char* env) {
  if (!flag.empty()) return flag;
  const char* value = std::getenv(env);
  return value != nullptr ? value : "";
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<std::string> storage;
  std::vector<char*> args = gpuprobe::DashesToUnderscores(argc, argv, storage);
  // Before the flags are parsed: a value may hold commas, which a list flag would split.
  std::vector<std::string> params = gpuprobe::TakeRepeatedFlag(args, "param");
  for (const char* arg : args) {
    if (std::string(arg) == "--help" || std::string(arg) == "-h") {
      PrintHelp();
      return gpuprobe::kExitOk;
    }
  }
  if (absl::Status flags = gpuprobe::CheckFlagArguments(args); !flags.ok()) {
    std::cerr << "gpuprobe: " << flags.message() << "\nusage: " << kUsage;
    return gpuprobe::kExitUsage;
  }
  std::vector<char*> positional =
      absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
  if (positional.size() < 2 || positional.size() > 4) {
    std::cerr << "usage: " << kUsage;
    return gpuprobe::kExitUsage;
  }
  gpuprobe::ClientContext context;
  context.params = std::move(params);
  context.server = absl::GetFlag(FLAGS_server);
  std::string_view server_source = "--server";
  if (context.server.empty()) {
    context.server = FlagOrEnv("", "GPUPROBE_SERVER");
    server_source = "GPUPROBE_SERVER";
  }
  if (context.server.empty()) context.server = "127.0.0.1:7070";
  if (absl::StatusOr<gpuprobe::HostPort> server =
          gpuprobe::ParseHostPort(server_source, context.server, /*min_port=*/1);
      !server.ok()) {
    std::cerr << "gpuprobe: " << server.status().message() << "\n";
    return gpuprobe::kExitUsage;
  }
  context.format = absl::GetFlag(FLAGS_format);
  if (context.format != "table" && context.format != "tsv" && context.format != "csv" &&
      context.format != "json") {
    std::cerr << "gpuprobe: --format: \"" << context.format
              << "\" is not one of table, tsv, csv, json\n";
    return gpuprobe::kExitUsage;
  }
  context.token = FlagOrEnv(absl::GetFlag(FLAGS_token), "GPUPROBE_TOKEN");
  const std::string tls_ca = FlagOrEnv(absl::GetFlag(FLAGS_tls_ca), "GPUPROBE_TLS_CA");
  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  if (!tls_ca.empty()) {
    std::ifstream in(tls_ca);
    std::stringstream pem;
    pem << in.rdbuf();
    if (!in) {
      std::cerr << "gpuprobe: --tls-ca: cannot read " << tls_ca << "\n";
      return gpuprobe::kExitUsage;
    }
    if (pem.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
      std::cerr << "gpuprobe: --tls-ca: " << tls_ca
                << " holds no PEM certificate (-----BEGIN CERTIFICATE-----); it must be the CA "
                   "that signed gpuprobed's --tls-cert\n";
      return gpuprobe::kExitUsage;
    }
    grpc::SslCredentialsOptions options;
    options.pem_root_certs = pem.str();
    credentials = grpc::SslCredentials(options);
  }
  context.channel = grpc::CreateChannel(context.server, credentials);

  const std::string command = positional[1];
  if (command == "compare") {
    if (positional.size() != 4) {
      std::cerr << "gpuprobe: compare needs BASE and CAND\nusage: " << kUsage;
      return gpuprobe::kExitUsage;
    }
    return gpuprobe::CompareCommand(context, positional[2], positional[3]);
  }
  if (positional.size() == 4) {
    std::cerr << "usage: " << kUsage;
    return gpuprobe::kExitUsage;
  }
  const std::string job = positional.size() == 3 ? positional[2] : "";
  if (command == "run") {
    if (job.empty()) {
      std::cerr << "gpuprobe: run needs a PROBE (gpuprobe probes lists them)\nusage: " << kUsage;
      return gpuprobe::kExitUsage;
    }
    return gpuprobe::RunCommand(context, job);
  }
  if (!context.params.empty() && command != "submit") {
    std::cerr << "gpuprobe: --param belongs to run and submit --probe, not " << command << "\n";
    return gpuprobe::kExitUsage;
  }
  const bool wants_job =
      command == "wait" || command == "watch" || command == "show" || command == "cancel";
  if (wants_job != !job.empty()) {
    std::cerr << "gpuprobe: " << command << (wants_job ? " needs a JOB id" : " takes no JOB")
              << "\nusage: " << kUsage;
    return gpuprobe::kExitUsage;
  }
  if (command == "sweep") return gpuprobe::SweepCommand(context);
  if (command == "check") return gpuprobe::CheckCommand(context);
  if (command == "submit") return gpuprobe::SubmitCommand(context);
  if (command == "wait") return gpuprobe::WaitCommand(context, job);
  if (command == "watch") return gpuprobe::WatchCommand(context, job);
  if (command == "jobs") return gpuprobe::JobsCommand(context);
  if (command == "show") return gpuprobe::ShowCommand(context, job);
  if (command == "cancel") return gpuprobe::CancelCommand(context, job);
  if (command == "info") return gpuprobe::InfoCommand(context);
  if (command == "probes") return gpuprobe::ProbesCommand(context);
  std::cerr << "gpuprobe: unknown command \"" << command << "\"\nusage: " << kUsage;
  return gpuprobe::kExitUsage;
}
