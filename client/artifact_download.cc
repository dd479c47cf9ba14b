#include "client/artifact_download.h"

#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "client/exit_codes.h"
#include "client/job_stream.h"

namespace gpuprobe {
namespace {

// A plain file name: whatever the server sends, nothing is written outside DIR.
bool IsPlainName(const std::string& name) {
  if (name.empty() || name.size() > 100 || name[0] == '.') return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

}  // namespace

int DownloadArtifacts(const ClientContext& context, const std::string& job_id,
                      const std::string& dir) {
  auto stub = v1::ProbeService::NewStub(context.channel);
  v1::ListArtifactsResponse list;
  {
    grpc::ClientContext rpc;
    context.Prepare(rpc);
    v1::ListArtifactsRequest request;
    request.set_job_id(job_id);
    const grpc::Status status = stub->ListArtifacts(&rpc, request, &list);
    if (!status.ok()) return ReportRpcError(context, status);
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::cerr << "gpuprobe: --dump: cannot create " << dir << ": " << ec.message() << "\n";
    return kExitJobFailed;
  }
  uint64_t total = 0;
  for (const v1::Artifact& artifact : list.artifacts()) {
    if (!IsPlainName(artifact.name())) {
      std::cerr << "gpuprobe: --dump: skipping an artifact with an unusable name\n";
      continue;
    }
    const std::string path = dir + "/" + artifact.name();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) {
      std::cerr << "gpuprobe: --dump: cannot write " << path << "\n";
      return kExitJobFailed;
    }
    grpc::ClientContext rpc;
    context.Prepare(rpc);
    v1::GetArtifactRequest request;
    request.set_job_id(job_id);
    request.set_name(artifact.name());
    std::unique_ptr<grpc::ClientReader<v1::ArtifactChunk>> reader =
        stub->GetArtifact(&rpc, request);
    v1::ArtifactChunk chunk;
    while (reader->Read(&chunk)) {
      out.write(chunk.data().data(), static_cast<std::streamsize>(chunk.data().size()));
      total += chunk.data().size();
    }
    if (const grpc::Status status = reader->Finish(); !status.ok()) {
      return ReportRpcError(context, status);
    }
    if (!out.flush()) {
      std::cerr << "gpuprobe: --dump: short write to " << path << "\n";
      return kExitJobFailed;
    }
  }
  std::cerr << absl::StrFormat("gpuprobe: %d artifacts of %s (%d bytes) in %s\n",
                               list.artifacts_size(), job_id, total, dir);
  return kExitOk;
}

}  // namespace gpuprobe
