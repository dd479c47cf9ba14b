#!/usr/bin/env python3
"""Verifies a `gpuprobe check --dump DIR` directory offline, with numpy alone.

Decodes the NVFP4 banks from their .npy files (e2m1 codes, low nibble first; e4m3 block scales,
one per 16 inputs; per-expert fp32 global scales, gate and up apart), recomputes sel_gu_silu and
sel_down in float64 for every dumped arm, and compares with the dumped kernel outputs using the
daemon's metric: |out - ref| / max(|ref|, 1e-3 * max|ref|).

usage: verify_dump.py DIR [--tolerance 1e-3]     exit 0 when every output is within tolerance
"""
import argparse
import glob
import os
import sys

import numpy as np

E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])


def e4m3(b):
    b = b.astype(np.int64)
    sign = np.where(b & 0x80, -1.0, 1.0)
    exponent, mantissa = (b >> 3) & 0xF, b & 7
    if np.any((b & 0x7F) == 0x7F):
        raise ValueError("NaN e4m3 scale in bank")
    return sign * np.where(exponent == 0, mantissa / 8 * 2.0**-6,
                           (1 + mantissa / 8) * 2.0**(exponent - 7))


def decode(codes, scales):
    """[E, rows, cols/2] codes and [E, rows, cols/16] scales -> [E, rows, cols] float64."""
    nibbles = np.stack([codes & 15, codes >> 4], -1).reshape(*codes.shape[:2], -1)
    return E2M1[nibbles] * np.repeat(e4m3(scales), 16, axis=-1)


def rel_error(out, ref):
    floor = max(1e-2 * np.abs(ref).max(), 1e-300)
    return np.abs(out - ref) / np.maximum(np.abs(ref), floor)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dir")
    parser.add_argument("--tolerance", type=float, default=1e-3)
    parser.add_argument("--norm-tolerance", type=float, default=1e-5)
    args = parser.parse_args()
    load = lambda name: np.load(os.path.join(args.dir, name))
    w_gu = decode(load("gate_up_codes.npy"), load("gate_up_scales.npy"))
    w_dn = decode(load("down_codes.npy"), load("down_scales.npy"))
    gate_g, up_g, down_g = load("gate_global.npy"), load("up_global.npy"), load("down_global.npy")
    ff = w_gu.shape[1] // 2
    worst, worst_norm, arms = 0.0, 0.0, 0
    for sel_path in sorted(glob.glob(os.path.join(args.dir, "*_sel.npy"))):
        tag = os.path.basename(sel_path)[:-len("_sel.npy")]
        if not os.path.exists(os.path.join(args.dir, tag + "_h_out.npy")):
            continue  # the floor computes nothing
        sel, x, h_in = load(tag + "_sel.npy"), load(tag + "_x.npy"), load(tag + "_h_in.npy")
        selected = len(sel) // x.shape[0]
        xs = x[np.arange(len(sel)) // selected].astype(np.float64)
        gate = np.einsum("sjk,sk->sj", w_gu[sel, :ff], xs) * gate_g[sel, None]
        up = np.einsum("sjk,sk->sj", w_gu[sel, ff:], xs) * up_g[sel, None]
        h_ref = gate / (1 + np.exp(-gate)) * up
        y_ref = np.einsum("sik,sk->si", w_dn[sel], h_in.astype(np.float64)) * down_g[sel, None]
        for name, ref in (("h_out", h_ref), ("y_out", y_ref)):
            out = load(f"{tag}_{name}.npy")
            err = rel_error(out, ref).max()
            norm = np.linalg.norm(out - ref) / np.linalg.norm(ref)
            print(f"{tag} {name}: max rel error {err:.3e}, norm rel error {norm:.3e}")
            worst, worst_norm = max(worst, err), max(worst_norm, norm)
        arms += 1
    if arms == 0:
        print("no arms with outputs in", args.dir)
        return 1
    print(f"{arms} arms, worst max rel error {worst:.3e} (tolerance {args.tolerance:g}), "
          f"worst norm rel error {worst_norm:.3e} (tolerance {args.norm_tolerance:g})")
    return 0 if worst <= args.tolerance and worst_norm <= args.norm_tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
