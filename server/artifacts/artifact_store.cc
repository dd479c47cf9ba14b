#include "server/artifacts/artifact_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/abbreviated.h"
#include "common/status_macros.h"

namespace gpuprobe {
namespace {

namespace fs = std::filesystem;

// Sequence number of a job id ("job-12" -> 12), for oldest-first retention.
int64_t JobSeq(absl::string_view id) {
  int64_t seq = 0;
  return absl::SimpleAtoi(id.substr(4), &seq) ? seq : 0;
}

// Bytes of the regular files directly in `dir` (links are not followed).
int64_t DirBytes(const fs::path& dir) {
  std::error_code ec;
  int64_t bytes = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec) && !e.is_symlink(ec)) bytes += static_cast<int64_t>(e.file_size(ec));
  }
  return bytes;
}

// The job directories under `root`, oldest job first.
std::vector<fs::path> JobDirs(const fs::path& root) {
  std::error_code ec;
  std::vector<fs::path> dirs;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    if (e.is_directory(ec) && !e.is_symlink(ec) && IsJobId(e.path().filename().string())) {
      dirs.push_back(e.path());
    }
  }
  std::sort(dirs.begin(), dirs.end(), [](const fs::path& a, const fs::path& b) {
    return JobSeq(a.filename().string()) < JobSeq(b.filename().string());
  });
  return dirs;
}

// Makes `path` a real directory (mode 0700), refusing a symbolic link in its place.
absl::Status MakeDirectory(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::PermissionDeniedError(
        absl::StrCat("artifacts: cannot create ", path, ": ", std::strerror(errno)));
  }
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("artifacts: ", path, " is not a plain directory"));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsJobId(absl::string_view id) {
  if (!absl::StartsWith(id, "job-") || id.size() < 5 || id.size() > 24) return false;
  return std::all_of(id.begin() + 4, id.end(), [](char c) { return absl::ascii_isdigit(c); });
}

absl::Status CheckJobId(absl::string_view id) {
  if (IsJobId(id)) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat("job_id: no job \"", Abbreviated(id), "\""));
}

bool IsArtifactName(absl::string_view name) {
  if (name.empty() || name.size() > 100 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

ArtifactStore::ArtifactStore(std::string root, int64_t max_bytes)
    : root_(std::move(root)), max_bytes_(max_bytes) {}

int64_t ArtifactStore::TotalBytes() const {
  int64_t total = 0;
  for (const fs::path& dir : JobDirs(root_)) total += DirBytes(dir);
  return total;
}

absl::StatusOr<std::string> ArtifactStore::PrepareJob(const std::string& job_id,
                                                      int64_t estimated_bytes) {
  if (!IsJobId(job_id)) return absl::InvalidArgumentError("artifacts: not a job id");
  if (estimated_bytes > max_bytes_) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "dump: about %d bytes of artifacts, more than the limit of %d (--max-artifact-bytes)",
        estimated_bytes, max_bytes_));
  }
  RETURN_IF_ERROR(MakeDirectory(root_));
  const std::string dir = root_ + "/" + job_id;
  std::error_code ec;
  fs::remove_all(dir, ec);  // an earlier attempt's files (remove_all does not follow links)
  // Retention: oldest jobs' artifacts go first, until the new ones fit.
  int64_t total = TotalBytes();
  for (const fs::path& old : JobDirs(root_)) {
    if (total + estimated_bytes <= max_bytes_) break;
    total -= DirBytes(old);
    fs::remove_all(old, ec);
  }
  RETURN_IF_ERROR(MakeDirectory(dir));
  return dir;
}

absl::StatusOr<std::vector<v1::Artifact>> ArtifactStore::List(const std::string& job_id) const {
  std::vector<v1::Artifact> artifacts;
  if (!IsJobId(job_id)) return artifacts;
  std::error_code ec;
  const fs::path dir = fs::path(root_) / job_id;
  if (fs::is_symlink(dir, ec) || !fs::is_directory(dir, ec)) return artifacts;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_symlink(ec) && e.is_regular_file(ec) && IsArtifactName(name)) {
      v1::Artifact& a = artifacts.emplace_back();
      a.set_name(name);
      a.set_bytes(e.file_size(ec));
    }
  }
  std::sort(artifacts.begin(), artifacts.end(),
            [](const v1::Artifact& a, const v1::Artifact& b) { return a.name() < b.name(); });
  return artifacts;
}

absl::StatusOr<std::unique_ptr<ArtifactReader>> ArtifactStore::Open(const std::string& job_id,
                                                                    const std::string& name) const {
  if (!IsJobId(job_id) || !IsArtifactName(name)) {
    return absl::NotFoundError("name: no such artifact of the job");
  }
  const std::string dir = root_ + "/" + job_id;
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dir_fd < 0) return absl::NotFoundError("job_id: the job kept no artifacts");
  const int fd = openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  close(dir_fd);
  if (fd < 0) return absl::NotFoundError("name: no such artifact of the job");
  auto reader = std::make_unique<ArtifactReader>(fd);
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return absl::NotFoundError("name: no such artifact of the job");
  }
  return reader;
}

ArtifactReader::~ArtifactReader() { close(fd_); }

absl::StatusOr<std::string> ArtifactReader::Next(size_t max_bytes) {
  std::string buffer(max_bytes, '\0');
  while (true) {
    const ssize_t n = read(fd_, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::DataLossError(absl::StrCat("artifact: ", std::strerror(errno)));
    buffer.resize(static_cast<size_t>(n));
    return buffer;
  }
}

}  // namespace gpuprobe
