#include "client/flag_groups.h"

namespace gpuprobe {

CLI::Option* ListFlag(CLI::App& app, const std::string& name, std::vector<std::string>& into,
                      const std::string& help, const std::string& type_name) {
  return app.add_option(name, into, help)
      ->delimiter(',')
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name(type_name);
}

void GeometryFlags(CLI::App& app, ClientFlags& f, bool check) {
  OptionalFlag(app, "--experts", f.experts,
               "experts in the banks (default $MEMRA_MOEU_EXPERTS, else 512)");
  OptionalFlag(app, "--hidden", f.hidden,
               "model width, a multiple of 16 (default $MEMRA_MOEU_HIDDEN, else 2560)");
  OptionalFlag(app, "--ff", f.ff,
               "expert width, a multiple of 16 (default $MEMRA_MOEU_FF, else 640)");
  OptionalFlag(app, "--selected", f.selected,
               "experts per token (default $MEMRA_MOEU_SELECTED, else 10)");
  OptionalFlag(
      app, "--t", f.t,
      check ? "the chunk's token count (default $MEMRA_MOEU_T, else 6)"
            : "largest token count; the sweep covers t = 1..T (default $MEMRA_MOEU_T, else 6)");
  ListFlag(app, "--unions", f.unions,
           "explicit union sizes, each measured at every t where it fits "
           "(selected..t*selected), e.g. 10,30,60 (default selected, 2*selected, ..., "
           "t*selected)",
           "U,U");
  ListFlag(app, "--variant", f.variant,
           check ? "per-slot, union, floor, floor-distinct, or all (default all)"
                 : "per-slot (default), union, floor, floor-distinct, or all",
           "V,V");
  OptionalFlag(app, "--seed", f.seed,
               check ? "seed of banks, activations, routing (default a fresh one, printed)"
                     : "seed of banks, activations, routing (default 1)");
  ListFlag(app, "--label", f.label, "labels stored with the job: k=v,k2=v2", "K=V");
}

void SweepFlags(CLI::App& app, ClientFlags& f) {
  GeometryFlags(app, f, /*check=*/false);
  ListFlag(app, "--t-values", f.t_values, "explicit token counts, e.g. 1,3,6", "T,T");
  OptionalFlag(app, "--reps", f.reps,
               "reps per arm including the throwaway rep 0 (default $MEMRA_MOEU_REPS, else 20)");
  app.add_option("--timing", f.timing, "events (default) or graph");
  app.add_option("--cache", f.cache, "warm (default) or cold");
  app.add_option("--order", f.order,
                 "arms within each rep: fixed (default, the seed's), rotate, or shuffle (seeded)");
  app.add_option("--precision", f.precision,
                 "sample until every arm's gate+up and down medians have a 95% interval within "
                 "this share of the median (e.g. 0.5% or 0.005; --reps is then the least number "
                 "of reps); default: exactly --reps");
  OptionalFlag(app, "--max-seconds", f.max_seconds,
               "with --precision: stop sampling after this many seconds of measuring (default 60)");
  OptionalFlag(app, "--blocks", f.blocks,
               "independent blocks of reps, each on weight banks moved to fresh device memory "
               "(default 1, at most 64); compare judges two jobs of 3 or more blocks by the spread "
               "between their blocks");
  app.add_flag("--require-clean", f.require_clean,
               "fail the job when telemetry sees a throttle reason or another compute process on "
               "the device (default: record and flag the rows)");
}

void ProbeFlags(CLI::App& app, ClientFlags& f) {
  app.add_option("--param", f.params,
                 "NAME=VALUE, a parameter of the probe (repeatable; `gpuprobe probes` lists "
                 "them; a value may hold commas)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("NAME=VALUE");
  app.add_flag("--check", f.check, "the probe's exactness check instead of timing");
}

void JobArgument(CLI::App& app, std::vector<std::string>& args) {
  app.add_option("JOB", args, "the job's id (e.g. job-7)")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::Throw);
}

}  // namespace gpuprobe
