#!/usr/bin/env bash
# A throwaway PostgreSQL cluster in a directory, for the fleet's tests and for trying a fleet on
# one machine (Debian's postgresql-15; deploy/install-deps.sh installs it).
#   deploy/local-postgres.sh start DIR   initdb (unless DIR holds a cluster already) + start
#                                        (unless it runs already); prints the --store URL on
#                                        stdout, and nothing there if it fails (exit 1)
#   deploy/local-postgres.sh stop DIR    stops it (DIR stays: start it again, or remove it)
# The server listens on a Unix socket in DIR only (no TCP port to collide with), trusts local
# connections and runs with fsync off: never for data you keep. As root, the cluster runs as the
# postgres user, as initdb refuses root.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
(($# == 2)) || usage
command=$1
dir=$(realpath -m "$2")
bin=$(find /usr/lib/postgresql -maxdepth 2 -name bin -type d 2>/dev/null | sort -V | tail -n 1)
[[ -x "$bin/initdb" ]] || { echo "$0: no PostgreSQL server under /usr/lib/postgresql (run deploy/install-deps.sh)" >&2; exit 1; }

as_owner() {
  if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case "$command" in
  start)
    mkdir -p "$dir"
    if [[ $(id -u) -eq 0 ]]; then
      chown postgres "$dir"
      runuser -u postgres -- test -w "$dir" || {
        echo "$0: the postgres user cannot reach $dir (a parent directory is closed to it)" >&2
        exit 1
      }
    fi
    if [[ ! -f "$dir/data/PG_VERSION" ]] &&
      ! as_owner "$bin/initdb" -D "$dir/data" -U gpuprobe --auth=trust -E UTF8 --locale=C \
        >"$dir/initdb.log" 2>&1; then
      cat "$dir/initdb.log" >&2
      exit 1
    fi
    if as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      :  # running since an earlier start
    elif ! as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-c listen_addresses='' -k $dir -c fsync=off -c max_connections=400" start >/dev/null; then
      cat "$dir/server.log" >&2
      exit 1
    fi
    echo "postgresql:///postgres?host=$dir&user=gpuprobe"
    ;;
  stop)
    as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
    ;;
  *) usage ;;
esac
