// Prints an exactness job's results as they arrive: one line per (variant, union, kernel) of a
// moe-union check, per kernel and arm (its axes, e.g. size_bytes) of another probe's.
// `json` prints protobuf's JSON mapping of gpuprobe.v1.KernelCheck, one object per line (its
// job_id and seed included); `csv` a header and the same columns led by
// job_id (and seed, or a generic check's probe and labels); `tsv` the columns tab-separated;
// `table` aligned columns for people.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<CheckPrinter> p, MakeCheckPrinter("table", std::cout));
#pragma once

#include <memory>
#include <ostream>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "client/job_identity.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

class CheckPrinter {
 public:
  explicit CheckPrinter(std::string_view format, std::ostream& out) : format_(format), out_(out) {}
  // Whose checks these are (before Started).
  void Identify(JobIdentity job) { job_ = std::move(job); }
  void Started(const v1::JobStarted& started);
  void Check(const v1::KernelCheck& check);
  void Finished(const v1::JobFinished& finished);

 private:
  void Cells(const std::vector<std::string>& cells);

  std::string format_;
  std::ostream& out_;
  JobIdentity job_;
  v1::ResolvedSweep sweep_;
  bool criteria_printed_ = false;
  bool generic_ = false;  // another probe's check: kernel, axes, result, detail
  bool generic_header_printed_ = false;
};

// INVALID_ARGUMENT for an unknown format name.
absl::StatusOr<std::unique_ptr<CheckPrinter>> MakeCheckPrinter(std::string_view format,
                                                               std::ostream& out);

}  // namespace gpuprobe
