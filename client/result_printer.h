// Prints the generic results of any probe that does not report Rows (gpuprobe.v1.Result), as
// they arrive, in the four formats, from what each result names (axes, metrics with their
// units, derived values):
//   table  aligned columns for people: the axes, each metric's median and spread, the derived
//          values; the device and the end of the job on lines of their own
//   tsv    the same columns tab-separated, `#` comment lines for the device and the end
//   csv    one header line; the job (job_id, probe, labels, then each resolved parameter by
//          its name), the axes, per metric its median, min, max, spread, 95% interval and kept
//          reps, the derived values, disturbance, verdict (against the arm the probe compares
//          it with), impossible (a time its declared bytes rule out) and sampling_end
//   json   one object per result per line (protobuf's JSON mapping of gpuprobe.v1.Result)
//
//   ResultPrinter printer("table", std::cout);
//   printer.Result(event.result());
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "client/job_identity.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

class ResultPrinter {
 public:
  ResultPrinter(std::string format, std::ostream& out) : format_(std::move(format)), out_(out) {}
  // Whose results these are (before the first Result).
  void Identify(JobIdentity job) { job_ = std::move(job); }
  void Started(const v1::JobStarted& started);
  void Result(const v1::Result& result);
  void Finished(const v1::JobFinished& finished);

 private:
  void Line(const std::vector<std::string>& cells);

  const std::string format_;
  std::ostream& out_;
  JobIdentity job_;
  std::vector<v1::ParamText> params_;  // the job's resolved parameters (csv columns)
  bool header_printed_ = false;
  std::vector<size_t> widths_;
};

}  // namespace gpuprobe
