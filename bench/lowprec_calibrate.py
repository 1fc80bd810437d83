#!/usr/bin/env python3
"""Calibrates the high-precision correctness rule of the Python runner
(runtime/magpie_check.py, docs/correctness.md): for low-precision problems
(fp16, bf16, fp8), correct variants (fused, other reduction orders, split-K,
low-precision partials) and subtly wrong ones (a dropped term, a skipped
tail, one element off, low-precision accumulation), prints per variant the
table verdict and hp_ratio, the largest error against the float64
reference in units of the reference's own error bound. The factor HP_FACTOR
must lie between the correct variants' ratios and the wrong ones'.

    python3 bench/lowprec_calibrate.py [--device cuda] [--seeds 3] [--scale N] [--json OUT]
    python3 bench/lowprec_calibrate.py --from-json OUT      (the table again)

Plain PyTorch variants (CPU or GPU); bench/lowprec_triton.py adds Triton
kernels on a GPU.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime"))
import magpie_check as mc  # noqa: E402

BF, HF, F32 = torch.bfloat16, torch.float16, torch.float32


def seq_acc(parts, dt):
    """Sums the list of fp32 partial results one after another, rounding the
    running sum to dt after each addition (low-precision accumulation)."""
    acc = torch.zeros_like(parts[0], dtype=dt)
    for p in parts:
        acc = (acc.float() + p.float()).to(dt)
    return acc


def chunks_mm(a, b, n):
    k = a.shape[1]
    step = k // n
    return [a[:, i:i + step].float() @ b[i:i + step].float() for i in range(0, k, step)]


def skip_tail(y, n=3):
    y = y.clone().flatten()
    y[-n:] = 0
    return y.view_as(y)


def matmul_problem(dt, dev, m=256, k=4096, n=256):
    def inputs():
        return [torch.randn(m, k, device=dev).to(dt), torch.randn(k, n, device=dev).to(dt)]

    def ref(a, b):
        return a @ b

    def tail(y):
        y = y.clone()
        y.view(-1)[-3:] = 0
        return y

    def one_off(y):
        y = y.clone()
        y[-1, -1] = y[-1, -2]
        return y

    var = {
        "fused_fp32": (True, lambda a, b: (a.float() @ b.float()).to(dt)),
        "splitk2_fp32": (True, lambda a, b: sum(chunks_mm(a, b, 2)).to(dt)),
        "splitk4_lowp_partials": (None, lambda a, b: seq_acc(
            [p.to(dt) for p in chunks_mm(a, b, 4)], dt)),
        "splitk16_lowp_acc": (None, lambda a, b: seq_acc(chunks_mm(a, b, 16), dt)),
        "splitk64_lowp_acc": (False, lambda a, b: seq_acc(chunks_mm(a, b, 64), dt)),
        "seq_lowp_acc": (False, lambda a, b: seq_acc(chunks_mm(a, b, 512), dt)),
        "drop_one_term": (False, lambda a, b: (a[:, :-1].float() @ b[:-1].float()).to(dt)),
        "skip_tail3": (False, lambda a, b: tail(ref(a, b))),
        "one_element_off": (False, lambda a, b: one_off(ref(a, b))),
    }
    return inputs, ref, var


def softmax_problem(dt, dev, rows=512, cols=4096):
    def inputs():
        return [(torch.randn(rows, cols, device=dev) * 3).to(dt)]

    def ref(x):
        return torch.softmax(x, dim=-1)

    def unfused(x):  # four low-precision kernels, a rounding after each
        m = x.max(dim=-1, keepdim=True).values
        e = torch.exp(x - m)
        return e / e.sum(dim=-1, keepdim=True)

    def fused(x):
        return torch.softmax(x.float(), dim=-1).to(dt)

    def blocked_online(x):  # online softmax over 8 column blocks, fp32 state
        xf = x.float()
        m = torch.full((x.shape[0], 1), -float("inf"), device=x.device)
        s = torch.zeros((x.shape[0], 1), device=x.device)
        for blk in xf.split(512, dim=-1):
            nm = torch.maximum(m, blk.max(dim=-1, keepdim=True).values)
            s = s * torch.exp(m - nm) + torch.exp(blk - nm).sum(dim=-1, keepdim=True)
            m = nm
        return (torch.exp(xf - m) / s).to(dt)

    def lowp_seq_sum(x):  # the denominator summed in dt, 64 columns at a time
        xf = x.float()
        m = xf.max(dim=-1, keepdim=True).values
        e = torch.exp(xf - m)
        s = seq_acc([p.sum(dim=-1, keepdim=True) for p in e.split(64, dim=-1)], dt)
        return (e / s.float()).to(dt)

    def drop_last(x):
        xf = x.float()
        m = xf.max(dim=-1, keepdim=True).values
        e = torch.exp(xf - m)
        return (e / e[:, :-1].sum(dim=-1, keepdim=True)).to(dt)

    def tail(x):
        y = fused(x).clone()
        y.view(-1)[-3:] = 0
        return y

    def one_off(x):
        y = fused(x).clone()
        y[-1, -1] = y[-1, -2]
        return y

    var = {
        "fused_fp32": (True, fused),
        "unfused_lowp": (True, unfused),
        "online_blocked_fp32": (True, blocked_online),
        "lowp_seq_denominator": (False, lowp_seq_sum),
        "drop_last_in_sum": (False, drop_last),
        "skip_tail3": (False, tail),
        "one_element_off": (False, one_off),
    }
    return inputs, ref, var


def rmsnorm_problem(dt, dev, rows=512, cols=4096):
    def inputs():
        return [torch.randn(rows, cols, device=dev).to(dt),
                (1 + 0.1 * torch.randn(cols, device=dev)).to(dt)]

    def ref(x, w):  # a naive reference: each op in dt
        var = x.pow(2).mean(dim=-1, keepdim=True)
        return x * torch.rsqrt(var + 1e-6) * w

    def fused(x, w):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).to(dt)

    def blocked(x, w):  # sum of squares over 16 blocks, fp32
        xf = x.float()
        ss = sum(b.pow(2).sum(-1, keepdim=True) for b in xf.split(256, dim=-1))
        return (xf * torch.rsqrt(ss / x.shape[-1] + 1e-6) * w.float()).to(dt)

    def no_weight_last(x, w):  # forgets the weight on the last column
        y = fused(x, w).clone()
        y[:, -1] = fused(x, torch.ones_like(w))[:, -1]
        return y

    def lowp_seq(x, w):
        xf = x.float()
        ss = seq_acc([b.pow(2).sum(-1, keepdim=True) for b in xf.split(64, dim=-1)], dt)
        return (xf * torch.rsqrt(ss.float() / x.shape[-1] + 1e-6) * w.float()).to(dt)

    def drop_half_col(x, w):  # the mean over the first half only
        xf = x.float()
        v = xf[:, : x.shape[-1] // 2].pow(2).mean(-1, keepdim=True)
        return (xf * torch.rsqrt(v + 1e-6) * w.float()).to(dt)

    def tail(x, w):
        y = fused(x, w).clone()
        y.view(-1)[-3:] = 0
        return y

    var = {
        "fused_fp32": (True, fused),
        "blocked_fp32": (True, blocked),
        "lowp_seq_sumsq": (None, lowp_seq),
        "weight_missing_last_col": (False, no_weight_last),
        "mean_of_half_row": (False, drop_half_col),
        "skip_tail3": (False, tail),
    }
    return inputs, ref, var


def fp8_matmul_problem(dev, m=256, k=4096, n=256):
    f8 = torch.float8_e4m3fn

    def inputs():
        return [torch.randn(m, k, device=dev).to(f8), torch.randn(k, n, device=dev).to(f8),
                torch.tensor(0.5, device=dev)]

    def ref(a, b, s):  # dequantize to bf16, bf16 matmul (fp32 accumulation), bf16 out
        cdt = BF if a.dtype == f8 else a.dtype  # float64 in the high-precision run
        return (a.to(cdt) @ b.to(cdt)) * s.to(cdt)

    def fused(a, b, s):
        return ((a.float() @ b.float()) * s.float()).to(BF)

    def splitk(a, b, s):
        return (sum(chunks_mm(a, b, 4)) * s.float()).to(BF)

    def drop(a, b, s):
        return ((a[:, :-1].float() @ b[:-1].float()) * s.float()).to(BF)

    def lowp(a, b, s):
        return (seq_acc(chunks_mm(a, b, 64), BF).float() * s.float()).to(BF)

    def tail(a, b, s):
        y = fused(a, b, s).clone()
        y.view(-1)[-3:] = 0
        return y

    var = {
        "fused_fp32": (True, fused),
        "splitk4_fp32": (True, splitk),
        "splitk64_bf16_acc": (False, lowp),
        "drop_one_term": (False, drop),
        "skip_tail3": (False, tail),
    }
    return inputs, ref, var


def fp8_quant_problem(dev, rows=512, cols=4096):
    f8 = torch.float8_e4m3fn

    def inputs():
        return [torch.randn(rows, cols, device=dev).to(BF)]

    def ref(x):  # per-row absmax scaling to e4m3 (448), fp32 math (float64 in the hp run)
        xf = x.to(torch.promote_types(x.dtype, F32))
        s = xf.abs().amax(-1, keepdim=True) / 448.0
        return (xf / s).to(f8)

    def bf16_math(x):  # the scale and the division in bf16: double rounding
        s = x.abs().amax(-1, keepdim=True) / 448.0
        return (x / s).to(f8)

    def mul_recip(x):
        xf = x.float()
        r = 448.0 / xf.abs().amax(-1, keepdim=True)
        return (xf * r).to(f8)

    def wrong_scale(x):  # the absmax of the first half of the row only
        xf = x.float()
        s = xf[:, : cols // 2].abs().amax(-1, keepdim=True) / 448.0
        return (xf / s).clamp(-448, 448).to(f8)

    def tail(x):
        y = ref(x).clone()
        y.view(-1)[-3:] = 0
        return y

    def one_off(x):
        y = ref(x).clone()
        y.view(torch.uint8)[-1, -1] = y.view(torch.uint8)[-1, -2]
        return y

    var = {
        "mul_reciprocal_fp32": (True, mul_recip),
        "bf16_math": (True, bf16_math),
        "scale_from_half_row": (False, wrong_scale),
        "skip_tail3": (False, tail),
        "one_element_off": (False, one_off),
    }
    return inputs, ref, var


def print_header():
    print("%-20s %-24s %-7s %5s %8s %8s %8s %8s %6s %6s %7s %s" % (
        "problem", "variant", "expect", "table", "hp_ratio", "ref_rat", "rms_min", "rms_max",
        "ref/fl", "cnd/fl", "verdict", "max_abs"))


def print_variant(rs):
    """One line for the seeds rs of one variant: table ok on every seed, the
    largest figures over the seeds (rms: smallest and largest), and the
    verdict (pass: every seed, fail: every seed, mixed)."""
    def mx(k):
        return max((r[k] or 0) for r in rs)

    def fl(r, k):
        return (r[k] or 0) / (r["rms_floor"] or 1e-300)

    expect = rs[0]["expect_correct"]
    verdict = "pass" if all(r["ok"] for r in rs) else (
        "fail" if not any(r["ok"] for r in rs) else "mixed")
    print("%-20s %-24s %-7s %5s %8.3g %8.3g %8.3g %8.3g %6.2f %6.2f %7s %.3g%s" % (
        rs[0]["problem"], rs[0]["variant"],
        {True: "correct", False: "wrong", None: "either"}[expect],
        "ok" if all(r["table_mismatches"] == 0 for r in rs) else "no", mx("hp_ratio"),
        mx("ref_ratio"), min((r["rms_ratio"] or 0) for r in rs), mx("rms_ratio"),
        max(fl(r, "rms_err_ref") for r in rs), max(fl(r, "rms_err") for r in rs), verdict,
        mx("max_abs_err"),
        "  <-- UNEXPECTED" if (expect is True and verdict != "pass") or
        (expect is False and verdict != "fail") else ""))


def reprint(path):
    """The table of a saved --json file."""
    with open(path) as f:
        rows = json.load(f)["rows"]
    print_header()
    keys = []
    for r in rows:
        if (r["problem"], r["variant"]) not in keys:
            keys.append((r["problem"], r["variant"]))
    for k in keys:
        print_variant([r for r in rows if (r["problem"], r["variant"]) == k])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--json")
    ap.add_argument("--only")
    ap.add_argument("--from-json", help="print the table of a saved --json file and exit")
    ap.add_argument("--scale", type=int, default=1,
                    help="multiply the rows (and matmul N) by this: more elements per output")
    args = ap.parse_args()
    if args.from_json:
        reprint(args.from_json)
        return
    dev = torch.device(args.device)
    x = args.scale
    problems = [("matmul_bf16", matmul_problem(BF, dev, m=256 * x, n=256 * x)),
                ("matmul_fp16", matmul_problem(HF, dev, m=256 * x, n=256 * x)),
                ("softmax_bf16", softmax_problem(BF, dev, rows=512 * x)),
                ("softmax_fp16", softmax_problem(HF, dev, rows=512 * x)),
                ("rmsnorm_bf16", rmsnorm_problem(BF, dev, rows=512 * x)),
                ("rmsnorm_fp16", rmsnorm_problem(HF, dev, rows=512 * x)),
                ("fp8_matmul_bf16out", fp8_matmul_problem(dev, m=256 * x, n=256 * x)),
                ("fp8_quantize_e4m3", fp8_quant_problem(dev, rows=512 * x))]
    rows = []
    print_header()
    for pname, (inputs, ref, var) in problems:
        if args.only and args.only not in pname:
            continue
        for vname, (expect, fn) in var.items():
            mine = []
            for s in range(args.seeds):
                torch.manual_seed(42 + s)
                xs = inputs()
                r = ref(*xs)
                h = ref(*mc.upcast_args(torch, xs, torch.float64))
                c = fn(*xs)
                res = mc.compare(torch, c, r, h)
                o = res["outputs"][0] if res["outputs"] else {}
                mine.append({"problem": pname, "variant": vname, "expect_correct": expect,
                             "seed": 42 + s, "ok": res["ok"],
                             "table_mismatches": o.get("table_mismatches"),
                             "hp_ratio": o.get("hp_ratio"), "ref_ratio": o.get("ref_ratio"),
                             "rms_ratio": o.get("rms_ratio"), "rms_err": o.get("rms_err"),
                             "rms_err_ref": o.get("rms_err_ref"), "rms_floor": o.get("rms_floor"),
                             "max_abs_err": res["max_abs_err"], "dtype": o.get("dtype"),
                             "hp_atol": o.get("hp_atol"), "hp_rtol": o.get("hp_rtol")})
            rows += mine
            print_variant(mine)
    if args.json:
        with open(args.json, "w") as f:
            mc.dump_strict({"device": str(dev), "factor": mc.HP_FACTOR, "scale": x,
                            "rms_factor": mc.RMS_FACTOR,
                            "torch": torch.__version__, "rows": rows}, f)


if __name__ == "__main__":
    main()
