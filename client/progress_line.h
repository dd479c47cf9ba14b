// A progress line on stderr while a command follows a job, for people at a terminal: "\r"
// rewrites it in place, Clear() erases it before anything else is printed. Off a terminal it
// prints nothing, so scripts' stderr holds only messages.
//
//   ProgressLine progress;
//   progress.Show(ProgressText(job_id, event.progress()));
#pragma once

#include <unistd.h>

#include <iostream>
#include <string>

#include "absl/strings/str_format.h"
#include "gpuprobe/v1/probe.pb.h"

namespace gpuprobe {

class ProgressLine {
 public:
  ProgressLine() : enabled_(isatty(STDERR_FILENO) == 1) {}
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { Clear(); }

  void Show(const std::string& text) {
    if (!enabled_) return;
    std::cerr << "\r\033[K" << text << std::flush;
    shown_ = true;
  }
  void Clear() {
    if (!shown_) return;
    std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  const bool enabled_;
  bool shown_ = false;
};

// "job job-3: rep 12/40, 3.1 s, about 7.2 s left": reps done of the total, the time since the
// job started, and the time left at the pace so far (the total is the most reps it may take
// when it samples to a precision, so the job may end sooner).
inline std::string ProgressText(const std::string& job_id, const v1::JobProgress& p) {
  std::string text = absl::StrFormat("job %s: rep %d/%d, %.1f s", job_id, p.reps_done(),
                                     p.reps_total(), p.elapsed_s());
  if (p.reps_done() > 0 && p.reps_total() >= p.reps_done()) {
    absl::StrAppendFormat(&text, ", about %.1f s left",
                          p.elapsed_s() * (p.reps_total() - p.reps_done()) / p.reps_done());
  }
  return text;
}

}  // namespace gpuprobe
