"""An independent check of replay_summary's trace_prev_* (src/replay/producer.c)
on a real trace, straight from its JSON (no magpie code): for each call of a
selected op, the GPU activity just before the call's first kernel on the same
device and stream, and the innermost cpu_op around that activity's launch;
the most common such op (any of those tied), its share of the calls and the
median idle gap must be the summary's.

Usage: replay_prev_check.py TRACE(.json[.gz]) replay_summary.json"""
import json, os, statistics, sys
from collections import Counter
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replay_trace_index import TraceIndex, tup  # noqa: E402

trace, summary = sys.argv[1], sys.argv[2]
T = TraceIndex(trace)


def producers(calls):
    prods, gaps, n = Counter(), [], 0
    for c in calls:
        ks = T.call_kernels(c)
        if not ks:
            continue
        n += 1
        first = min(ks, key=lambda g: g["ts"])
        v = T.streams[(first["pid"], first["args"].get("stream"))]
        i = T.pos[id(first)]
        if i == 0:
            continue
        p = v[i - 1]
        gaps.append(first["ts"] - (p["ts"] + p["dur"]))
        po = T.launcher(p)
        if po:
            prods[(po["name"], repr(tup(po["args"].get("Input Dims", []))))] += 1
    return prods, gaps, n


s = json.load(open(summary))
checked = 0
for o in s["ops"]:
    if "->" in o["op"] or o["op"].startswith("nccl"):
        continue
    seen = []
    for g in T.row_calls(o["op"], o["shape_key"]):  # one group is this op
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
