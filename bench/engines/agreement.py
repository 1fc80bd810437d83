#!/usr/bin/env python3
"""Agreement of magpie's serving metrics with an engine's own benchmark client
on one server.

usage: agreement.py WORKDIR ROUNDS [--client vllm|sglang]
Reads, for i = 1..ROUNDS, the engine client's result WORKDIR/<client>_<i>.json
(`vllm bench serve --save-result`: one JSON object; `python -m
sglang.bench_serving --output-file`: JSON lines, the last one is taken) and
magpie's WORKDIR/mag_<i>/benchmark_*/benchmark_report.json. The two clients
ran alternately against the same server, so round i of each saw nearly the
same server state: the comparison is paired. For each metric it prints both
tools' medians and spreads (max - min) and the ratio magpie / client as the
geometric mean of the per-round ratios with its 95 % confidence interval
(Student t on the log ratios). A metric agrees when that interval overlaps
[0.95, 1.05], i.e. the data show no difference larger than 5 %; a wide
interval (a noisy machine) is reported as such, not hidden. Exit 0 when
every metric agrees.
"""
import glob
import json
import math
import statistics
import sys

# metric, key in the client's JSON per client, key path in magpie's report, unit
KEYS = [("request_throughput", {"vllm": "request_throughput", "sglang": "request_throughput"},
         ("throughput", "request_throughput"), "req/s"),
        ("output_throughput", {"vllm": "output_throughput", "sglang": "output_throughput"},
         ("throughput", "output_throughput"), "tok/s"),
        ("mean_ttft_ms", {"vllm": "mean_ttft_ms", "sglang": "mean_ttft_ms"},
         ("latency", "ttft", "mean_ms"), "ms"),
        ("mean_tpot_ms", {"vllm": "mean_tpot_ms", "sglang": "mean_tpot_ms"},
         ("latency", "tpot", "mean_ms"), "ms"),
        ("mean_itl_ms", {"vllm": "mean_itl_ms", "sglang": "mean_itl_ms"},
         ("latency", "itl", "mean_ms"), "ms"),
        ("mean_e2el_ms", {"vllm": "mean_e2el_ms", "sglang": "mean_e2e_latency_ms"},
         ("latency", "e2el", "mean_ms"), "ms")]

# two-sided 95 % Student t quantiles by degrees of freedom
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
        16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042}


def t975(df):
    return T975.get(df) or T975[max(k for k in T975 if k <= df)]


def load_client(path):
    with open(path) as f:
        text = f.read().strip()
    try:
        return json.loads(text)
    except ValueError:  # JSON lines: the last line is this run's
        return json.loads(text.splitlines()[-1])


def ratio_interval(pairs):
    """Geometric mean of b/a over the rounds and its 95 % interval."""
    logs = [math.log(b / a) for a, b in pairs if a > 0 and b > 0]
    if not logs:
        return None
    m = statistics.mean(logs)
    if len(logs) < 2:
        return math.exp(m), float("nan"), float("nan")
    h = t975(len(logs) - 1) * statistics.stdev(logs) / math.sqrt(len(logs))
    return math.exp(m), math.exp(m - h), math.exp(m + h)


def main():
    args = sys.argv[1:]
    client = "vllm"
    if "--client" in args:
        k = args.index("--client")
        client = args[k + 1]
        del args[k:k + 2]
    w, n = args[0], int(args[1])
    rounds = []
    for i in range(1, n + 1):
        try:
            v = load_client(f"{w}/{client}_{i}.json")
            m = json.load(open(sorted(glob.glob(f"{w}/mag_{i}/benchmark_*/benchmark_report.json"))[-1]))
        except (OSError, ValueError, IndexError):
            continue
        if m.get("success"):
            rounds.append((v, m))
    ok = len(rounds) == n and n >= 2
    print(f"agreement over {len(rounds)} of {n} paired rounds ({client} client, then magpie, "
          f"same server):")
    print(f"{'metric':20} {client + ' median':>14} {'spread':>8} {'magpie median':>14} "
          f"{'spread':>8} {'ratio magpie/' + client:>18} {'95 % interval':>17}")
    for name, ck, mk, unit in KEYS:
        pairs = []
        for v, m in rounds:
            x = m
            for k in mk:
                x = x[k]
            pairs.append((float(v[ck[client]]), float(x)))
        if not pairs:
            ok = False
            continue
        a = [p[0] for p in pairs]
        b = [p[1] for p in pairs]
        r = ratio_interval(pairs)
        if r is None:
            ok = False
            continue
        g, lo, hi = r
        agree = not (lo > 1.05 or hi < 0.95) if not math.isnan(lo) else abs(g - 1) <= 0.05
        ok &= agree
        verdict = "not judged" if math.isnan(lo) else "ok" if agree else "DIFFERS"
        print(f"{name:20} {statistics.median(a):14.3f} {max(a) - min(a):8.3f} "
              f"{statistics.median(b):14.3f} {max(b) - min(b):8.3f} {g:18.3f} "
              f"{'[%.3f, %.3f]' % (lo, hi):>17}  {verdict} ({unit})")
    if len(rounds) < 2:
        print("agreement: not judged: %d paired round(s) give no interval (ROUNDS >= 2)"
              % len(rounds))
        return 1
    print("agreement: " + ("no difference beyond 5 % shown" if ok else "NOT in agreement"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
