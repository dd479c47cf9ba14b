// What every printed row of a job carries so that a script can tell whose it is: the job's id,
// its probe and its labels (csv rows: the job_id, probe and labels columns; json rows: job_id).
//
//   printer.Identify(IdentityOf(record));
#pragma once

#include <string>

#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

struct JobIdentity {
  std::string job_id;
  std::string probe;   // "moe-union", "read-bandwidth", ...
  std::string labels;  // KEY=VALUE,KEY2=VALUE2 by key, as `--label` takes them
};

// The labels as `--label` takes them, sorted by key.
std::string LabelsText(const google::protobuf::Map<std::string, std::string>& labels);

// A stored job's identity, from its record.
JobIdentity IdentityOf(const v1::Job& job);

}  // namespace gpuprobe
