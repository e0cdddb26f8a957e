"""How a batched value-and-gradient kernel should spread its work over GPU threads: hand-written CUDA kernels of
gaussian4d's value and gradient (the issue-13 benchmark problem) with G lanes per sample, G = 1 (one thread per
sample, the layout the generated kernels use today), 2, 4, 8, 16 and 32 (a warp per sample). Each lane walks every
G-th data point and the group's partial sums meet by warp shuffles or in shared memory; and the opposite, R samples
per thread (register blocking, R = 2, 4, 8): each data point loaded once for R samples, so loads per FLOP fall R
times -- the 2026-11-28 H200 figures found the one-thread layout bound by its two loads per 12 FLOPs, not by latency.
Float32, thetas and outputs on the device,
device time from CUDA events over launches queued back to back; every layout is checked against a float64 NumPy
evaluation first.

    PYTHONPATH=$PWD python scripts/bench_gpu_layouts.py                      # B = 65536 and 16 x 65536, N = 1000
    NUMBA_ENABLE_CUDASIM=1 python scripts/bench_gpu_layouts.py --simulate    # correctness smoke run, no timings

This measures layouts, not nestgrad: it says which layout the code generator should emit, and what it could gain.
"""
import argparse
import math
import os
import sys

import numpy as np

import nestgrad  # noqa: F401  (first: restores the NumPy alias numba-cuda needs on NumPy >= 2.5)
from numba import cuda, float32  # module level: the simulator swaps the global `cuda` inside kernels

SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
FLOPS_PER_POINT = 12  # as scripts/bench_gpu.py counts them
THREADS = 256
LOG_2PI = math.log(2.0 * math.pi)
# float32 constants the kernels share (module globals are compile-time constants to numba-cuda)
log_2pi, half, zero, one = float32(LOG_2PI), float32(0.5), float32(0.0), float32(1.0)


def make_kernel(group):
    """The value-and-gradient kernel with ``group`` lanes per sample (a power of two dividing 32)."""
    per_warp = 32 // group

    @cuda.jit
    def kernel(thetas, x, out, grad):
        nsamples = thetas.shape[0]
        n = x.shape[1]
        tid = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
        lane = tid % group
        warp = tid // 32
        nwarps = (cuda.gridDim.x * cuda.blockDim.x) // 32
        base = warp * per_warp
        while base < nsamples:  # uniform over the warp, so every lane reaches the shuffles
            s = base + (tid % 32) // group
            valid = s < nsamples
            if not valid:
                s = nsamples - 1
            mu1, mu2, s1, s2 = thetas[s, 0], thetas[s, 1], thetas[s, 2], thetas[s, 3]
            r1 = one / s1
            r2 = one / s2
            g0 = zero
            g1 = zero
            q1 = zero
            q2 = zero
            for i in range(lane, n, group):
                d1 = (x[0, i] - mu1) * r1
                d2 = (x[1, i] - mu2) * r2
                g0 += d1
                g1 += d2
                q1 += d1 * d1
                q2 += d2 * d2
            offset = group // 2
            while offset > 0:
                g0 += cuda.shfl_down_sync(0xFFFFFFFF, g0, offset)
                g1 += cuda.shfl_down_sync(0xFFFFFFFF, g1, offset)
                q1 += cuda.shfl_down_sync(0xFFFFFFFF, q1, offset)
                q2 += cuda.shfl_down_sync(0xFFFFFFFF, q2, offset)
                offset //= 2
            if valid and lane == 0:
                fn = float32(n)
                out[s] = -half * (q1 + q2) - fn * (math.log(s1) + math.log(s2)) - fn * log_2pi
                grad[s, 0] = g0 * r1
                grad[s, 1] = g1 * r2
                grad[s, 2] = (q1 - fn) * r1
                grad[s, 3] = (q2 - fn) * r2
            base += nwarps * per_warp

    return kernel


def make_shared_kernel(group):
    """The same layout with the group's sums met in shared memory between block barriers instead of shuffles
    (what the CUDA simulator can run: it has no warp shuffles)."""
    per_block = THREADS // group

    @cuda.jit
    def kernel(thetas, x, out, grad):
        sums = cuda.shared.array((4, THREADS), float32)
        nsamples = thetas.shape[0]
        n = x.shape[1]
        t = cuda.threadIdx.x
        lane = t % group
        base = cuda.blockIdx.x * per_block
        while base < nsamples:  # uniform over the block, so every thread reaches the barriers
            s = base + t // group
            valid = s < nsamples
            if not valid:
                s = nsamples - 1
            mu1, mu2, s1, s2 = thetas[s, 0], thetas[s, 1], thetas[s, 2], thetas[s, 3]
            r1 = one / s1
            r2 = one / s2
            g0 = zero
            g1 = zero
            q1 = zero
            q2 = zero
            for i in range(lane, n, group):
                d1 = (x[0, i] - mu1) * r1
                d2 = (x[1, i] - mu2) * r2
                g0 += d1
                g1 += d2
                q1 += d1 * d1
                q2 += d2 * d2
            sums[0, t] = g0
            sums[1, t] = g1
            sums[2, t] = q1
            sums[3, t] = q2
            cuda.syncthreads()
            offset = group // 2
            while offset > 0:
                if lane < offset:
                    for k in range(4):
                        sums[k, t] += sums[k, t + offset]
                cuda.syncthreads()
                offset //= 2
            if valid and lane == 0:
                g0, g1, q1, q2 = sums[0, t], sums[1, t], sums[2, t], sums[3, t]
                fn = float32(n)
                out[s] = -half * (q1 + q2) - fn * (math.log(s1) + math.log(s2)) - fn * log_2pi
                grad[s, 0] = g0 * r1
                grad[s, 1] = g1 * r2
                grad[s, 2] = (q1 - fn) * r1
                grad[s, 3] = (q2 - fn) * r2
            cuda.syncthreads()
            base += cuda.gridDim.x * per_block

    return kernel


def make_blocked_kernel(block):
    """One lane per sample and ``block`` samples per thread: the thread's samples share each loaded data point
    (their accumulators live in registers: local arrays indexed by unrolled constant loops)."""

    @cuda.jit
    def kernel(thetas, x, out, grad):
        nsamples = thetas.shape[0]
        n = x.shape[1]
        mu1 = cuda.local.array(block, float32)
        mu2 = cuda.local.array(block, float32)
        r1 = cuda.local.array(block, float32)
        r2 = cuda.local.array(block, float32)
        g0 = cuda.local.array(block, float32)
        g1 = cuda.local.array(block, float32)
        q1 = cuda.local.array(block, float32)
        q2 = cuda.local.array(block, float32)
        start = (cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x) * block
        stride = cuda.gridDim.x * cuda.blockDim.x * block
        while start < nsamples:
            for r in range(block):
                s = min(start + r, nsamples - 1)  # past the end: repeat the last sample, written once below
                mu1[r], mu2[r] = thetas[s, 0], thetas[s, 1]
                r1[r], r2[r] = one / thetas[s, 2], one / thetas[s, 3]
                g0[r] = zero
                g1[r] = zero
                q1[r] = zero
                q2[r] = zero
            for i in range(n):
                x1, x2 = x[0, i], x[1, i]
                for r in range(block):
                    d1 = (x1 - mu1[r]) * r1[r]
                    d2 = (x2 - mu2[r]) * r2[r]
                    g0[r] += d1
                    g1[r] += d2
                    q1[r] += d1 * d1
                    q2[r] += d2 * d2
            fn = float32(n)
            for r in range(block):
                s = start + r
                if s < nsamples:
                    out[s] = -half * (q1[r] + q2[r]) - fn * (math.log(thetas[s, 2]) + math.log(thetas[s, 3])) \
                        - fn * log_2pi
                    grad[s, 0] = g0[r] * r1[r]
                    grad[s, 1] = g1[r] * r2[r]
                    grad[s, 2] = (q1[r] - fn) * r1[r]
                    grad[s, 3] = (q2[r] - fn) * r2[r]
            start += stride

    return kernel


def reference(thetas, x):
    t = thetas.astype(np.float64)
    x = x.astype(np.float64)
    n = x.shape[1]
    d1 = (x[0][None, :] - t[:, :1]) / t[:, 2:3]
    d2 = (x[1][None, :] - t[:, 1:2]) / t[:, 3:4]
    q1, q2 = (d1 * d1).sum(1), (d2 * d2).sum(1)
    value = -0.5 * (q1 + q2) - n * (np.log(t[:, 2]) + np.log(t[:, 3])) - n * LOG_2PI
    grad = np.column_stack([d1.sum(1) / t[:, 2], d2.sum(1) / t[:, 3], (q1 - n) / t[:, 2], (q2 - n) / t[:, 3]])
    return value, grad


def draw(batch, npoints, seed=0):
    rng = np.random.default_rng(seed)
    thetas = np.column_stack([rng.uniform(0.4, 0.6, batch), rng.uniform(0.4, 0.6, batch),
                              rng.uniform(0.05, 0.2, batch), rng.uniform(0.05, 0.2, batch)]).astype(np.float32)
    x = rng.normal(0.5, 0.1, size=(2, npoints)).astype(np.float32)
    return thetas, x


def run_layout(kernel, group, d_thetas, d_x, out, grad, repeats, timed, per_thread=1):
    batch = d_thetas.shape[0]
    threads = -(-batch // per_thread) * group  # ceiling divisions: a thread per (lane, group of samples)
    blocks = max(1, min(65535, -(-threads // THREADS)))
    launch = kernel[blocks, THREADS]
    launch(d_thetas, d_x, out, grad)
    cuda.synchronize()
    if not timed:
        return float("nan")
    start, end = cuda.event(), cuda.event()
    start.record()
    for _ in range(repeats):
        launch(d_thetas, d_x, out, grad)
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / repeats


def fp32_peak():
    device = cuda.get_current_device()
    lanes = {(8, 0): 64, (8, 6): 128, (8, 9): 128, (9, 0): 128}.get(tuple(device.compute_capability))
    return device.MULTIPROCESSOR_COUNT * lanes * 2 * device.CLOCK_RATE * 1e3 if lanes else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, nargs="+", default=[65536, 16 * 65536])
    parser.add_argument("--npoints", type=int, default=1000)
    parser.add_argument("--groups", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32])
    parser.add_argument("--blocking", type=int, nargs="+", default=[2, 4, 8],
                        help="samples per thread of the register-blocked layouts (one lane per sample)")
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--simulate", action="store_true", help="tiny correctness run under the CUDA simulator")
    opts = parser.parse_args(argv)

    if opts.simulate:
        if not SIMULATED:
            sys.exit("--simulate needs NUMBA_ENABLE_CUDASIM=1 set before Python starts")
        opts.batch, opts.npoints, opts.repeats = [37], 45, 1
    elif SIMULATED or not cuda.is_available():
        sys.exit("bench_gpu_layouts.py: no CUDA device here (use --simulate under NUMBA_ENABLE_CUDASIM=1)")
    peak = None if opts.simulate else fp32_peak()
    name = "simulator" if opts.simulate else cuda.get_current_device().name
    print(f"gaussian4d value+grad, float32, N = {opts.npoints}, {THREADS} threads per block, device {name}, "
          f"median of {opts.repeats} queued launches (CUDA events); FP32 peak {peak or float('nan'):.3e} FLOP/s\n")
    print("| samples B | lanes per sample G | sums met by | ms / batch | samples x points / s | fraction of FP32 peak | max rel. error |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    failed = False
    for batch in opts.batch:
        thetas, x = draw(batch, opts.npoints)
        want_value, want_grad = reference(thetas, x)
        d_thetas, d_x = cuda.to_device(thetas), cuda.to_device(x)
        out, grad = cuda.device_array(batch, np.float32), cuda.device_array((batch, 4), np.float32)
        layouts = [("shared", g, 1, make_shared_kernel(g)) for g in opts.groups]
        if not opts.simulate:  # the simulator has no warp shuffles
            layouts = [("shuffle", g, 1, make_kernel(g)) for g in opts.groups] + layouts
        layouts += [(f"- ({r} samples a thread)", 1, r, make_blocked_kernel(r)) for r in opts.blocking]
        for reduction, group, per_thread, kernel in layouts:
            seconds = run_layout(kernel, group, d_thetas, d_x, out, grad, opts.repeats,
                                 timed=not opts.simulate, per_thread=per_thread)
            got_value, got_grad = out.copy_to_host(), grad.copy_to_host()
            # errors relative to the largest magnitude: the value crosses zero, where a relative error means nothing
            error = max(np.max(np.abs(got_value - want_value)) / np.abs(want_value).max(),
                        np.max(np.abs(got_grad - want_grad) / (np.abs(want_grad).max(0) + 1e-30)))
            failed |= not error < 1e-3
            rate = batch * opts.npoints / seconds
            frac = f"{rate * FLOPS_PER_POINT / peak:.1%}" if peak else "-"
            print(f"| {batch} | {group} | {reduction} | {seconds * 1e3:.4f} | {rate:.3e} | {frac} | {error:.1e} |", flush=True)
    if failed:
        sys.exit("a layout disagrees with the float64 reference by more than 1e-3")


if __name__ == "__main__":
    main()
