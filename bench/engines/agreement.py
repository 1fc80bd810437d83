#!/usr/bin/env python3
"""Agreement of magpie's serving metrics with `vllm bench serve` on one server.

usage: agreement.py WORKDIR ROUNDS
Reads WORKDIR/vllm_<i>.json (vllm bench serve --save-result) and
WORKDIR/mag_<i>/benchmark_vllm_*/benchmark_report.json for i = 1..ROUNDS
(the two clients were run alternately against the same server). For each
metric it prints both tools' medians and run-to-run spreads (max - min) and
calls the tools in agreement when the medians differ by no more than the
larger spread plus 5 % of the value (few rounds underestimate the noise).
Exit 0 when every metric agrees.
"""
import glob
import json
import statistics
import sys

KEYS = [("request_throughput", "request_throughput", "req/s"),
        ("output_throughput", "output_throughput", "tok/s"),
        ("mean_ttft_ms", ("ttft", "mean_ms"), "ms"),
        ("mean_tpot_ms", ("tpot", "mean_ms"), "ms"),
        ("mean_itl_ms", ("itl", "mean_ms"), "ms"),
        ("mean_e2el_ms", ("e2el", "mean_ms"), "ms")]


def main():
    w, n = sys.argv[1], int(sys.argv[2])
    v, m = [], []
    for i in range(1, n + 1):
        try:
            v.append(json.load(open(f"{w}/vllm_{i}.json")))
        except (OSError, ValueError):
            pass
        for p in glob.glob(f"{w}/mag_{i}/benchmark_vllm_*/benchmark_report.json"):
            m.append(json.load(open(p)))
    ok = len(v) == n and len(m) == n and all(r["success"] for r in m)
    print(f"agreement over {len(v)} vllm bench serve and {len(m)} magpie runs (alternating):")
    print(f"{'metric':20} {'vllm median':>12} {'spread':>8} {'magpie median':>14} {'spread':>8} "
          f"{'diff %':>7}")
    for vk, mk, unit in KEYS:
        vv = [r[vk] for r in v]
        mv = [(r["throughput"][mk] if isinstance(mk, str) else r["latency"][mk[0]][mk[1]])
              for r in m]
        if not vv or not mv:
            ok = False
            continue
        a, b = statistics.median(vv), statistics.median(mv)
        sa, sb = max(vv) - min(vv), max(mv) - min(mv)
        diff = (b - a) / a * 100 if a else 0.0
        agree = abs(b - a) <= max(sa, sb) + 0.05 * abs(a)
        ok &= agree
        print(f"{vk:20} {a:12.3f} {sa:8.3f} {b:14.3f} {sb:8.3f} {diff:+7.1f}  "
              f"{'ok' if agree else 'DIFFERS'} ({unit})")
    print("agreement: " + ("within run-to-run noise" if ok else "NOT within noise"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
