#!/usr/bin/env python3
"""The peer of `magpie gpu calibrate`: PyTorch's matmul and copy, timed the
way calibrate times (CUDA events around a batch of about 10 ms, a pause
twice as long after each, the median of 7 batches), at the shape magpie
picked for each dtype and at six square-ish shapes. Prints one line per
figure and writes JSON.

  python3 bench/calibrate_torch.py CALIB.json [--json OUT]
"""
import argparse
import json
import statistics
import time

import torch

SQUARES = [(4096, 4096, 4096), (8192, 8192, 8192), (16384, 16384, 16384),
           (8192, 8192, 16384), (16384, 16384, 8192), (6144, 6144, 6144)]
SLOW = [(2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192),
        (6144, 6144, 6144), (4096, 4096, 8192), (8192, 8192, 4096)]


def timed(fn, batch_ms=10.0, repeats=7):
    """median ms per call, as calib's cal_time: warm, size, time, pause twice
    as long as the batch ran"""
    fn()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record()
    fn()
    e1.record()
    e1.synchronize()
    one = e0.elapsed_time(e1)
    n = max(1, min(100000, int(batch_ms / max(one, 1e-4))))
    until = time.perf_counter() + batch_ms / 1e3
    while time.perf_counter() < until:
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        e0.record()
        for _ in range(n):
            fn()
        e1.record()
        e1.synchronize()
        out.append(e0.elapsed_time(e1) / n)
        time.sleep(2 * (time.perf_counter() - t0))
    return statistics.median(out), out


def rand(shape, dtype):
    if dtype == torch.int8:
        return torch.randint(-64, 64, shape, device="cuda", dtype=torch.int8)
    if dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        return (torch.rand(shape, device="cuda") * 2 - 1).to(dtype)
    return torch.rand(shape, device="cuda", dtype=dtype) * 2 - 1


def gemm_fn(key, m, n, k):
    """x (m, k) @ w(n, k)^T, the TN layout calibrate uses"""
    if key == "matrix_int8":
        a, b = rand((m, k), torch.int8), rand((n, k), torch.int8)
        return lambda: torch._int_mm(a, b.t())
    if key in ("matrix_fp8", "matrix_fp8_e5m2"):
        at = torch.float8_e5m2 if key == "matrix_fp8_e5m2" else torch.float8_e4m3fn
        a, b = rand((m, k), at), rand((n, k), torch.float8_e4m3fn)
        one = torch.ones((), device="cuda")
        return lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one,
                                        out_dtype=torch.bfloat16)
    dt = {"matrix_fp64": torch.float64, "matrix_fp32": torch.float32,
          "matrix_tf32": torch.float32, "matrix_fp16": torch.float16,
          "matrix_bf16": torch.bfloat16}[key]
    torch.backends.cuda.matmul.allow_tf32 = key == "matrix_tf32"
    a, b = rand((m, k), dt), rand((n, k), dt)
    return lambda: torch.matmul(a, b.t())


def tflops(key, shape):
    m, n, k = shape
    try:
        fn = gemm_fn(key, m, n, k)
        ms, _ = timed(fn)
    except (RuntimeError, TypeError) as e:  # a dtype torch cannot run here
        return None, str(e).splitlines()[0][:120]
    finally:
        torch.cuda.empty_cache()
    return 2.0 * m * n * k / (ms * 1e-3) / 1e12, None


def copy_gbps(nbytes):
    a = torch.empty(nbytes // 4, device="cuda", dtype=torch.float32).fill_(1)
    b = torch.empty_like(a)
    ms, _ = timed(lambda: b.copy_(a))
    return 2.0 * nbytes / (ms * 1e-3) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("calib")
    ap.add_argument("--json")
    args = ap.parse_args()
    cal = json.load(open(args.calib))
    rows = []
    for f in cal["magpie"]["figures"]:
        key = f["key"]
        if f.get("status") != "ok":
            continue
        if key.startswith("matrix_"):
            shape = tuple(f["shape_mnk"])
            same, err = tflops(key, shape)
            grid = SLOW if key in ("matrix_fp64", "matrix_fp32") else SQUARES
            best, best_shape = None, None
            for s in grid:
                v, _ = tflops(key, s)
                if v and (best is None or v > best):
                    best, best_shape = v, s
            rows.append({"key": key, "magpie": f["value"], "shape": shape, "torch_same": same,
                         "torch_best": best, "torch_best_shape": best_shape, "error": err})
        elif key == "hbm_copy":
            v = copy_gbps(int(f.get("bytes_per_launch", 0) or (8 << 30)) // 2)
            rows.append({"key": key, "magpie": f["value"], "torch_same": v})
    for r in rows:
        peer = max(x for x in (r.get("torch_same"), r.get("torch_best")) if x) \
            if (r.get("torch_same") or r.get("torch_best")) else None
        ratio = r["magpie"] / peer if peer else float("nan")
        r["ratio_to_best_torch"] = ratio
        print(f"{r['key']:18s} magpie {r['magpie']:9.1f}  torch same shape "
              f"{r.get('torch_same') or float('nan'):9.1f}  torch best "
              f"{r.get('torch_best') or float('nan'):9.1f} {r.get('torch_best_shape') or ''}  "
              f"magpie/torch {ratio:.3f} {r.get('error') or ''}")
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
