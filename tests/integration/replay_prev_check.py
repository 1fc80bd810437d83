"""An independent check of replay_summary's trace_prev_* (src/replay/producer.c)
on a real trace, straight from its JSON (no magpie code): for each call of a
selected op, the GPU activity just before the call's first kernel on the same
device and stream, and the innermost cpu_op around that activity's launch;
the most common such op (any of those tied), its share of the calls and the
median idle gap must be the summary's.

Usage: replay_prev_check.py TRACE(.json[.gz]) replay_summary.json"""
import bisect, gzip, json, statistics, sys
from collections import Counter
trace, summary = sys.argv[1], sys.argv[2]
ev = json.load(gzip.open(trace) if trace.endswith(".gz") else open(trace))["traceEvents"]
X = [e for e in ev if e.get("ph") == "X"]
gpu = [e for e in X if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
by_corr, streams = {}, {}
for g in gpu:
    by_corr.setdefault(g["args"].get("correlation"), []).append(g)
    streams.setdefault((g["pid"], g["args"].get("stream")), []).append(g)
for v in streams.values():
    v.sort(key=lambda g: g["ts"])
pos = {id(g): i for v in streams.values() for i, g in enumerate(v)}
launches = {}
launch_of = {}
for e in X:
    if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
        launches.setdefault((e["pid"], e["tid"]), []).append(e)
        launch_of[e["args"]["correlation"]] = e
for v in launches.values():
    v.sort(key=lambda e: e["ts"])
lts = {k: [e["ts"] for e in v] for k, v in launches.items()}
ops = {}
for e in X:
    if e.get("cat") == "cpu_op":
        ops.setdefault((e["pid"], e["tid"]), []).append(e)
for v in ops.values():
    v.sort(key=lambda e: (e["ts"], -e["dur"]))
ots = {k: [e["ts"] for e in v] for k, v in ops.items()}


def innermost(pid, tid, t):
    v = ops.get((pid, tid), [])
    for e in reversed(v[:bisect.bisect_right(ots.get((pid, tid), []), t)]):
        if e["ts"] <= t <= e["ts"] + e["dur"]:
            return e
    return None


def tup(x):
    return tuple(tup(y) for y in x) if isinstance(x, list) else x


def key(e):
    a = e["args"]
    return repr(tuple(repr(tup(a.get(k)))
                      for k in ("Input type", "Input Strides", "Concrete Inputs")))


def producers(calls):
    prods, gaps, n = Counter(), [], 0
    for c in calls:
        k = (c["pid"], c["tid"])
        lo = bisect.bisect_left(lts.get(k, []), c["ts"])
        hi = bisect.bisect_right(lts.get(k, []), c["ts"] + c["dur"])
        ks = [g for r in launches.get(k, [])[lo:hi]
              for g in by_corr.get(r["args"]["correlation"], [])]
        if not ks:
            continue
        n += 1
        first = min(ks, key=lambda g: g["ts"])
        v = streams[(first["pid"], first["args"].get("stream"))]
        i = pos[id(first)]
        if i == 0:
            continue
        p = v[i - 1]
        gaps.append(first["ts"] - (p["ts"] + p["dur"]))
        lr = launch_of.get(p["args"].get("correlation"))
        po = innermost(lr["pid"], lr["tid"], lr["ts"]) if lr else None
        if po:
            prods[(po["name"], repr(tup(po["args"].get("Input Dims", []))))] += 1
    return prods, gaps, n


s = json.load(open(summary))
checked = 0
for o in s["ops"]:
    if "->" in o["op"] or o["op"].startswith("nccl"):
        continue
    calls = [e for v in ops.values() for e in v if e["name"] == o["op"]
             and repr(tup(e["args"].get("Input Dims", []))) == o["shape_key"]]
    groups = {}
    for c in sorted(calls, key=lambda e: e["ts"]):
        groups.setdefault(key(c), []).append(c)
    seen = []
    for g in groups.values():  # rows of the same dims differ in types/strides: one is this op
        prods, gaps, n = producers(g)
        top = max(prods.values()) if prods else 0
        tied = [k for k, m in prods.items() if m == top]
        got = (o["trace_prev_op"], o["trace_prev_shape"])
        ok = got in tied and abs(o["trace_prev_share"] - top / n) < 1e-9 and \
            abs(o["trace_gap_us"] - statistics.median(gaps)) < 0.01 if tied else \
            not o["trace_prev_op"]
        seen.append((prods.most_common(2), n, statistics.median(gaps) if gaps else None))
        if ok:
            break
    else:
        raise AssertionError((o["n"], o["op"], o["trace_prev_op"], o["trace_prev_shape"],
                              o["trace_prev_share"], o["trace_gap_us"], seen))
    checked += 1
print("trace_prev ok: %d ops checked" % checked)
