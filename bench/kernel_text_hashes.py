#!/usr/bin/env python3
"""Prints the SHA-256 of each CUDA kernel's machine code (its `.text.NAME` section), to show
that a refactor left the kernels' machine code as it was, or which kernels two builds share.

From source: compiles one CUDA source of a configured build to a cubin with the build's own nvcc
command (from compile_commands.json, for sm_90a only). From an executable (--binary): reads the
sm_90a cubins that nvcc embedded in it (a build's or a bundle's gpuprobed), so that the two
builds of an A/B run are compared as they ran. Either way it reads the cubins' ELF section tables
and prints one TSV line per kernel: its demangled name, with namespaces dropped so that a kernel
moved to another namespace still matches, the byte count and the hash. No GPU and no cuobjdump
needed.

  bench/kernel_text_hashes.py build kernels/moe_sel_kernels.cu > before.tsv
  ... edit ...
  bench/kernel_text_hashes.py build kernels/sel/sel_kernels.cu > after.tsv
  diff <(cut -f1,3 before.tsv | sort) <(cut -f1,3 after.tsv | sort)

  bench/kernel_text_hashes.py --binary bundle/bin/gpuprobed > new.tsv
  bench/kernel_text_hashes.py --binary BASE_BIN/gpuprobed > base.tsv
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


ELF_MAGIC = b"\x7fELF\x02\x01"  # 64-bit little-endian
EM_CUDA = 190


def text_sections(data, start=0):
    """(name, bytes) of every .text.* section of the ELF image at data[start:]."""
    shoff, = struct.unpack_from("<Q", data, start + 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, start + 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, start + shoff + i * shentsize)
               for i in range(shnum)]
    strtab = headers[shstrndx]
    names = data[start + strtab[4]:start + strtab[4] + strtab[5]]
    for name_off, _type, _flags, _addr, offset, size, *_ in headers:
        name = names[name_off:names.index(b"\0", name_off)].decode()
        if name.startswith(".text."):
            yield name[len(".text."):], data[start + offset:start + offset + size]


def read_elf(path):
    data = open(path, "rb").read()
    if not data.startswith(ELF_MAGIC):
        sys.exit(f"kernel_text_hashes: {path} is not a 64-bit little-endian ELF file")
    return data


def embedded_sections(path):
    """The .text.* sections of every CUDA ELF image embedded in a host executable (nvcc's
    fatbin entries, stored uncompressed, after the executable's own ELF header)."""
    data = read_elf(path)
    sections = []
    start = data.find(ELF_MAGIC, 1)
    while start >= 0:
        machine, = struct.unpack_from("<H", data, start + 0x12)
        if machine == EM_CUDA:
            sections.extend(text_sections(data, start))
        start = data.find(ELF_MAGIC, start + 1)
    if not sections:
        sys.exit(f"kernel_text_hashes: {path} embeds no uncompressed CUDA machine code")
    return sections


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    if sys.argv[1] == "--binary":
        sections = sorted(embedded_sections(sys.argv[2]))
    else:
        build_dir, source = sys.argv[1], sys.argv[2]
        with tempfile.TemporaryDirectory() as tmp:
            cubin = os.path.join(tmp, "kernels.cubin")
            command, directory = nvcc_cubin_command(build_dir, source, cubin)
            subprocess.run(command, cwd=directory, check=True, stdout=subprocess.DEVNULL)
            sections = sorted(text_sections(read_elf(cubin)))
    mangled = [name for name, _ in sections]
    demangled = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True,
                               text=True, check=True).stdout.splitlines()
    for (name, code), readable in zip(sections, demangled):
        readable = re.sub(r"\(anonymous namespace\)::|\b(?:gpuprobe|sel|arch)::", "", readable)
        print(f"{readable}\t{len(code)}\t{hashlib.sha256(code).hexdigest()}")


if __name__ == "__main__":
    main()
