"""The trace indexes the replay checkers share (replay_prev_check.py,
replay_dirty_check.py), built straight from a trace's JSON with no magpie
code: GPU activity by correlation and by (device, stream) in time order,
runtime launches by thread, cpu_ops by thread, the ac2g flow starts."""
import bisect, gzip, json


def tup(x):
    """A JSON cell as the report writes it (lists as tuples)."""
    return tuple(tup(y) for y in x) if isinstance(x, list) else x


class TraceIndex:
    def __init__(self, path):
        self.ev = json.load(gzip.open(path) if path.endswith(".gz") else open(path))["traceEvents"]
        X = [e for e in self.ev if e.get("ph") == "X"]
        gpu = [e for e in X if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        self.by_corr, self.streams = {}, {}
        for g in gpu:
            self.by_corr.setdefault(g["args"].get("correlation"), []).append(g)
            self.streams.setdefault((g["pid"], g["args"].get("stream")), []).append(g)
        for v in self.streams.values():
            v.sort(key=lambda g: g["ts"])
        self.pos = {id(g): i for v in self.streams.values() for i, g in enumerate(v)}
        self.flow_start = {e.get("id") for e in self.ev
                           if e.get("ph") == "s" and e.get("cat") == "ac2g"}
        self.launches, self.launch_of = {}, {}
        for e in X:
            if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
                self.launches.setdefault((e["pid"], e["tid"]), []).append(e)
                self.launch_of[e["args"]["correlation"]] = e
        for v in self.launches.values():
            v.sort(key=lambda e: e["ts"])
        self.lts = {k: [e["ts"] for e in v] for k, v in self.launches.items()}
        self.ops = {}
        for e in X:
            if e.get("cat") == "cpu_op":
                self.ops.setdefault((e["pid"], e["tid"]), []).append(e)
        for v in self.ops.values():
            v.sort(key=lambda e: (e["ts"], -e["dur"]))
        self.ots = {k: [e["ts"] for e in v] for k, v in self.ops.items()}

    def innermost(self, pid, tid, t):
        """The innermost cpu_op of a thread around time t."""
        v = self.ops.get((pid, tid), [])
        for e in reversed(v[:bisect.bisect_right(self.ots.get((pid, tid), []), t)]):
            if e["ts"] <= t <= e["ts"] + e["dur"]:
                return e
        return None

    def launcher(self, g, flow=False):
        """The cpu_op around GPU activity g's launch (flow: only a launch the
        trace's ac2g flow ties to it, as the trace tree links them)."""
        c = g["args"].get("correlation")
        lr = self.launch_of.get(c) if not flow or c in self.flow_start else None
        return self.innermost(lr["pid"], lr["tid"], lr["ts"]) if lr else None

    def call_kernels(self, c):
        """The GPU activity launched inside cpu_op c."""
        k = (c["pid"], c["tid"])
        lo = bisect.bisect_left(self.lts.get(k, []), c["ts"])
        hi = bisect.bisect_right(self.lts.get(k, []), c["ts"] + c["dur"])
        return [g for r in self.launches.get(k, [])[lo:hi]
                for g in self.by_corr.get(r["args"]["correlation"], [])]

    def row_calls(self, op, shape_key):
        """The calls of a summary row (name and Input Dims), grouped by their
        other cells (rows of the same dims differ in types/strides), in time
        order."""
        calls = [e for v in self.ops.values() for e in v if e["name"] == op
                 and repr(tup(e["args"].get("Input Dims", []))) == shape_key]
        groups = {}
        for c in sorted(calls, key=lambda e: e["ts"]):
            a = c["args"]
            groups.setdefault(repr(tuple(repr(tup(a.get(k))) for k in (
                "Input type", "Input Strides", "Concrete Inputs"))), []).append(c)
        return list(groups.values())
