#!/usr/bin/env python3
"""The Grafana dashboard (deploy/grafana/) queries only what gpuprobed exports.

Starts a cpu-backend gpuprobed, runs a small sweep through it (so that every recorded family
has a series, the gRPC and HTTP requests' included), reads /metrics, and checks that every
panel has queries and that every metric each query names is a family the daemon exports (a
histogram's _bucket, _sum and _count included).

usage: grafana_dashboard_test.py DASHBOARD_JSON GPUPROBED GPUPROBE
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.request

METRIC = re.compile(r"\b((?:gpuprobe|process)_[a-z_]+)\b")


def listening(log_path, what, daemon):
    """The address gpuprobed logs for `what` ("gpuprobed ... listening on", "http listening on")."""
    for _ in range(600):
        with open(log_path) as log:
            m = re.search(what + r" listening on (\S+)", log.read())
        if m:
            return m.group(1)
        if daemon.poll() is not None:
            break
        time.sleep(0.1)
    sys.exit("gpuprobed did not start:\n" + open(log_path).read())


def exported(metrics_text):
    families = {}
    for line in metrics_text.splitlines():
        m = re.match(r"# TYPE (\S+) (\S+)$", line)
        if m:
            families[m.group(1)] = m.group(2)
    names = set(families)
    for name, kind in families.items():
        if kind == "histogram":
            names |= {name + "_bucket", name + "_sum", name + "_count"}
    return names


def main():
    dashboard_path, gpuprobed, gpuprobe = sys.argv[1:4]
    dashboard = json.load(open(dashboard_path))
    with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as work:
        log_path = os.path.join(work, "daemon.log")
        with open(log_path, "w") as log:
            daemon = subprocess.Popen(
                [gpuprobed, "--backend", "cpu", "--listen", "127.0.0.1:0", "--http",
                 "127.0.0.1:0", "--data-dir", os.path.join(work, "data")], stderr=log)
        try:
            grpc = listening(log_path, r"gpuprobed \S+", daemon)
            http = listening(log_path, "http", daemon)
            subprocess.run([gpuprobe, "--server", grpc, "--format", "csv", "sweep", "--experts",
                            "32", "--hidden", "256", "--ff", "64", "--selected", "4", "--t", "2",
                            "--reps", "3"], check=True, stdout=subprocess.DEVNULL)
            urllib.request.urlopen("http://%s/api/v1/info" % http).read()
            metrics = urllib.request.urlopen("http://%s/metrics" % http).read().decode()
        finally:
            daemon.terminate()
            daemon.wait(timeout=30)
    names = exported(metrics)
    failures = []
    queried = set()
    for panel in dashboard["panels"]:
        exprs = [t.get("expr", "") for t in panel.get("targets", [])]
        if not exprs or not all(exprs):
            failures.append("panel %r has no query" % panel["title"])
        for expr in exprs:
            metrics_named = METRIC.findall(expr)
            if not metrics_named:
                failures.append("panel %r: %r names no gpuprobed metric" % (panel["title"], expr))
            for name in metrics_named:
                queried.add(name)
                if name not in names:
                    failures.append("panel %r: %s is not exported by gpuprobed" % (panel["title"], name))
    for variable in dashboard["templating"]["list"]:
        for name in METRIC.findall(json.dumps(variable.get("query", ""))):
            if name not in names:
                failures.append("variable %r: %s is not exported" % (variable["name"], name))
    if failures:
        sys.exit("\n".join(failures))
    print("%d panels query %d metrics, each exported by gpuprobed" % (len(dashboard["panels"]), len(queried)))


if __name__ == "__main__":
    main()
