// Prints a moe-union sweep's events as they arrive (one Result per arm), in one of four formats:
//   table  aligned columns for people (the default)
//   tsv    the seed probe's table, column for column, with its `#` comment lines
//   csv    the job (job_id, probe, labels), its resolved sweep, and every value of each arm, one
//          header line (README "The columns")
//   json   one object per arm per line (protobuf's JSON mapping of gpuprobe.v1.Result)
//
//   ASSIGN_OR_RETURN(std::unique_ptr<SweepPrinter> printer, MakeSweepPrinter("tsv", std::cout));
//   printer->Identify(IdentityOf(job));  // before Started
//   printer->Started(event.started());
#pragma once

#include <memory>
#include <ostream>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "client/job_identity.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

class SweepPrinter {
 public:
  virtual ~SweepPrinter() = default;
  // Whose arms these are (csv and json print it in every line).
  void Identify(JobIdentity job) { job_ = std::move(job); }
  virtual void Started(const v1::JobStarted& started) = 0;
  virtual void Result(const v1::Result& result) = 0;
  virtual void Finished(const v1::JobFinished& finished) = 0;

 protected:
  const JobIdentity& job() const { return job_; }

 private:
  JobIdentity job_;
};

// INVALID_ARGUMENT for an unknown format name.
absl::StatusOr<std::unique_ptr<SweepPrinter>> MakeSweepPrinter(std::string_view format,
                                                               std::ostream& out);

}  // namespace gpuprobe
