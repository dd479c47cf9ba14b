"""A cpu-backend gpuprobed of a Python test's own, on free ports, for the tests written in Python.

    with GpuprobedProcess(gpuprobed_path, work_dir) as daemon:
        daemon.grpc  # "127.0.0.1:PORT"
        daemon.http  # "127.0.0.1:PORT"
"""
import os
import re
import subprocess
import time


class GpuprobedProcess:
    def __init__(self, gpuprobed, work_dir):
        self._log_path = os.path.join(work_dir, "gpuprobed.log")
        self._argv = [gpuprobed, "--backend", "cpu", "--listen", "127.0.0.1:0", "--http",
                      "127.0.0.1:0", "--data-dir", os.path.join(work_dir, "data")]
        self._process = None
        self.grpc = self.http = None

    def __enter__(self):
        with open(self._log_path, "w") as log:
            self._process = subprocess.Popen(self._argv, stderr=log)
        try:
            self.grpc = self._listening(r"gpuprobed \S+ listening on (\S+)")
            self.http = self._listening(r"http listening on (\S+)")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        self._process.terminate()
        self._process.wait(timeout=30)

    def log(self):
        with open(self._log_path) as log:
            return log.read()

    def _listening(self, pattern):
        """The address the daemon logs once it listens (at most 60 s)."""
        for _ in range(600):
            m = re.search(pattern, self.log())
            if m:
                return m.group(1)
            if self._process.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError("gpuprobed did not start:\n" + self.log())
