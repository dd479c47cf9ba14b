// gpuprobe: the command-line client of gpuprobed.
//
//   gpuprobe [--server HOST:PORT] [--format table|tsv|csv|json|markdown] COMMAND [flags]
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <variant>

#include "client/cli.h"
#include "client/exit_codes.h"
#include "common/host_port.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"

namespace {

// The flag's value, else the environment variable's, else empty.
std::string FlagOrEnv(const std::string& flag, const char* env) {
  if (!flag.empty()) return flag;
  const char* value = std::getenv(env);
  return value != nullptr ? value : "";
}

}  // namespace

int main(int argc, char** argv) {
  std::variant<gpuprobe::CommandLine, int> parsed = gpuprobe::ParseCommandLine(argc, argv);
  if (const int* exit_code = std::get_if<int>(&parsed)) return *exit_code;
  const gpuprobe::CommandLine& line = std::get<gpuprobe::CommandLine>(parsed);
  const gpuprobe::ClientFlags& flags = line.flags;
  gpuprobe::ClientContext context;
  context.flags = &flags;
  context.server = flags.server;
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
  context.format = flags.format;
  // markdown: a summary for a pull-request comment, of the commands that print verdicts.
  const bool markdown = context.format == "markdown" &&
                        (line.command.name == "kernel" || line.command.name == "compare");
  if (context.format != "table" && context.format != "tsv" && context.format != "csv" &&
      context.format != "json" && !markdown) {
    std::cerr << "gpuprobe: --format: \"" << context.format
              << "\" is not one of table, tsv, csv, json (and markdown for kernel and compare)\n";
    return gpuprobe::kExitUsage;
  }
  context.token = FlagOrEnv(flags.token, "GPUPROBE_TOKEN");
  const std::string tls_ca = FlagOrEnv(flags.tls_ca, "GPUPROBE_TLS_CA");
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
  // Whatever the daemon has stored reads back, however large a row an old store holds.
  grpc::ChannelArguments arguments;
  arguments.SetMaxReceiveMessageSize(-1);
  context.channel = grpc::CreateCustomChannel(context.server, credentials, arguments);

  return line.command.run(context, line.args);
}
