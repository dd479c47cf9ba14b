#!/usr/bin/env python3
"""The Python client (client/python) against a cpu-backend gpuprobed.

usage: python_client_test.py GPUPROBED SOURCE_DIR [TEST ...]
  ClientTest      the API: sweep, check, run, submit, wait, show, rows, jobs, compare, info,
                  upload
  PipInstallTest  `pip install client/python` into a fresh virtual environment, offline
The stubs come from the build (PYTHONPATH: the build's client/python, then the sources').
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from gpuprobed_process import GpuprobedProcess  # noqa: E402

GPUPROBED, SOURCE_DIR = sys.argv[1], sys.argv[2]
SMALL = dict(experts=32, hidden=256, ff=64, selected=4)

import gpuprobe  # noqa: E402  (after the paths)


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR"))
        cls.daemon = GpuprobedProcess(GPUPROBED, cls.work.name).__enter__()
        cls.client = gpuprobe.Client(cls.daemon.grpc)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.daemon.__exit__()
        cls.work.cleanup()

    def test_sweep_yields_each_row_as_a_plain_dict_naming_its_job(self):
        rows = self.client.sweep(t=2, reps=3, labels={"suite": "python"}, **SMALL)
        seen = list(rows)
        self.assertEqual(rows.state, "succeeded")
        self.assertRegex(rows.job_id, r"^job-\d+$")
        for row in seen:
            self.assertEqual(row["job_id"], rows.job_id)
            self.assertEqual(row["variant"], "per-slot")
            self.assertIsInstance(row["gu_read_bytes"], int)
            self.assertGreater(row["section_us"], 0.0)
            self.assertEqual(row["kept_reps"], 2)
        # The default ladder: union selected .. t * selected at each t.
        self.assertEqual([(r["t"], r["union_size"]) for r in seen], [(1, 4), (2, 4), (2, 8)])
        self.assertEqual(rows.started["sweep"]["experts"], 32)

    def test_a_sweep_retried_with_its_idempotency_key_yields_the_same_job(self):
        first = self.client.sweep(t=2, reps=3, idempotency_key="py-sweep-1", **SMALL)
        rows = list(first)
        again = self.client.sweep(t=2, reps=3, idempotency_key="py-sweep-1", **SMALL)
        self.assertEqual(list(again), rows)
        self.assertEqual(again.job_id, first.job_id)
        other = self.client.sweep(t=2, reps=3, **SMALL)
        list(other)
        self.assertNotEqual(other.job_id, first.job_id)
        run = self.client.run("read-bandwidth", params={"sizes_bytes": "1048576",
                                                         "default_sizes": False, "reps": 3},
                              idempotency_key="py-run-1")
        list(run)
        rerun = self.client.run("read-bandwidth", params={"sizes_bytes": "1048576",
                                                           "default_sizes": False, "reps": 3},
                                idempotency_key="py-run-1")
        list(rerun)
        self.assertEqual(rerun.job_id, run.job_id)

    def test_submit_wait_show_rows_jobs_and_compare(self):
        base = self.client.submit(t=2, reps=3, labels={"branch": "main"}, **SMALL)
        record = self.client.wait(base, timeout=120)
        self.assertEqual(record["state"], "succeeded")
        self.assertEqual(record["id"], base)
        cand = self.client.submit(t=2, reps=3, labels={"branch": "feature"}, **SMALL)
        self.client.wait(cand, timeout=120)
        shown = self.client.show(cand)
        self.assertEqual(shown["job"]["request"]["sweep"]["labels"], {"branch": "feature"})
        self.assertTrue(shown["rows"])
        self.assertTrue(all(r["job_id"] == cand for r in shown["rows"]))
        listed = self.client.jobs(state="succeeded", labels={"branch": "main"})
        self.assertEqual([j["id"] for j in listed], [base])
        compared = self.client.compare("label:branch=main", cand)
        self.assertTrue(compared["arms"])
        for arm in compared["arms"]:
            self.assertIn(arm["verdict"], {"faster", "slower", "same", "unsure", "too-few-reps"})

    def test_rows_as_a_dataframe(self):
        job = self.client.submit(t=1, reps=3, **SMALL)
        self.client.wait(job, timeout=120)
        frame = self.client.rows(job, frame=True)
        self.assertEqual(list(frame["job_id"].unique()), [job])
        self.assertIn("section_us", frame.columns)
        self.assertEqual(len(self.client.sweep(t=1, reps=3, **SMALL).frame()), len(frame))

    def test_check_and_run_of_another_probe(self):
        checks = list(self.client.check(t=2, seed=7, **SMALL))
        self.assertTrue(checks)
        self.assertTrue(all(c["passed"] and c["seed"] == 7 for c in checks))
        results = list(self.client.run("read-bandwidth", params={
            "default_sizes": False, "sizes_bytes": [65536, 131072], "caches": "warm", "reps": 4}))
        self.assertEqual([r["size_bytes"] for r in results], [65536, 131072])
        self.assertTrue(all(r["read_us"] > 0 and r["cache"] == "warm" for r in results))
        self.assertIn("read-bandwidth", [p["name"] for p in self.client.probes()])
        self.assertEqual(self.client.info()["backend"], "cpu")

    def test_bad_requests_say_what_is_wrong(self):
        with self.assertRaises(gpuprobe.GpuprobeError) as refused:
            list(self.client.sweep(hidden=100, experts=32, ff=64, selected=4))
        self.assertEqual(refused.exception.code.name, "INVALID_ARGUMENT")
        self.assertIn("hidden", refused.exception.message)
        with self.assertRaises(TypeError) as unknown:
            self.client.sweep(expert=64)
        self.assertIn("expert", str(unknown.exception))
        with self.assertRaises(ValueError) as bad_enum:
            self.client.sweep(timing="fast")
        self.assertIn("timing", str(bad_enum.exception))
        with self.assertRaises(ValueError) as negative:
            self.client.wait("job-1", timeout=-1)
        self.assertIn("timeout: -1 is not a positive number", str(negative.exception))
        with self.assertRaises(ValueError) as huge:
            self.client.sweep(experts=1 << 40)
        self.assertIn("experts: 1099511627776 does not fit", str(huge.exception))
        with self.assertRaises(ValueError) as negative_reps:
            self.client.submit(reps=-3)
        self.assertIn("reps: -3 does not fit", str(negative_reps.exception))
        with self.assertRaises(gpuprobe.GpuprobeError) as missing:
            self.client.job("job-999999")
        self.assertEqual(missing.exception.code.name, "NOT_FOUND")


    def test_upload_stores_a_module_once_and_refuses_what_is_none(self):
        ptx = (b".version 8.0\n.target sm_90\n.address_size 64\n"
               b".visible .entry spin()\n{\n ret;\n}\n")
        first = self.client.upload(ptx)
        self.assertRegex(first["id"], r"^[0-9a-f]{64}$")
        self.assertEqual(first["format"], "ptx")
        self.assertEqual([k["name"] for k in first["kernels"]], ["spin"])
        self.assertFalse(first["already_stored"])
        again = self.client.upload(ptx)
        self.assertTrue(again["already_stored"])
        self.assertEqual(self.client.module(first["id"])["size_bytes"], len(ptx))
        with self.assertRaises(gpuprobe.GpuprobeError) as refused:
            self.client.upload(b"\x1f\x8b\x08\x00 not a module")
        self.assertEqual(refused.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("gzip", refused.exception.message)

    def test_kernel_uploads_its_modules_and_the_cpu_daemon_refuses_the_job(self):
        ptx = (b".version 8.0\n.target sm_90\n.address_size 64\n"
               b".visible .entry flip(\n .param .u64 flip_param_0\n)\n{\n ret;\n}\n")
        spec = {"buffers": [{"name": "x", "dtype": "f32", "count": 256}],
                "arms": [{"name": "flip", "launches": [
                    {"kernel": "flip", "grid": [1], "block": [256],
                     "args": [{"buffer": "x"}]}]}]}
        with self.assertRaises(gpuprobe.GpuprobeError) as refused:
            self.client.kernel(spec, modules={"flip": ptx})
        self.assertEqual(refused.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("the kernel probe needs a cuda device", refused.exception.message)
        # The module was uploaded on the way; the spec given was not changed.
        self.assertTrue(self.client.upload(ptx)["already_stored"])
        self.assertNotIn("module", spec["arms"][0]["launches"][0])
        with self.assertRaises(ValueError) as unnamed:
            self.client.kernel({"arms": [{"launches": [{"module": "other"}]}]},
                               modules={"flip": ptx})
        self.assertIn("'other'", str(unnamed.exception))


class PipInstallTest(unittest.TestCase):
    def test_pip_installs_the_client_with_its_stubs_offline(self):
        with tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR")) as work:
            # A copy of the sources the package builds from (client/python and the proto), so
            # that the build writes nothing into the checkout.
            shutil.copytree(os.path.join(SOURCE_DIR, "client", "python"),
                            os.path.join(work, "client", "python"))
            shutil.copytree(os.path.join(SOURCE_DIR, "proto"), os.path.join(work, "proto"))
            venv = os.path.join(work, "venv")
            subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", venv],
                           check=True)
            pip = subprocess.run(
                [os.path.join(venv, "bin", "pip"), "install", "--no-index", "--no-build-isolation",
                 os.path.join(work, "client", "python")], capture_output=True, text=True)
            self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            imported = subprocess.run(
                [os.path.join(venv, "bin", "python"), "-c",
                 "import gpuprobe, gpuprobe.v1.probe_pb2 as p; print(gpuprobe.__file__, "
                 "p.SweepRequest.DESCRIPTOR.full_name)"],
                capture_output=True, text=True, env=env, cwd=work)
            self.assertEqual(imported.returncode, 0, imported.stderr)
            self.assertIn(os.path.join(venv, "lib"), imported.stdout)
            self.assertIn("gpuprobe.v1.SweepRequest", imported.stdout)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]] + sys.argv[3:])
