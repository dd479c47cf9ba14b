#!/usr/bin/env bash
# Lever table row 33 (a measurement): the L2 hit rates of warm launches. ncu with caches left
# alone (--cache-control none) and clocks alone profiles every kernel node of a graph-timed warm
# sweep (t = 6, unions 10 and 60, per-slot and floor, 3 reps of 10 launches each): each launch
# finds the L2 as the launch before it left it, as in the timed runs.
set -u
source deploy/await-daemon.sh
out=$OUT/run
mkdir -p "$out"
export LD_LIBRARY_PATH=$PWD/bundle/lib PATH=$PWD/bundle/bin:$PATH
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$out/gpu.txt" 2>&1
date -u > "$out/date.txt"
metrics=gpu__time_duration.sum,lts__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_active.min,sm__cycles_active.avg,sm__cycles_active.max
ncu --clock-control none --cache-control none --target-processes all -k 'regex:SelNvfp4|ReadFloor' \
  --metrics $metrics --csv --log-file "$out/ncu.csv" \
  gpuprobed --isolation none --backend cuda --listen 127.0.0.1:0 --http "" \
  --data-dir "$(mktemp -d)" >"$out/ncu-log.txt" 2>&1 &
profiler=$!
server=$(await_gpuprobed "$out/ncu-log.txt" $profiler) || exit 1
gpuprobe --server "$server" --format tsv sweep --t-values 6 --unions 10,60 --variant per-slot,floor \
  --reps 3 --timing graph --cache warm >"$out/ncu-sweep.tsv" 2>&1
pkill -TERM -x gpuprobed
wait $profiler
date -u >> "$out/date.txt"
python3 - "$out/ncu.csv" <<'PY' | tee "$out/l2-summary.txt"
import csv, sys, collections
table = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
hdr, rows = table[0], table[1:]
col = {n: hdr.index(n) for n in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")}
launches = collections.OrderedDict()
for r in rows:
    entry = launches.setdefault(r[col["ID"]], [r[col["Kernel Name"]][:38], {}])
    entry[1][r[col["Metric Name"]]] = r[col["Metric Value"]] + " " + r[col["Metric Unit"]]
names = ["gpu__time_duration.sum", "lts__t_sector_hit_rate.pct", "lts__t_sectors_srcunit_tex_op_read.sum",
         "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
         "sm__cycles_active.min", "sm__cycles_active.avg", "sm__cycles_active.max"]
print("id\tkernel\t" + "\t".join(names))
for i, (k, m) in launches.items():
    print(i + "\t" + k + "\t" + "\t".join(m.get(n, "-") for n in names))
PY
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
