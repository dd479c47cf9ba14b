#!/usr/bin/env python3
"""What a page of jobs costs the daemon over HTTP (issue 55, item 11): a cpu daemon with JOBS tiny
sweep jobs stored; its resident memory before and after REQUESTS reads of /api/v1/jobs?page_size
=1000; then /metrics latency while 20 clients ask for such pages and never read them. Prints one
JSON object on stdout (rss_mb_before, rss_mb_after, metrics_p50_ms, metrics_p99_ms, ...);
progress goes to stderr.

usage: bench/http_page_memory.py [--jobs 1200] [--requests 100] [--gpuprobed P] [--gpuprobe P]
"""
import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+) kB", f.read()).group(1)) / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=1200)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--gpuprobed", default=os.path.join(HERE, "build/server/gpuprobed"))
    parser.add_argument("--gpuprobe", default=os.path.join(HERE, "build/client/gpuprobe"))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="gpuprobe_page_memory.")
    log = open(os.path.join(work, "daemon.log"), "w")
    daemon = subprocess.Popen(
        [args.gpuprobed, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--backend", "cpu",
         "--isolation", "none", "--max-queued-jobs", str(args.jobs + 10), "--data-dir",
         os.path.join(work, "data")], stdout=log, stderr=subprocess.STDOUT)
    try:
        grpc = http = None
        for _ in range(300):
            text = open(log.name).read()
            grpc = re.search(r"listening on (\S+):(\d+) \(", text)
            http = re.search(r"http listening on (\S+):(\d+)", text)
            if grpc and http:
                break
            time.sleep(0.1)
        server = "%s:%s" % grpc.groups()
        base = "http://%s:%s" % http.groups()
        print("storing %d jobs" % args.jobs, file=sys.stderr)
        for i in range(args.jobs):
            subprocess.run([args.gpuprobe, "--server", server, "submit", "--experts", "32",
                            "--hidden", "256", "--ff", "64", "--selected", "4", "--t", "1",
                            "--reps", "2", "--label", "bench=page-memory"],
                           check=True, capture_output=True)
        subprocess.run([args.gpuprobe, "--server", server, "wait", "job-%d" % args.jobs],
                       check=True, capture_output=True)
        page = base + "/api/v1/jobs?page_size=1000"
        before = rss_mb(daemon.pid)
        print("rss %.0f MB; %d page reads" % (before, args.requests), file=sys.stderr)
        size = 0
        for _ in range(args.requests):
            size = len(urllib.request.urlopen(page).read())
        after = rss_mb(daemon.pid)
        print("rss %.0f MB; 20 clients that never read, and /metrics" % after, file=sys.stderr)
        host, port = http.groups()
        stalled = []
        for _ in range(20):
            s = socket.create_connection((host, int(port)))
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.sendall(b"GET /api/v1/jobs?page_size=1000 HTTP/1.1\r\nHost: x\r\n\r\n")
            stalled.append(s)
        latencies = []
        for _ in range(200):
            start = time.monotonic()
            urllib.request.urlopen(base + "/metrics").read()
            latencies.append((time.monotonic() - start) * 1000)
        for s in stalled:
            s.close()
        latencies.sort()
        print(json.dumps({"jobs": args.jobs, "requests": args.requests, "page_bytes": size,
                          "rss_mb_before": round(before, 1), "rss_mb_after": round(after, 1),
                          "rss_mb_with_stalled_clients": round(rss_mb(daemon.pid), 1),
                          "metrics_p50_ms": round(statistics.median(latencies), 2),
                          "metrics_p99_ms": round(latencies[int(0.99 * len(latencies)) - 1], 2)}))
    finally:
        daemon.terminate()
        daemon.wait()


if __name__ == "__main__":
    main()
