#!/usr/bin/env python3
"""Stand-in for Nsight Compute's `ncu` (there is no GPU here) for
test_kernel_profile.sh. It models what magpie relies on, and replays ncu
output recorded on the H200 for the rest:

- the command line: it accepts only the form magpie builds (`--csv
  --print-units base --metrics LIST --clock-control none [--nvtx
  --nvtx-include RANGE/] [--target-processes all] [--launch-count N]
  TARGET...`) and exits 1 with
  an `==ERROR==` line otherwise, so a change to the argv fails the test;
  each call's argv goes to NCU_STANDIN_LOG (a JSON line);
- NVTX filtering: the target runs with the real torch.cuda.nvtx calls
  observed (ncu_standin_site/sitecustomize.py, as ncu's NVTX injection
  sees them), and the test's kernel files write a `launch NAME` line where
  a GPU kernel would be launched (NCU_STANDIN_EVENTS). A launch is profiled
  when the push/pop range stack holds RANGE (with --nvtx-include RANGE/),
  else every launch is; at most --launch-count (ncu counts only filtered
  launches);
- the output: for each profiled launch the rows of one launch recorded by
  the real ncu on the H200 (tests/fixtures/kernel/ncu_h200_harness_base_units.csv
  for the first kernel name seen, ncu_vadd_default_units.csv for the second,
  cycling through each file's recorded launches), renumbered in launch
  order under the recorded header, after ncu's `==PROF==` lines (and the
  unmodified-clocks warning ncu prints with --clock-control none). No
  profiled launch: ncu's `==WARNING== No kernels were profiled.`
With NCU_STANDIN_NO_PERMISSION set it models a machine where the user may
not read the performance counters: the target runs, nothing is profiled and
ncu's ERR_NVGPUCTRPERM error line is printed.
The printed text also goes to NCU_STANDIN_OUT when set.
"""
import csv
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "..", "fixtures", "kernel")
RECORDED = ["ncu_h200_harness_base_units.csv", "ncu_vadd_default_units.csv"]


def fail(msg):
    print("==ERROR== " + msg, file=sys.stderr)
    sys.exit(1)


def parse_argv(av):
    o = {"nvtx": False, "include": None, "count": None, "clock": None, "metrics": None}
    i = 0
    if av[:3] != ["--csv", "--print-units", "base"]:
        fail("stand-in: expected --csv --print-units base first, got %r" % av[:3])
    i = 3
    while i < len(av) and av[i].startswith("-"):
        a = av[i]
        if a in ("--metrics", "--clock-control", "--nvtx-include", "--launch-count", "-c",
                 "--target-processes"):
            if i + 1 >= len(av):
                fail("option %s needs a value" % a)
            v = av[i + 1]
            if a == "--metrics":
                o["metrics"] = v
            elif a == "--clock-control":
                o["clock"] = v
            elif a == "--nvtx-include":
                o["include"] = v
            elif a == "--target-processes":
                if v != "all":
                    fail("stand-in: only --target-processes all is modelled")
            else:
                o["count"] = int(v)
            i += 2
        elif a == "--nvtx":
            o["nvtx"] = True
            i += 1
        else:
            fail("stand-in: option %s is not modelled" % a)
    o["target"] = av[i:]
    if not o["metrics"] or not o["target"]:
        fail("stand-in: --metrics and a target are required")
    if o["clock"] != "none":
        fail("stand-in: magpie must never let ncu change GPU clocks (--clock-control none)")
    if o["include"] and not o["nvtx"]:
        fail("--nvtx-include requires --nvtx")
    return o


def recorded_launches(name):
    """[(header, [rows of launch 0], [rows of launch 1], ...)] of a recording."""
    text = open(os.path.join(FIX, name)).read()
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    hdr, body = rows[0], rows[1:]
    by_id = {}
    for r in body:
        by_id.setdefault(r[0], []).append(r)
    return hdr, [by_id[k] for k in sorted(by_id, key=int)]


def profiled(events, include, count):
    stack, out = [], []
    for ev in events:
        kind, _, arg = ev.partition(" ")
        if kind == "push":
            stack.append(arg)
        elif kind == "pop":
            if stack:
                stack.pop()
        elif kind == "launch":
            inside = include is None or include.rstrip("/") in stack
            if inside and (count is None or len(out) < count):
                out.append(arg)
    return out, stack


def main():
    o = parse_argv(sys.argv[1:])
    log = os.environ.get("NCU_STANDIN_LOG")
    evp = os.path.join(os.environ.get("TMPDIR", "/tmp"), "ncu_standin_%d.events" % os.getpid())
    open(evp, "w").close()
    env = dict(os.environ, NCU_STANDIN_EVENTS=evp)
    env["PYTHONPATH"] = os.path.join(HERE, "ncu_standin_site") + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    pid = os.getpid()
    out = []
    if o["clock"] == "none":
        out.append("==WARNING== Note: Running with unmodified GPU clocks. If not controlled "
                   "otherwise, profiling results may be inconsistent.")
    out.append("==PROF== Connected to process %d (%s)" % (pid, o["target"][0]))
    sys.stdout.write("\n".join(out) + "\n")
    sys.stdout.flush()
    rc = subprocess.call(o["target"], env=env)
    events = [ln.rstrip("\n") for ln in open(evp)]
    os.unlink(evp)
    launches, left = profiled(events, o["include"] if o["nvtx"] else None, o["count"])
    if log:
        with open(log, "a") as f:
            f.write(json.dumps({"argv": sys.argv[1:], "events": events, "profiled": launches,
                                "unbalanced": left, "target_rc": rc}) + "\n")
    text = ["==PROF== Disconnected from process %d" % pid]
    if os.environ.get("NCU_STANDIN_NO_PERMISSION"):
        text.insert(0, "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access "
                    "NVIDIA GPU Performance Counters on the target device 0. For instructions on "
                    "enabling permissions and to get more information see "
                    "https://developer.nvidia.com/ERR_NVGPUCTRPERM")
        launches = []
    if not launches:
        text.append("==WARNING== No kernels were profiled.")
    else:
        names, w = [], io.StringIO()
        wr = csv.writer(w, quoting=csv.QUOTE_ALL, lineterminator="\n")
        hdr = None
        used = {}
        for gid, name in enumerate(launches):
            if name not in names:
                names.append(name)
            rec = RECORDED[min(names.index(name), len(RECORDED) - 1)]
            h, recs = recorded_launches(rec)
            if hdr is None:
                hdr = h
                wr.writerow(hdr)
            k = used.get(name, 0)
            used[name] = k + 1
            for r in recs[k % len(recs)]:
                wr.writerow([str(gid)] + r[1:])
        text.append(w.getvalue().rstrip("\n"))
    s = "\n".join(text) + "\n"
    sys.stdout.write(s)
    if os.environ.get("NCU_STANDIN_OUT"):
        with open(os.environ["NCU_STANDIN_OUT"], "w") as f:
            f.write("\n".join(out) + "\n" + s)
    return rc


if __name__ == "__main__":
    sys.exit(main())
