// Files that jobs leave for their clients (an exactness check's .npy dump), kept only under the
// daemon's own storage: DATA_DIR/artifacts/JOB/NAME, with names the daemon chooses. No request
// names a path; directories and files are created new, never through a symbolic link, and read
// back only by names that are plain file names inside a job's directory.
//
// Bounded: the whole tree may hold at most `max_bytes`. Before a job writes, the oldest jobs'
// artifacts are removed until the new job's estimated bytes fit (retention: newest first, up to
// the bound); a job whose estimate alone is larger is refused when it is submitted.
//
//   ArtifactStore artifacts(data_dir + "/artifacts", int64_t{4} << 30);
//   ASSIGN_OR_RETURN(std::string dir, artifacts.PrepareJob("job-7", estimate));
//   ASSIGN_OR_RETURN(std::vector<v1::Artifact> files, artifacts.List("job-7"));
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

// One artifact open for reading (the descriptor is closed with it).
class ArtifactReader {
 public:
  explicit ArtifactReader(int fd) : fd_(fd) {}
  ArtifactReader(const ArtifactReader&) = delete;
  ArtifactReader& operator=(const ArtifactReader&) = delete;
  ~ArtifactReader();
  // The next bytes, at most `max_bytes`; empty at the end.
  absl::StatusOr<std::string> Next(size_t max_bytes);

 private:
  const int fd_;
};

class ArtifactStore {
 public:
  ArtifactStore(std::string root, int64_t max_bytes);

  int64_t max_bytes() const { return max_bytes_; }

  // A fresh, empty directory for the job's artifacts (an earlier attempt's files are removed),
  // after removing the oldest other jobs' artifacts until `estimated_bytes` more fit.
  absl::StatusOr<std::string> PrepareJob(const std::string& job_id, int64_t estimated_bytes);

  // The job's artifacts, sorted by name; none when it kept none.
  absl::StatusOr<std::vector<gpuprobe::v1::Artifact>> List(const std::string& job_id) const;

  // NOT_FOUND for a name that is no artifact of the job.
  absl::StatusOr<std::unique_ptr<ArtifactReader>> Open(const std::string& job_id,
                                                       const std::string& name) const;

  // Total bytes stored now.
  int64_t TotalBytes() const;

 private:
  const std::string root_;
  const int64_t max_bytes_;
};

// Job ids are the daemon's own ("job-" and digits): anything else names no job.
bool IsJobId(absl::string_view id);
// A job id in a request: OK for the daemon's own form, else NOT_FOUND quoting a short prefix.
absl::Status CheckJobId(absl::string_view id);
// An artifact name: 1..100 of [A-Za-z0-9._-], not starting with a dot.
bool IsArtifactName(absl::string_view name);

}  // namespace gpuprobe
