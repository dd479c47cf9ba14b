#!/usr/bin/env bash
# deploy/gpu-profile.sh on the final kernels: the script's first run.
set -u
out=$OUT/run
mkdir -p "$out"
date -u > "$out/date.txt"
deploy/gpu-profile.sh bundle "$out/profile" > "$out/profile-run.txt" 2>&1
echo "exit $?" >> "$out/profile-run.txt"
tail -12 "$out/profile-run.txt"; ls -la "$out/profile"
tar -C "$OUT" -czf "$OUT/run.tar.gz" run && rm -rf "$out"
