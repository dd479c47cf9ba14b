#!/usr/bin/env python3
"""Prints the SHA-256 of each CUDA kernel's machine code (its `.text.NAME` section), to show
that a refactor left the kernels' machine code as it was.

Compiles one CUDA source of a configured build to a cubin with the build's own nvcc command
(from compile_commands.json, for sm_90a only), reads the cubin's ELF section table and prints
one TSV line per kernel: its demangled name, with namespaces dropped so that a kernel moved to
another namespace still matches, the byte count and the hash. No GPU and no cuobjdump needed.

  bench/kernel_text_hashes.py build kernels/moe_sel_kernels.cu > before.tsv
  ... edit ...
  bench/kernel_text_hashes.py build kernels/sel/sel_kernels.cu > after.tsv
  diff <(cut -f1,3 before.tsv | sort) <(cut -f1,3 after.tsv | sort)
"""
import hashlib
import json
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile


def nvcc_cubin_command(build_dir, source, cubin):
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    source = os.path.realpath(source)
    for entry in entries:
        if os.path.realpath(os.path.join(entry["directory"], entry["file"])) == source:
            break
    else:
        sys.exit(f"kernel_text_hashes: {source} is not in {build_dir}/compile_commands.json")
    args = shlex.split(entry["command"])
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in ("-o", "-c"):
            skip = arg == "-o"
            continue
        if arg.startswith("-gencode="):
            continue  # one cubin for sm_90a below
        if arg.startswith("--resource-usage") or arg.startswith("-Xptxas=-warn"):
            continue
        out.append(arg)
    return out[:1] + ["-cubin", "-gencode=arch=compute_90a,code=sm_90a", "-o", cubin] + out[1:], entry["directory"]


def text_sections(path):
    """(name, bytes) of every .text.* section of a 64-bit little-endian ELF file."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"kernel_text_hashes: {path} is not a 64-bit little-endian ELF file")
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx]
    names = data[strtab[4]:strtab[4] + strtab[5]]
    for name_off, _type, _flags, _addr, offset, size, *_ in headers:
        name = names[name_off:names.index(b"\0", name_off)].decode()
        if name.startswith(".text."):
            yield name[len(".text."):], data[offset:offset + size]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    build_dir, source = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "kernels.cubin")
        command, directory = nvcc_cubin_command(build_dir, source, cubin)
        subprocess.run(command, cwd=directory, check=True, stdout=subprocess.DEVNULL)
        sections = sorted(text_sections(cubin))
    mangled = [name for name, _ in sections]
    demangled = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True,
                               text=True, check=True).stdout.splitlines()
    for (name, code), readable in zip(sections, demangled):
        readable = re.sub(r"\(anonymous namespace\)::|\b(?:gpuprobe|sel|arch)::", "", readable)
        print(f"{readable}\t{len(code)}\t{hashlib.sha256(code).hexdigest()}")


if __name__ == "__main__":
    main()
