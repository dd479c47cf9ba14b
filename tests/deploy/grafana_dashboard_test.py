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
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from gpuprobed_process import GpuprobedProcess  # noqa: E402

METRIC = re.compile(r"\b((?:gpuprobe|process)_[a-z_]+)\b")


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
        with GpuprobedProcess(gpuprobed, work) as daemon:
            subprocess.run([gpuprobe, "--server", daemon.grpc, "--format", "csv", "sweep",
                            "--experts", "32", "--hidden", "256", "--ff", "64", "--selected", "4",
                            "--t", "2", "--reps", "3"], check=True, stdout=subprocess.DEVNULL)
            urllib.request.urlopen("http://%s/api/v1/info" % daemon.http).read()
            metrics = urllib.request.urlopen("http://%s/metrics" % daemon.http).read().decode()
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
