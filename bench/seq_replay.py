#!/usr/bin/env python3
"""Error rates of compare's sequential decision, replayed on real samples.

A `--timing fixed` compare times every kernel round-robin to its noise
target (thousands of samples each on a GPU), and its report keeps every
sample (latency_result.wall_stats.samples_ms). This program replays the
sequential rule of the runner (runtime/magpie_runner.py: its looks, its
per-look alpha, seq_look's exact-rank median intervals) on windows of
those recorded series: each trial starts at a random round and feeds the
baseline's and one candidate's samples from there, round by round, until
the rule decides or max_samples is reached. So each trial sees the real
GPU's noise, drift and order effects of the recorded run, and hundreds of
trials cost no GPU time. What it cannot see: a fresh process's start-up
(clocks, L2, allocator state differ between processes), which the real
trials of bench/kernel_eval_speed.sh (seqerr) do.

  bench/seq_replay.py REPORT.json [--trials 1000] [--threshold 0.01]
        [--alpha 0.05] [--min-samples 10] [--max-samples 10000]
        [--kernels K] [--seed 1] [--json OUT]

--kernels: the number of timed kernels of the compare being modelled
(default: the report's), which sets the per-look alpha (Bonferroni over
candidates and looks). Prints, per candidate: the fixed run's ratio of
medians over all samples, how often each decision was reached, and the
median and 95th percentile of samples and of timed GPU seconds (both
kernels' samples) a decision took.
"""
import argparse
import json
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runtime"))
import magpie_runner as mr  # noqa: E402


def trial(base, cand, start, seq_args):
    """(decision, samples per kernel, GPU seconds) of one replayed trial."""
    min_s, max_s, alpha_look, thr = seq_args
    n_max = min(max_s, len(base) - start, len(cand) - start)
    n = 0
    for n in range(1, n_max + 1):
        if mr.seq_is_look(n, min_s, max_s):
            d, _, _ = mr.seq_look(base[start:start + n], cand[start:start + n], alpha_look, thr)
            if d != "UNDECIDED":
                break
    else:
        d = "UNDECIDED"
    gpu_s = (sum(base[start:start + n]) + sum(cand[start:start + n])) / 1000.0
    return d, n, gpu_s


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("report")
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--threshold", type=float)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--min-samples", type=int, default=10)
    ap.add_argument("--max-samples", type=int, default=10000)
    ap.add_argument("--kernels", type=int)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--window", type=int, default=2000,
                    help="longest run a trial may need (trials start where this many remain)")
    ap.add_argument("--json")
    a = ap.parse_args()
    try:
        doc = json.load(open(a.report))
        res = doc["results"]
        ks = res["kernel_results"]
        series = [k["latency_result"]["wall_stats"]["samples_ms"] for k in ks]
        ids = [k["extra"]["kernel_id"] for k in ks]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("%s: not a compare report with samples (%s)" % (a.report, e), file=sys.stderr)
        return 2
    cm = res.get("comparison_metrics", {})
    thr = a.threshold if a.threshold is not None else cm.get("threshold", 0.01)
    nk = a.kernels or len(ks)
    nlooks = mr.seq_nlooks(a.min_samples, a.max_samples)
    alpha_look = a.alpha / (max(1, nk - 1) * nlooks)
    seq_args = (a.min_samples, a.max_samples, alpha_look, thr)
    rng = random.Random(a.seed)
    base = series[0]
    out = {"report": a.report, "threshold": thr, "alpha": a.alpha, "alpha_look": alpha_look,
           "looks_max": nlooks, "trials": a.trials, "candidates": []}
    print("baseline %s: %d samples, median %.4f ms; threshold %.3f, alpha %.3f over %d looks "
          "and %d candidates (per look %.2e)" % (ids[0], len(base), statistics.median(base),
                                                 thr, a.alpha, nlooks, max(1, nk - 1),
                                                 alpha_look))
    for cid, cand in zip(ids[1:], series[1:]):
        m = min(len(base), len(cand))
        if m < a.min_samples * 2:
            print("%s: too few samples (%d)" % (cid, m))
            continue
        ratio = statistics.median(base[:m]) / statistics.median(cand[:m])  # speedup
        last = max(0, m - min(a.window, m))
        counts, ns, gs = {}, [], []
        for _ in range(a.trials):
            d, n, g = trial(base[:m], cand[:m], rng.randint(0, last), seq_args)
            counts[d] = counts.get(d, 0) + 1
            ns.append(n)
            gs.append(g)
        row = {"id": cid, "samples": m, "speedup_all_samples": ratio, "decisions": counts,
               "samples_median": statistics.median(ns), "samples_p95": pct(ns, 0.95),
               "gpu_s_median": statistics.median(gs), "gpu_s_p95": pct(gs, 0.95),
               "gpu_s_max": max(gs)}
        out["candidates"].append(row)
        print("%-18s speedup over all %d samples %.4fx; %s; samples to decide median %d, "
              "p95 %d; timed GPU s median %.3f, p95 %.3f, max %.3f" % (
                  cid, m, ratio, ", ".join("%s %d" % kv for kv in sorted(counts.items())),
                  row["samples_median"], row["samples_p95"], row["gpu_s_median"],
                  row["gpu_s_p95"], row["gpu_s_max"]))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
