// `gpuprobe upload FILE...`: compiled CUDA modules (cubin, fatbin, PTX) stored in the daemon for
// the kernel probe. Each file is checked here first (InspectModule), then sent only where the
// daemon does not have its bytes yet (GetModule by its sha256).
#include "client/module_commands.h"

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/csv.h"
#include "client/exit_codes.h"
#include "client/job_stream.h"
#include "client/proto_names.h"
#include "client/subcommands.h"
#include "common/api_json.h"
#include "common/module_inspection.h"

namespace gpuprobe {
namespace {

constexpr size_t kChunkBytes = size_t{1} << 20;

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrFormat("%s: cannot be read", path));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// The daemon's record of the module, sending its bytes where it has none.
grpc::Status Upload(const ClientContext& context, const v1::Module& local, const std::string& bytes,
                    v1::Module* stored) {
  auto stub = v1::ProbeService::NewStub(context.channel);
  {
    grpc::ClientContext rpc;
    context.Prepare(rpc);
    rpc.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::GetModuleRequest get;
    get.set_id(local.id());
    grpc::Status found = stub->GetModule(&rpc, get, stored);
    if (found.ok()) {
      stored->set_already_stored(true);
      return found;
    }
    if (found.error_code() != grpc::StatusCode::NOT_FOUND) return found;
  }
  grpc::ClientContext rpc;
  context.Prepare(rpc);
  std::unique_ptr<grpc::ClientWriter<v1::ModuleChunk>> writer = stub->UploadModule(&rpc, stored);
  v1::ModuleChunk chunk;
  for (size_t at = 0; at < bytes.size(); at += kChunkBytes) {
    chunk.set_data(bytes.substr(at, kChunkBytes));
    if (!writer->Write(chunk)) break;  // the daemon ended the call: Finish says why
  }
  writer->WritesDone();
  return writer->Finish();
}

int UploadCommand(const ClientContext& context, const std::vector<std::string>& files) {
  std::vector<std::pair<std::string, v1::Module>> uploaded;
  for (const std::string& file : files) {
    v1::Module stored;
    if (const int code = UploadModuleFile(context, file, &stored); code != kExitOk) return code;
    uploaded.emplace_back(file, std::move(stored));
  }
  if (context.format == "json") {
    std::vector<std::string> modules;
    for (const auto& [file, module] : uploaded) modules.push_back(ApiJson(module));
    std::cout << "[" << absl::StrJoin(modules, ",") << "]\n";
    return kExitOk;
  }
  const bool table = context.format != "csv" && context.format != "tsv";
  auto line = [&](const std::vector<std::string>& cells) {
    if (table) return absl::StrJoin(cells, "  ") + "\n";
    return context.format == "csv" ? CsvLine(cells) : absl::StrJoin(cells, "\t") + "\n";
  };
  if (!table)
    std::cout << line({"file", "id", "format", "size_bytes", "kernels", "already_stored"});
  for (const auto& [file, module] : uploaded) {
    std::vector<std::string> kernels;
    for (const v1::ModuleKernel& k : module.kernels()) kernels.push_back(k.name());
    if (table) {
      std::cout << absl::StrFormat(
          "%s  %s  %s, %d bytes, %s%s\n", module.id(), file, CliName(module.format()),
          module.size_bytes(), kernels.empty() ? "no kernel listed" : absl::StrJoin(kernels, " "),
          module.already_stored() ? " (already stored)" : "");
    } else {
      std::cout << line({file, module.id(), CliName(module.format()),
                         absl::StrCat(module.size_bytes()), absl::StrJoin(kernels, " "),
                         module.already_stored() ? "true" : "false"});
    }
  }
  return kExitOk;
}

}  // namespace

int UploadModuleFile(const ClientContext& context, const std::string& file, v1::Module* stored) {
  absl::StatusOr<std::string> bytes = ReadFile(file);
  if (!bytes.ok()) return UsageError(bytes.status());
  absl::StatusOr<v1::Module> local = InspectModule(*bytes);
  if (!local.ok()) {
    return UsageError(
        absl::InvalidArgumentError(absl::StrCat(file, ": ", local.status().message())));
  }
  if (grpc::Status s = Upload(context, *local, *bytes, stored); !s.ok()) {
    std::cerr << "gpuprobe: " << file << ":\n";
    return ReportRpcError(context, s);
  }
  return kExitOk;
}

Subcommand UploadSubcommand() {
  return {.name = "upload",
          .help =
              "store compiled CUDA modules (cubin, fatbin, PTX) for the kernel probe; prints "
              "each one's id",
          .bind =
              [](CLI::App& app, ClientFlags&, std::vector<std::string>& args) {
                app.add_option("FILE", args, "a module: nvcc -cubin, -fatbin or -ptx output")
                    ->required()
                    ->check(CLI::ExistingFile);
              },
          .run = [](const ClientContext& c,
                    const std::vector<std::string>& files) { return UploadCommand(c, files); }};
}

}  // namespace gpuprobe
