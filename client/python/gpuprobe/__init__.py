"""Python client of gpuprobed.

    import gpuprobe
    client = gpuprobe.Client("gpu-host:7070")
    for row in client.sweep(experts=64, hidden=512, ff=128, selected=4, t=2, reps=3):
        print(row["t"], row["union_size"], row["section_us"])
"""
# The generated stubs (gpuprobe.v1) may live in another directory on the path than this file
# (a build tree beside the sources): let both contribute to the package.
__path__ = __import__("pkgutil").extend_path(__path__, __name__)

from gpuprobe.client import Client, GpuprobeError, Rows  # noqa: E402

__all__ = ["Client", "GpuprobeError", "Rows"]
