#include "client/artifact_download.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
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

// A file written beside its final name and renamed onto it once complete. It is created with
// O_EXCL | O_NOFOLLOW, and the rename replaces a name, never a file a link points at: nothing
// planted in DIR is written through.
class NewFile {
 public:
  explicit NewFile(std::string path) : path_(std::move(path)), temp_(path_ + ".XXXXXX") {}
  ~NewFile() {
    if (fd_ >= 0) close(fd_);
    if (!done_) unlink(temp_.c_str());
  }
  absl::Status Open() {
    struct stat st;
    if (lstat(path_.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrCat(path_, " is a symbolic link; gpuprobe does not write through one"));
    }
    fd_ = mkostemp(temp_.data(), O_CLOEXEC);  // O_CREAT | O_EXCL, mode 0600
    if (fd_ < 0) return Error("cannot create", temp_);
    return absl::OkStatus();
  }
  absl::Status Write(const std::string& bytes) {
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = write(fd_, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Error("cannot write", temp_);
      done += static_cast<size_t>(n);
    }
    return absl::OkStatus();
  }
  absl::Status Finish() {
    if (close(std::exchange(fd_, -1)) != 0) return Error("cannot write", temp_);
    if (rename(temp_.c_str(), path_.c_str()) != 0) return Error("cannot rename onto", path_);
    done_ = true;
    return absl::OkStatus();
  }

 private:
  static absl::Status Error(absl::string_view what, const std::string& path) {
    return absl::PermissionDeniedError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
  }
  const std::string path_;
  std::string temp_;
  int fd_ = -1;
  bool done_ = false;
};

}  // namespace

absl::Status CheckDumpDir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("--dump: ", dir, " is not a directory"));
  }
  return absl::OkStatus();
}

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
    NewFile out(dir + "/" + artifact.name());
    if (absl::Status opened = out.Open(); !opened.ok()) {
      std::cerr << "gpuprobe: --dump: " << opened.message() << "\n";
      return kExitUsage;
    }
    grpc::ClientContext rpc;
    context.Prepare(rpc);
    v1::GetArtifactRequest request;
    request.set_job_id(job_id);
    request.set_name(artifact.name());
    std::unique_ptr<grpc::ClientReader<v1::ArtifactChunk>> reader =
        stub->GetArtifact(&rpc, request);
    v1::ArtifactChunk chunk;
    absl::Status written;
    while (reader->Read(&chunk)) {
      if (written.ok()) written = out.Write(chunk.data());
      total += chunk.data().size();
    }
    if (const grpc::Status status = reader->Finish(); !status.ok()) {
      return ReportRpcError(context, status);
    }
    if (written.ok()) written = out.Finish();
    if (!written.ok()) {
      std::cerr << "gpuprobe: --dump: " << written.message() << "\n";
      return kExitJobFailed;
    }
  }
  std::cerr << absl::StrFormat("gpuprobe: %d artifacts of %s (%d bytes) in %s\n",
                               list.artifacts_size(), job_id, total, dir);
  return kExitOk;
}

}  // namespace gpuprobe
