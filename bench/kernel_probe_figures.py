#!/usr/bin/env python3
"""The kernel probe's figures on a GPU host (issue 54), through a daemon of the bundle and its CLI:

  fidelity     stream_read (tests/testdata/modules/probe_kernels.cu) at 16 MiB, 256 MiB and
               4 GiB, timed three ways: as a cubin through the kernel probe (warm: samples as
               the probe sizes them, and of 10 runs, graphLaunches), by the built-in
               read-bandwidth probe (its own floor kernel), and by Triton's do_bench_cudagraph
               (rep 20 ms, its default, and 500 ms) on the same cubin loaded with CuPy; graph
               timing, warm (and cold, probes only)
  fidelity-l2  stream_read at 16 MiB (in the L2), the kernel probe (sized samples, and 10 runs)
               and do_bench_cudagraph (rep 20 ms and 500 ms) alternated over 8 rounds, so that
               all see the same clocks: each round's figures, the ratios to do_bench at its
               default, and the medians
  sensitivity  20 jobs of stream_read (256 MiB) against itself with a 1% tail spin at a 0.5%
               threshold, and 20 of it against the same code in another cubin at 1%
  faults       a kernel that never ends, an illegal address and a trap, each followed by a
               clean job: how each job ended, and how long until the next one ran
  triton       a Triton kernel's cubin (compiled.asm["cubin"]) checked against copy_scale and
               timed against it

Writes OUT_DIR/*.json (each part's raw records), OUT_DIR/daemon.log and prints a summary.
usage: bench/kernel_probe_figures.py BUNDLE_DIR OUT_DIR [PART...]
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

MIB = 1 << 20
BLOCKS_PER_SM = 4  # as the read-bandwidth floor kernel (kernels/read_floor.h)
THREADS = 512


def start_daemon(bundle, work):
    log = open(os.path.join(work, "daemon.log"), "w")
    daemon = subprocess.Popen(
        [os.path.join(bundle, "bin", "gpuprobed"), "--listen", "127.0.0.1:0", "--backend",
         "cuda", "--http", "", "--data-dir", os.path.join(work, "data")],
        stdout=log, stderr=subprocess.STDOUT)
    for _ in range(600):
        text = open(log.name).read()
        found = re.search(r"gpuprobed \S+ listening on (\S+)", text)
        if found:
            return daemon, found.group(1)
        if daemon.poll() is not None:
            break
        time.sleep(0.1)
    sys.exit("gpuprobed did not start:\n" + open(log.name).read())


class Cli:
    def __init__(self, bundle, server, work):
        self.binary = os.path.join(bundle, "bin", "gpuprobe")
        self.env = dict(os.environ, GPUPROBE_SERVER=server)
        self.work = work

    def run(self, *args, fmt="json"):
        started = time.time()
        done = subprocess.run([self.binary, "--format", fmt, *args], env=self.env,
                              capture_output=True, text=True)
        return done.returncode, done.stdout, done.stderr, time.time() - started

    def kernel(self, spec, modules, *extra):
        path = os.path.join(self.work, "spec-%d.json" % time.monotonic_ns())
        with open(path, "w") as f:
            json.dump(spec, f)
        args = ["kernel", "--spec", path]
        for name, file in modules.items():
            args += ["--module", "%s=%s" % (name, file)]
        code, out, err, seconds = self.run(*args, *extra)
        results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        return {"exit": code, "results": results, "stderr": err[-2000:], "wall_s": seconds}


def axis(result, name):
    for a in result.get("axes", []):
        if a["name"] == name:
            for key in ("text_value", "textValue", "int_value", "intValue"):
                if key in a:
                    return a[key]
    return None


def derived(result, name):
    for d in result.get("derived", []):
        if d["name"] == name:
            return d.get("value")
    return None


def stream_spec(size, sms, cache="warm", spins=(("read", "k", 0, None),), **params):
    """stream_read over `size` bytes, one arm per (name, module, spin_ns, baseline)."""
    grid = sms * BLOCKS_PER_SM
    spec = {"buffers": [{"name": "in", "dtype": "u32", "count": size // 4,
                         "uniform": {"a": 0, "b": 4e9}},
                        {"name": "out", "dtype": "u32", "count": grid},
                        {"name": "done", "dtype": "u32", "count": 1}],
            "arms": [], "timing": "graph", "cache": cache, "maxLaunchSeconds": 0.05}
    spec.update(params)
    for name, module, spin, baseline in spins:
        arm = {"name": name, "bytesRead": size, "launches": [{
            "module": module, "kernel": "stream_read", "grid": [grid], "block": [THREADS],
            "args": [{"buffer": "in"}, {"buffer": "out"},
                     {"scalar": {"dtype": "i64", "intValue": size // 16}}, {"buffer": "done"},
                     {"scalar": {"dtype": "i64", "intValue": spin}}]}]}
        if baseline:
            arm["baseline"] = baseline
        spec["arms"].append(arm)
    return spec


def do_bench_us(cubin, size, sms, rep=500):
    import cupy
    import torch
    import triton.testing
    module = cupy.RawModule(path=cubin)
    kernel = module.get_function("stream_read")
    grid = sms * BLOCKS_PER_SM
    words = cupy.random.randint(0, 2**31, size // 4, dtype=cupy.uint32)
    out = cupy.zeros(grid, dtype=cupy.uint32)
    done = cupy.zeros(1, dtype=cupy.uint32)

    def launch():
        stream = cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        kernel((grid,), (THREADS,), (words, out, cupy.int64(size // 16), done, cupy.int64(0)),
               stream=stream)

    torch.cuda.synchronize()
    return triton.testing.do_bench_cudagraph(launch, rep=rep, return_mode="median") * 1000.0


def fidelity(cli, modules, sms, out):
    sizes = [16 * MIB, 256 * MIB, 4096 * MIB]
    rows = []
    code, text, err, _ = cli.run(
        "run", "read-bandwidth", "--param", "sizes_bytes=" + ",".join(map(str, sizes)),
        "--param", "default_sizes=false", "--param", "caches=warm,cold", "--param",
        "timing=graph", "--param", "reps=50")
    builtin = {}
    for line in text.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            builtin[(int(axis(r, "size_bytes")), axis(r, "cache"))] = r["metrics"][0]["median"]
    if code != 0:
        print("read-bandwidth failed:", err[-500:])
    for size in sizes:
        for cache in ("warm", "cold"):
            job = cli.kernel(stream_spec(size, sms, cache=cache, reps=50), {"k": modules["plain"]})
            probe_us = job["results"][0]["metrics"][0]["median"] if job["results"] else None
            rows.append({"size": size, "cache": cache, "kernel_probe_us": probe_us,
                         "read_bandwidth_us": builtin.get((size, cache)),
                         "impossible": job["results"][0].get("impossible") if job["results"]
                         else None, "exit": job["exit"], "stderr": job["stderr"][-300:]})
    for row in rows:
        if row["cache"] == "warm":
            ten = cli.kernel(stream_spec(row["size"], sms, reps=50, graphLaunches=10),
                             {"k": modules["plain"]})
            row["kernel_probe_10_runs_us"] = (ten["results"][0]["metrics"][0]["median"]
                                              if ten["results"] else None)
            row["do_bench_20ms_us"] = do_bench_us(modules["plain"], row["size"], sms, rep=20)
            row["do_bench_500ms_us"] = do_bench_us(modules["plain"], row["size"], sms, rep=500)
    json.dump(rows, open(os.path.join(out, "fidelity.json"), "w"), indent=1)
    print("fidelity (us; graph): size cache kernel-probe (10 runs) read-bandwidth "
          "do_bench(20 ms) do_bench(500 ms)")
    for r in rows:
        print("  %5d MiB %-4s %9s %9s %9s %9s %9s" % (
            r["size"] // MIB, r["cache"], fmt(r["kernel_probe_us"]),
            fmt(r.get("kernel_probe_10_runs_us")), fmt(r["read_bandwidth_us"]),
            fmt(r.get("do_bench_20ms_us")), fmt(r.get("do_bench_500ms_us"))))
    return rows


def fidelity_l2(cli, modules, sms, out, rounds=8):
    size = 16 * MIB
    rows = []
    for r in range(rounds):
        row = {"round": r}
        for key, extra in (("kernel_probe_us", {}), ("kernel_probe_10_runs_us",
                                                     {"graphLaunches": 10})):
            job = cli.kernel(stream_spec(size, sms, reps=50, **extra), {"k": modules["plain"]})
            row[key] = job["results"][0]["metrics"][0]["median"] if job["results"] else None
            if not job["results"]:
                row["stderr"] = job["stderr"][-300:]
        row["do_bench_20ms_us"] = do_bench_us(modules["plain"], size, sms, rep=20)
        row["do_bench_500ms_us"] = do_bench_us(modules["plain"], size, sms, rep=500)
        rows.append(row)
    json.dump(rows, open(os.path.join(out, "fidelity-l2.json"), "w"), indent=1)
    keys = ("kernel_probe_us", "kernel_probe_10_runs_us", "do_bench_20ms_us", "do_bench_500ms_us")
    print("fidelity at 16 MiB, alternated (us; graph, warm): round kernel-probe "
          "kernel-probe(10 runs) do_bench(20 ms) do_bench(500 ms); the probe's two over "
          "do_bench(20 ms)")

    def line(label, values):
        ratios = [values[k] / values["do_bench_20ms_us"] if values[k] else None for k in keys[:2]]
        print("  %-6s" % label + "".join(" %9s" % fmt(values[k]) for k in keys) +
              "".join(" %7s" % fmt(x) for x in ratios))

    for r in rows:
        line(r["round"], r)
    line("median", {k: statistics.median(r[k] for r in rows if r[k]) for k in keys})
    return rows


def fmt(v):
    return "-" if v is None else "%.3f" % v


def sensitivity(cli, modules, sms, out, base_us):
    size = 256 * MIB
    spin = int(round(base_us * 10))  # 1% of the median, in ns
    jobs = {"slowdown": [], "identical": []}
    params = {"reps": 30, "blocks": 8, "order": "shuffle"}
    for _ in range(20):
        jobs["slowdown"].append(cli.kernel(
            stream_spec(size, sms, spins=(("base", "k", 0, None), ("slow", "k", spin, "base")),
                        threshold=0.005, **params), {"k": modules["plain"]}))
        jobs["identical"].append(cli.kernel(
            stream_spec(size, sms, spins=(("base", "a", 0, None), ("same", "b", 0, "base")),
                        threshold=0.01, **params), {"a": modules["plain"], "b": modules["extra"]}))
    json.dump({"spin_ns": spin, "jobs": jobs}, open(os.path.join(out, "sensitivity.json"), "w"),
              indent=1)
    for name, wanted in (("slowdown", "slower"), ("identical", "same")):
        ratios, verdicts, holds, walls, codes = [], [], 0, [], set()
        for job in jobs[name]:
            walls.append(job["wall_s"])
            if len(job["results"]) != 2:
                verdicts.append("failed")
                continue
            cand = job["results"][1]
            ratios.append(derived(cand, "vs_baseline"))
            verdicts.append(cand.get("verdict", "").lower().replace("verdict_", ""))
            low, high = derived(cand, "vs_baseline_low"), derived(cand, "vs_baseline_high")
            holds += low <= 1.0 <= high
            codes.add(axis(job["results"][0], "code_sha256") == axis(cand, "code_sha256"))
        print("sensitivity %s (spin %d ns): %d of %d %s; ratios %.4f-%.4f; 1.0 inside %d of "
              "%d intervals; identical code %s; wall %.1f-%.1f s per job" % (
                  name, spin, verdicts.count(wanted), len(verdicts), wanted, min(ratios or [0]),
                  max(ratios or [0]), holds, len(ratios), sorted(codes), min(walls), max(walls)))
        if not ratios:
            print("  first job:", jobs[name][0]["stderr"][-300:])
        print("  verdicts:", " ".join(verdicts))


def faults(cli, modules, out):
    def one(kernel, args, **params):
        spec = {"buffers": [{"name": "flag", "dtype": "i32", "count": 1}],
                "arms": [{"name": kernel, "launches": [{"module": "k", "kernel": kernel,
                                                        "grid": [1], "block": [1],
                                                        "args": args}]}],
                "timing": "events", "reps": 2}
        spec.update(params)
        return cli.kernel(spec, {"k": modules["plain"]})

    clean_spec = {"buffers": [{"name": "x", "dtype": "f32", "count": 1 << 20,
                               "normal": {"a": 0, "b": 1}},
                              {"name": "y", "dtype": "f32", "count": 1 << 20}],
                  "arms": [{"name": "copy", "outputs": ["y"], "launches": [{
                      "module": "k", "kernel": "copy_scale", "grid": [4096], "block": [256],
                      "args": [{"buffer": "y"}, {"buffer": "x"},
                               {"scalar": {"dtype": "f32", "floatValue": 2}},
                               {"scalar": {"dtype": "i32", "intValue": 1 << 20}}]}]}],
                  "reps": 10}
    records = []
    for name, kernel, args, params in (
            ("hang", "hang", [{"buffer": "flag"}], {"maxLaunchSeconds": 0.5}),
            ("illegal address", "illegal_write", [{"buffer": "flag"}], {}),
            ("trap", "trap_now", [], {})):
        fault = one(kernel, args, **params)
        clean = cli.kernel(clean_spec, {"k": modules["plain"]})
        records.append({"fault": name, "job": fault, "next": clean})
        print("fault %-15s exit %d after %.1f s: %s" % (
            name, fault["exit"], fault["wall_s"], fault["stderr"].strip().splitlines()[-1:]))
        print("  next job: exit %d, %.1f s from submit to its end" % (clean["exit"],
                                                                      clean["wall_s"]))
    json.dump(records, open(os.path.join(out, "faults.json"), "w"), indent=1)


def triton_kernel(cli, modules, work, out):
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def double(y_ptr, x_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        tl.store(y_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) * 2.0, mask=mask)

    n, block = 1 << 20, 1024
    x = torch.randn(n, device="cuda")
    y = torch.empty_like(x)
    compiled = double.warmup(y, x, n, BLOCK=block, grid=(n // block,))
    cubin = os.path.join(work, "double.cubin")
    open(cubin, "wb").write(compiled.asm["cubin"])
    meta = compiled.metadata
    args = [{"buffer": "y"}, {"buffer": "x"}, {"scalar": {"dtype": "i32", "intValue": n}}]
    spec = {"buffers": [{"name": "x", "dtype": "f32", "count": n, "normal": {"a": 0, "b": 1}},
                        {"name": "y", "dtype": "f32", "count": n},
                        {"name": "scratch", "dtype": "u8", "count": 1 << 20}],
            "arms": [{"name": "nvcc", "outputs": ["y"], "bytesRead": 4 * n, "bytesWritten": 4 * n,
                      "launches": [{"module": "k", "kernel": "copy_scale", "grid": [n // 256],
                                    "block": [256],
                                    "args": [{"buffer": "y"}, {"buffer": "x"},
                                             {"scalar": {"dtype": "f32", "floatValue": 2}},
                                             {"scalar": {"dtype": "i32", "intValue": n}}]}]},
                     {"name": "triton", "outputs": ["y"], "baseline": "nvcc",
                      "bytesRead": 4 * n, "bytesWritten": 4 * n,
                      "launches": [{"module": "t", "kernel": meta.name, "grid": [n // block],
                                    "block": [32 * meta.num_warps], "sharedBytes": meta.shared,
                                    "args": args}]}],
            "reps": 50, "verify": True}
    record = {"num_warps": meta.num_warps, "shared": meta.shared, "name": meta.name}
    for _ in range(3):  # Triton may add scratch pointers the launch must pass: the probe says
        job = cli.kernel(spec, {"k": modules["plain"], "t": cubin})
        wanted = re.search(r"takes (\d+) parameters", job["stderr"])
        if not wanted:
            break
        args.extend({"buffer": "scratch"} for _ in range(int(wanted.group(1)) - len(args)))
        record.setdefault("refusals", []).append(job["stderr"][-400:])
    record["job"] = job
    json.dump(record, open(os.path.join(out, "triton.json"), "w"), indent=1)
    print("triton: %s, %d warps, %d B shared, exit %d" % (meta.name, meta.num_warps, meta.shared,
                                                          job["exit"]))
    for r in job["results"]:
        print("  %-7s %.3f us  vs_baseline %s  verdict %s" % (
            axis(r, "arm"), r["metrics"][0]["median"], derived(r, "vs_baseline"),
            r.get("verdict", "-")))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    bundle, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    parts = sys.argv[3:] or ["fidelity", "sensitivity", "faults", "triton"]
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp()
    daemon, server = start_daemon(bundle, work)
    cli = Cli(bundle, server, work)
    tests = os.path.join(bundle, "tests", "modules")
    modules = {"plain": os.path.join(tests, "probe_kernels.cubin"),
               "extra": os.path.join(tests, "probe_kernels_extra.cubin")}
    import torch
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    try:
        base_us = 60.0
        if "fidelity" in parts:
            rows = fidelity(cli, modules, sms, out)
            base_us = next(r["kernel_probe_us"] for r in rows
                           if r["size"] == 256 * MIB and r["cache"] == "warm") or base_us
        if "fidelity-l2" in parts:
            fidelity_l2(cli, modules, sms, out)
        if "sensitivity" in parts:
            sensitivity(cli, modules, sms, out, base_us)
        if "faults" in parts:
            faults(cli, modules, out)
        if "triton" in parts:
            triton_kernel(cli, modules, work, out)
    finally:
        daemon.terminate()
        daemon.wait()
        subprocess.run(["cp", os.path.join(work, "daemon.log"), out])


if __name__ == "__main__":
    main()
