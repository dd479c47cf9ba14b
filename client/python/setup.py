"""Builds the gpuprobe package, generating its gRPC stubs from the repository's proto.

The stubs (gpuprobe/v1/probe_pb2.py, probe_pb2_grpc.py, and the modules of the files that
probe.proto imports: measurement, moe_union, device, param_spec, module) are generated at build time by
protoc and gRPC's Python plugin (Debian: protobuf-compiler, protobuf-compiler-grpc), from
../../proto/gpuprobe/v1/, so they always match the daemon built beside them.
"""
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
PROTO_ROOT = os.path.join(HERE, "..", "..", "proto")


def generate_stubs(out_dir):
    """Writes gpuprobe/v1/{__init__,probe_pb2,probe_pb2_grpc,...}.py under out_dir."""
    plugin = shutil.which("grpc_python_plugin")
    protoc = shutil.which("protoc")
    if plugin is None or protoc is None:
        raise SystemExit("gpuprobe: protoc and grpc_python_plugin are needed to build the stubs "
                         "(Debian: apt-get install protobuf-compiler protobuf-compiler-grpc)")
    protos = [os.path.join(PROTO_ROOT, "gpuprobe", "v1", name)
              for name in ("probe.proto", "measurement.proto", "moe_union.proto", "device.proto",
                           "param_spec.proto", "module.proto")]
    for proto in protos:
        if not os.path.exists(proto):
            raise SystemExit("gpuprobe: %s is missing: build from the gpuprobe repository" % proto)
    os.makedirs(os.path.join(out_dir, "gpuprobe", "v1"), exist_ok=True)
    subprocess.check_call([protoc, "--proto_path=" + PROTO_ROOT, "--python_out=" + out_dir,
                           "--grpc_out=" + out_dir, "--plugin=protoc-gen-grpc=" + plugin] + protos)
    open(os.path.join(out_dir, "gpuprobe", "v1", "__init__.py"), "a").close()


class BuildWithStubs(build_py):
    """The package's modules, then the stubs beside them in the build (never in the sources)."""

    def run(self):
        super().run()
        generate_stubs(self.build_lib)


setup(cmdclass={"build_py": BuildWithStubs})
