#!/usr/bin/env bash
# Which pipe runs BREV: ncu's absolute per-pipe instruction counts for the per-slot union-60
# launches, to set against the SASS-level executions (source page) of the same launches.
set -u
out=$OUT/run
mkdir -p "$out"
source deploy/await-daemon.sh
export LD_LIBRARY_PATH=$PWD/bundle/lib
date -u > "$out/date.txt"
metrics=$(printf 'smsp__inst_executed_pipe_%s.sum,' xu alu fma fmaheavy fmalite lsu uniform adu cbu tensor_op_hmma fp16)
ncu --clock-control none --target-processes all -k regex:SelNvfp4 --launch-skip 2 -c 2 \
  --metrics "${metrics}smsp__inst_executed.sum" --section SourceCounters -o "$out/pipes" \
  bundle/bin/gpuprobed --isolation none --backend cuda --listen 127.0.0.1:0 --http "" --data-dir "$(mktemp -d)" > "$out/ncu-log.txt" 2>&1 &
pid=$!
server=$(await_gpuprobed "$out/ncu-log.txt" $pid) && \
  bundle/bin/gpuprobe --server "$server" --format tsv sweep --t-values 6 --unions 10,60 --variant per-slot --reps 2 --timing events > "$out/sweep.tsv" 2>&1
sleep 1; pkill -TERM -x gpuprobed; wait $pid
ncu -i "$out/pipes.ncu-rep" --page raw --csv > "$out/pipes-raw.csv" 2>&1
for i in 0 1; do
  ncu -i "$out/pipes.ncu-rep" --page source --csv --print-source sass --launch-skip $i --launch-count 1 > "$out/source-$i.csv" 2>&1 || true
done
rm -f "$out/pipes.ncu-rep"
python3 - "$out" <<'PY'
import csv, sys, collections
out = sys.argv[1]
rows = list(csv.reader(open(f"{out}/pipes-raw.csv")))
hdr = rows[0]
for n, r in enumerate(rows[2:]):
    print(r[hdr.index("Kernel Name")][:45], {h.split("__inst_executed_pipe_")[-1]: r[i] for i, h in enumerate(hdr) if "inst_executed" in h})
    src = list(csv.reader(open(f"{out}/source-{n}.csv")))
    k = [j for j, x in enumerate(src) if x and x[0] == "Kernel Name"]
    src = src[:k[1]] if len(k) > 1 else src
    h = src[1]; s_i = h.index("Source"); e_i = h.index("Instructions Executed")
    ops = collections.Counter()
    for x in src[2:]:
        if x and x[0].startswith("0x"):
            w = x[s_i].split(); op = (w[1] if w[0].startswith("@") else w[0]).split(".")[0]
            ops[op] += int(x[e_i] or 0)
    print("  executions by opcode:", dict(ops.most_common(24)))
PY
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
