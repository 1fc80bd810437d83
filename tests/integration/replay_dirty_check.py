"""An independent check of the dirty-L2 levels `trace replay` sends with the
job (src/replay/traffic.c; docs/replay.md, "Dirty L2 before the op"), worked
out straight from the trace JSON (no magpie code) from the rules as
docs/replay.md states them: for each call of a selected op, walking back
from its first kernel over the GPU activity on the same device and stream,
each CPU op met (the innermost cpu_op around the activity's launch, the
launch found through the ac2g flow; counted once over its consecutive
kernels) adds the bytes it wrote, then the bytes
it read; activity without shapes counts as reads at 1.5 MB/us of its
duration, a memcpy/memset as a write of its "bytes"; for an L2 of G bytes
the call's dirty bytes are the writes within the last G bytes walked. The
calls' values are then grouped into levels (split at jumps of more than an
eighth of the L2, at least 1 MiB; the three most common groups at their
medians; the other groups' calls to the nearest) and compared with the
job's, for every L2 size of the grid.

Usage: replay_dirty_check.py TRACE(.json[.gz]) replay_summary.json replay_job.json"""
import json, math, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from replay_trace_index import TraceIndex  # noqa: E402

GRID = [2, 4, 6, 8, 16, 24, 32, 40, 48, 50, 60, 64, 72, 96, 128, 256]
ELT = {"float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "long int": 8, "long": 8,
       "int": 4, "short int": 2, "short": 2, "signed char": 1, "unsigned char": 1, "bool": 1,
       "c10::Float8_e4m3fn": 1, "c10::Float8_e5m2": 1, "c10::Float8_e4m3fnuz": 1,
       "c10::Float8_e5m2fnuz": 1, "c10::Float8_e8m0fnu": 1, "c10::complex<float>": 8,
       "c10::complex<double>": 16}
REDUCTIONS = {"sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "norm",
              "linalg_vector_norm", "var", "std", "var_mean", "std_mean", "prod", "any", "all",
              "logsumexp", "topk", "nansum", "count_nonzero"}
CAP = 1e15

trace, summary, jobf = sys.argv[1], sys.argv[2], sys.argv[3]
T = TraceIndex(trace)


def sane(x):
    return min(x, CAP) if x > 0 else 0.0


def numel(d):
    if not isinstance(d, list) or any(not isinstance(x, int) or isinstance(x, bool) or x < 0
                                      for x in d):
        return None
    return math.prod(d)


def op_bytes(name, dims, types):
    """(read, written) bytes of one CPU op, by docs/replay.md's rules."""
    dims = dims if isinstance(dims, list) else []
    types = types if isinstance(types, list) else []
    b, first, elt0, tot, maxne, lst = {}, None, 0, 0.0, 0, 0.0
    for i, d in enumerate(dims[:64]):
        if not isinstance(d, list):
            continue
        if d and isinstance(d[0], list):  # a tensor list
            for x in d:
                m = numel(x)
                lst += m * (elt0 or 2) if m else 0
            continue
        t = types[i] if i < len(types) and isinstance(types[i], str) else ""
        e, m = ELT.get(t, 0), numel(d)
        if not e or m is None:
            continue
        b[i] = float(m * e)
        tot += b[i]
        if first is None:
            first, elt0 = i, e
        maxne = max(maxne, m)
    nm = name.split("::", 1)[1] if "::" in name else name
    rd, wr = tot + lst, float(maxne * elt0)
    gemm = nm.endswith("mm") or "linear" in nm or "matmul" in nm or "conv" in nm
    if lst > 0 and nm in ("cat", "_cat", "stack"):
        wr = lst
    elif gemm and "conv" not in nm:
        a = 1 if nm.startswith("add") or nm.startswith("badd") else 0
        out = None
        if len(dims) >= a + 2:
            A, B = dims[a], dims[a + 1]
            na = numel(A)
            ka = A[-1] if isinstance(A, list) and A and isinstance(A[-1], int) and A[-1] > 0 \
                else None
            if na is not None and ka:
                if isinstance(B, list) and len(B) == 1:
                    out = na / ka
                elif isinstance(B, list) and B:
                    nb = B[0] if nm == "linear" else B[-1]
                    out = na / ka * nb if isinstance(nb, int) and nb > 0 else None
        wr = out * (2 if "scaled" in nm else (elt0 or 2)) if out and out > 0 else 0.0
    elif nm in REDUCTIONS:
        wr = 0.0
    elif "attention" in nm or "flash" in nm:
        wr = b[first] if first is not None else 0.0
    elif len(nm) > 1 and nm.endswith("_") and first is not None:
        wr, rd = b[first], tot + lst - b[first]
    return sane(rd), sane(wr)


def launcher(g):
    return T.launcher(g, flow=True)


def dirty(first):
    v = T.streams[(first["pid"], first["args"].get("stream"))]
    i = T.pos[id(first)]
    out, traffic, dw, gi = [None] * len(GRID), 0.0, 0.0, 0
    fo = launcher(first)
    last = id(fo) if fo else id(first)  # the call's own op's activity is not before it
    for g in reversed(v[:i]):
        if gi >= len(GRID):
            break
        o = launcher(g)
        k = id(o) if o else id(g)
        if o:
            r, w = op_bytes(o["name"], o["args"].get("Input Dims"), o["args"].get("Input type"))
        elif g.get("cat") in ("gpu_memcpy", "gpu_memset"):
            by = g["args"].get("bytes")
            r, w = 0.0, sane(float(by)) if isinstance(by, int) and by > 0 else 0.0
        else:
            r, w = 0.0, 0.0
        shapeless = r + w <= 0
        if k == last:
            r, w = 0.0, 0.0
        if shapeless:
            r = sane(g.get("dur", 0) * 1.5e6)
        last = k
        for amount, write in ((w, True), (r, False)):
            while gi < len(GRID) and traffic + amount >= GRID[gi] * 1048576.0:
                out[gi] = dw + (GRID[gi] * 1048576.0 - traffic if write else 0)
                gi += 1
            traffic += amount
            if write:
                dw += amount
    for j in range(gi, len(GRID)):
        out[j] = dw
    return out


def levels(vals, l2_mib):
    v = sorted(vals)
    thr = max(1048576.0, l2_mib * 1048576.0 / 8)
    groups, cur = [], [v[0]]
    for x in v[1:]:
        if x - cur[-1] > thr:
            groups.append(cur)
            cur = []
        cur.append(x)
    groups.append(cur)

    def med(g):
        return (g[(len(g) - 1) // 2] + g[len(g) // 2]) / 2
    keep = []
    for _ in range(min(3, len(groups))):  # most common first; ties: the earlier group
        best = None
        for j, g in enumerate(groups):
            if j not in keep and (best is None or len(g) > len(groups[best])):
                best = j
        keep.append(best)
    meds = [med(groups[j]) for j in keep]
    cnt = [0] * len(keep)
    for g in groups:
        m = med(g)
        near = 0
        for j in range(1, len(keep)):
            if abs(meds[j] - m) < abs(meds[near] - m):
                near = j
        cnt[near] += len(g)
    return sorted((m, c / len(vals)) for m, c in zip(meds, cnt))


def first_kernel(c):
    ks = T.call_kernels(c)
    return min(ks, key=lambda g: g["ts"]) if ks else None


s = {o["n"]: o for o in json.load(open(summary))["ops"]}
job = json.load(open(jobf))
checked = 0
for jo in job["ops"]:
    o = s[jo["n"]]
    want = jo.get("dirty")
    tried = []
    for g in T.row_calls(o["op"], o["shape_key"]):  # one group is this op
        per = [dirty(f) for f in (first_kernel(c) for c in g) if f is not None]
        if not per:
            got = None
        else:
            got = [[l2, levels([p[k] for p in per], l2)] for k, l2 in enumerate(GRID)]
        ok = (got is None and want is None) or (got is not None and want is not None and all(
            a[0] == b[0] and len(a[1]) == len(b[1]) and all(
                abs(x[0] - y[0]) <= 1 and abs(x[1] - y[1]) < 1e-3 for x, y in zip(a[1], b[1]))
            for a, b in zip(got, want)))
        tried.append(got)
        if ok:
            break
    else:
        raise AssertionError((o["n"], o["op"], o["shape_key"], want, tried))
    checked += 1
print("dirty levels ok: %d ops checked" % checked)
