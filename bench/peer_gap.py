#!/usr/bin/env python3
"""peer_gap.py: the Python peer for magpie's gap analysis benchmark.

A plain Python implementation of Magpie's gap analysis, written from the
behaviour described in docs/magpie-compat.md, the way a Python tool does
it: json.load of the whole trace (gzip.open for .json.gz), then dict/list
passes over the event list. It exists so bench/trace_ingest.sh can measure
magpie against "what the Python tool costs" on the same machine and the same
data, and diff the two CSVs.

    peer_gap.py --trace-dir DIR [--out OUT] [--top-k N] [--json]

Writes OUT/gap_analysis/gap_analysis.csv (OUT defaults to the parent of the
trace dir, as Magpie's standalone mode does) and, with more than one rank,
gap_analysis_rank<N>.csv. Columns: Name, Calls, Self CUDA total (us),
Avg time (us), % Total, Input Shapes; numbers with 2 decimals; rows sorted by
total time, descending (ties keep first-seen order). Written with Python's csv
module defaults (minimal quoting, CRLF line ends), like Magpie.

Defaults as Magpie's YAML/CLI: window 0-100 %, categories kernel,gpu,
ignore gpu_user_annotation,user_annotation, min duration 0, top-k 20.
With --json a summary goes to stdout, including
"stats": {"bytes", "events", "seconds"} like magpie's.
"""

import argparse
import csv
import gzip
import json
import math
import os
import re
import statistics
import sys
import time


def find_rank_files(trace_dir):
    """Returns [(rank, path)]: *-rank-N.*pt.trace.json.gz, else *.json, else any."""
    names = sorted(os.listdir(trace_dir))
    rank_re = re.compile(r"-rank-(\d+)\.")
    for suffix in (".pt.trace.json.gz", ".pt.trace.json"):
        found = []
        for n in names:
            m = rank_re.search(n)
            if "-rank-" in n and n.endswith(suffix) and m:
                found.append((int(m.group(1)), os.path.join(trace_dir, n)))
        if found:
            return sorted(found, key=lambda x: x[0])
    files = [n for n in names if n.endswith(".json.gz")]
    files += [n for n in names if n.endswith(".json")]
    return [(i, os.path.join(trace_dir, n)) for i, n in enumerate(files)]


def load_events(path):
    """Whole-file json.load, as Magpie does; returns (events, uncompressed bytes)."""
    opener = gzip.open(path, "rt") if path.endswith(".json.gz") else open(path, "r")
    with opener as f:
        text = f.read()
    nbytes = len(text) if text.isascii() else len(text.encode())
    data = json.loads(text)
    del text
    if isinstance(data, dict):
        events = data.get("traceEvents", [])
    elif isinstance(data, list):
        events = data
    else:
        events = []
    return events, nbytes


def window(events, start_pct, end_pct):
    """Events overlapping [t_min + span*start%, t_min + span*end%] (not clipped)."""
    if start_pct <= 0 and end_pct >= 100:
        return events
    lo, hi = math.inf, -math.inf
    for ev in events:
        ts = ev.get("ts")
        if ts is None:
            continue
        lo = min(lo, ts)
        hi = max(hi, ts + ev.get("dur", 0))
    if lo == math.inf:
        return events
    span = hi - lo
    w0 = lo + span * start_pct / 100.0
    w1 = lo + span * end_pct / 100.0
    kept = []
    for ev in events:
        ts = ev.get("ts")
        if ts is not None and ts + ev.get("dur", 0) >= w0 and ts <= w1:
            kept.append(ev)
    return kept


def shape_string(dims):
    """[[5, 2880], [2880, 201088], []] -> "[5,2880]x[2880,201088]"."""
    parts = []
    for d in dims:
        if isinstance(d, list) and d:
            parts.append("[" + ",".join(str(x) for x in d) + "]")
    return "x".join(parts)


def analyze_rank(events, opts):
    """Returns (kernels sorted by total desc, rank total). A kernel is a dict."""
    events = window(events, opts.start_pct, opts.end_pct)

    shapes_by_ext = {}
    for ev in events:
        if "cpu_op" not in (ev.get("cat") or "").lower():
            continue
        args = ev.get("args", {})
        ext = args.get("External id")
        dims = args.get("Input Dims")
        if ext is not None and dims:
            s = shape_string(dims)
            if s:
                shapes_by_ext[ext] = s

    allow = [c.lower() for c in opts.categories]
    ignore = [c.lower() for c in opts.ignore_categories]
    by_name = {}
    for ev in events:
        cat = (ev.get("cat") or "").lower()
        if any(p in cat for p in ignore):
            continue
        if allow and not any(p in cat for p in allow):
            continue
        dur = ev.get("dur", 0.0)
        if opts.min_duration_us > 0 and dur < opts.min_duration_us:
            continue
        name = ev.get("name", "<?>")
        ext = ev.get("args", {}).get("External id")
        shape = shapes_by_ext.get(ext, "") if ext is not None else ""
        k = by_name.get(name)
        if k is None:
            k = by_name[name] = {"name": name, "total": 0.0, "calls": 0, "durs": [], "shapes": []}
        k["total"] += dur
        k["calls"] += 1
        k["durs"].append(dur)
        if shape:
            k["shapes"].append(shape)
    kernels = sorted(by_name.values(), key=lambda k: -k["total"])
    return kernels, sum(k["total"] for k in kernels)


def merge(rank_kernels):
    merged = {}
    for kernels in rank_kernels:
        for k in kernels:
            m = merged.get(k["name"])
            if m is None:
                m = merged[k["name"]] = {"name": k["name"], "total": 0.0, "calls": 0,
                                         "durs": [], "shapes": []}
            m["total"] += k["total"]
            m["calls"] += k["calls"]
            m["durs"].extend(k["durs"])
            m["shapes"].extend(k["shapes"])
    return sorted(merged.values(), key=lambda k: -k["total"])


def unique_shapes(k):
    seen = list(dict.fromkeys(s for s in k["shapes"] if s))
    return "; ".join(seen[:10])


def avg(k):
    return k["total"] / k["calls"] if k["calls"] else 0.0


def write_csv(path, kernels, total):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["Name", "Calls", "Self CUDA total (us)", "Avg time (us)", "% Total",
                    "Input Shapes"])
        for k in kernels:
            pct = k["total"] / total * 100.0 if total > 0 else 0.0
            w.writerow([k["name"], k["calls"], f"{k['total']:.2f}", f"{avg(k):.2f}",
                        f"{pct:.2f}", unique_shapes(k)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trace-dir", required=True)
    ap.add_argument("--out", "-o", default=None, help="output dir (default: parent of trace dir)")
    ap.add_argument("--top-k", type=int, default=20)
    ap.add_argument("--start-pct", type=float, default=0.0)
    ap.add_argument("--end-pct", type=float, default=100.0)
    ap.add_argument("--min-duration-us", type=float, default=0.0)
    ap.add_argument("--categories", nargs="*", default=["kernel", "gpu"],
                    help="allow list (substring, case-insensitive); given empty: all")
    ap.add_argument("--ignore-categories", nargs="*",
                    default=["gpu_user_annotation", "user_annotation"],
                    help="deny list; given empty: none")
    ap.add_argument("--no-rank-csv", action="store_true")
    ap.add_argument("--json", action="store_true")
    opts = ap.parse_args()

    t0 = time.monotonic()
    trace_dir = opts.trace_dir
    if os.path.isdir(os.path.join(trace_dir, "torch_trace")):
        trace_dir = os.path.join(trace_dir, "torch_trace")
    files = find_rank_files(trace_dir)
    if not files:
        print(f"peer_gap: no trace files in {trace_dir}", file=sys.stderr)
        return 1

    nbytes = 0
    nevents = 0
    per_rank = []
    for rank, path in files:
        events, b = load_events(path)
        nbytes += b
        nevents += len(events)
        kernels, total = analyze_rank(events, opts)
        per_rank.append((rank, kernels, total))
        del events

    merged = merge([k for _, k, _ in per_rank])
    total = sum(t for _, _, t in per_rank)
    if not merged:
        print("peer_gap: no kernel events", file=sys.stderr)
        return 1

    out_root = opts.out or os.path.dirname(os.path.abspath(opts.trace_dir.rstrip("/")))
    out_dir = os.path.join(out_root, "gap_analysis")
    os.makedirs(out_dir, exist_ok=True)
    csv_path = os.path.join(out_dir, "gap_analysis.csv")
    top = merged[: opts.top_k]
    write_csv(csv_path, top, total)
    if len(per_rank) > 1 and not opts.no_rank_csv:
        for rank, kernels, rtotal in per_rank:
            write_csv(os.path.join(out_dir, f"gap_analysis_rank{rank}.csv"),
                      kernels[: opts.top_k], rtotal)
    seconds = time.monotonic() - t0

    if opts.json:
        summary = {
            "total_duration_us": total,
            "num_ranks": len(per_rank),
            "top_kernels": [
                {"name": k["name"], "calls": k["calls"], "self_cuda_total_us": k["total"],
                 "avg_time_us": avg(k),
                 "pct_total": k["total"] / total * 100.0 if total > 0 else 0.0,
                 "input_shapes": unique_shapes(k),
                 "min_us": min(k["durs"]), "max_us": max(k["durs"]),
                 "std_us": statistics.stdev(k["durs"]) if len(k["durs"]) > 1 else 0.0}
                for k in top
            ],
            "csv_path": csv_path,
            "output_dir": out_dir,
            "stats": {"bytes": nbytes, "events": nevents, "seconds": seconds},
        }
        json.dump(summary, sys.stdout)
        sys.stdout.write("\n")
    else:
        print(f"peer_gap: {len(per_rank)} rank(s), {nevents} events, {nbytes} bytes, "
              f"{seconds:.2f} s -> {csv_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
