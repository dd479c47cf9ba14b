#include "client/progress_line.h"

#include "gtest/gtest.h"

namespace gpuprobe {
namespace {

v1::JobProgress Progress(uint32_t done, uint32_t total, double elapsed_s) {
  v1::JobProgress p;
  p.set_reps_done(done);
  p.set_reps_total(total);
  p.set_elapsed_s(elapsed_s);
  return p;
}

TEST(ProgressTextTest, SaysRepsDoneOfTheTotalTheTimeElapsedAndTheTimeLeftAtThePaceSoFar) {
  EXPECT_EQ(ProgressText("job-3", Progress(10, 40, 2.0)),
            "job job-3: rep 10/40, 2.0 s, about 6.0 s left");
  EXPECT_EQ(ProgressText("job-3", Progress(40, 40, 8.0)),
            "job job-3: rep 40/40, 8.0 s, about 0.0 s left");
  // Before the first rep there is no pace to go by.
  EXPECT_EQ(ProgressText("job-3", Progress(0, 40, 0.5)), "job job-3: rep 0/40, 0.5 s");
}

}  // namespace
}  // namespace gpuprobe
