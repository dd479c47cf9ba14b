// The printer of a job's results, chosen by its probe: moe-union's (SweepPrinter, the seed's
// table in tsv), any probe's checks (CheckPrinter), every other probe's (ResultPrinter).
//
//   ASSIGN_OR_RETURN(JobPrinter printer, JobPrinter::For("table", std::cout, IdentityOf(job),
//                                                       job.check()));
//   StreamJob(context, *stream, printer.Handlers());
#pragma once

#include <memory>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "client/check_printer.h"
#include "client/job_identity.h"
#include "client/job_stream.h"
#include "client/result_printer.h"
#include "client/sweep_printer.h"

namespace gpuprobe {

class JobPrinter {
 public:
  // INVALID_ARGUMENT for an unknown format.
  static absl::StatusOr<JobPrinter> For(const std::string& format, std::ostream& out,
                                        const JobIdentity& job, bool check);

  // Handlers that print the job's started, results and finished events.
  EventHandlers Handlers();
  // One stored or streamed event (the others are ignored).
  void Print(const v1::JobEvent& event);

 private:
  std::unique_ptr<SweepPrinter> rows_;
  std::unique_ptr<CheckPrinter> checks_;
  std::unique_ptr<ResultPrinter> results_;
};

}  // namespace gpuprobe
