# Sourced by the scripts that start a gpuprobed of their own.
# await_gpuprobed LOG PID: prints the gRPC address that gpuprobed (process PID) logs in LOG once
# it listens; fails, showing the log on stderr, if it exits or does not listen within 60 s.
await_gpuprobed() {
  local log=$1 pid=$2 address
  for _ in $(seq 1 600); do
    address=$(grep -so 'gpuprobed [^ ]* listening on [^ ]*' "$log" | head -n1 | cut -d' ' -f5 || true)
    [[ -n "$address" ]] && { echo "$address"; return 0; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "gpuprobed did not start:" >&2
  cat "$log" >&2
  return 1
}
