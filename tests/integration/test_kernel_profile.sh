#!/usr/bin/env bash
# Profiler metrics for PyTorch/Triton kernels in reference mode (issue 33):
# after the verdict magpie runs the runner again in mode "profile" under
# ncu, filtered by NVTX to the candidate's calls, parses the CSV with the C
# path's parser and reports performance_result; suggest (CLI and MCP
# suggest_optimizations) reads it. There is no GPU or ncu here: ncu is the
# stand-in ncu_standin.py (it checks the argv magpie builds, runs the real
# runner on CPU torch with its NVTX push/pop observed, and replays ncu output
# recorded on the H200 for the launches its NVTX filter lets through); the
# test's kernel files mark where a GPU kernel would be launched.
#
# Env: MAGPIE (magpie binary), MP_SRC (repository root), MAGPIE_PYTHON
# (default: ~/.cache/magpie/torch-venv/bin/python when there, else python3).
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_SRC:?MP_SRC must point to the repository}"
PY=${MAGPIE_PYTHON:-}
if [ -z "$PY" ]; then
    PY=python3
    [ -x "$HOME/.cache/magpie/torch-venv/bin/python" ] && PY="$HOME/.cache/magpie/torch-venv/bin/python"
fi
if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
    echo "SKIP: PyTorch is not installed for $PY (set MAGPIE_PYTHON)"
    exit 0
fi
export MAGPIE_PYTHON="$PY"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kprof.XXXXXX")
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$TMP"' EXIT
export MAGPIE_RUNTIME_DIR="$MP_SRC/runtime"
mkdir -p "$TMP/bin" "$TMP/k"
printf '#!/bin/sh\nexec python3 "%s/tests/integration/ncu_standin.py" "$@"\n' "$MP_SRC" >"$TMP/bin/ncu"
chmod +x "$TMP/bin/ncu"
export NCU_STANDIN_LOG="$TMP/ncu.log" NCU_STANDIN_OUT="$TMP/ncu_out.csv"
fails=0
fail() { echo "FAIL: $*"; fails=1; }

# a launch marker: where a GPU kernel would be launched (the stand-in's model)
cat >"$TMP/k/mark.py" <<'PY'
import os


def launch(name):
    p = os.environ.get("NCU_STANDIN_EVENTS")
    if p:
        with open(p, "a") as f:
            f.write("launch %s\n" % name)
PY
cat >"$TMP/k/ref.py" <<'PY'
import torch
import torch.nn as nn
from mark import launch


class Model(nn.Module):
    def forward(self, x):
        launch("reference")
        return x * 2


def get_inputs():
    launch("inputs")
    return [torch.randn(4096)]


def get_init_inputs():
    return []
PY
# two kernels per call (a PyTorch candidate usually launches several)
cat >"$TMP/k/cand.py" <<'PY'
import torch.nn as nn
from mark import launch


class ModelNew(nn.Module):
    def forward(self, x):
        launch("cand_mul")
        y = x + 0
        launch("cand_add")
        return y + x
PY
# launches nothing inside the range (a host-only candidate)
printf 'import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x + x\n' >"$TMP/k/host.py"
yaml() { # id type source backend
    printf 'kernels:\n  - {id: %s, type: %s, source_files: [%s], reference: %s}\nlatency: {max_time_s: 0.5}\n' \
        "$1" "$2" "$TMP/k/$3" "$TMP/k/ref.py"
    [ -n "$4" ] && printf 'performance: {backend: %s}\n' "$4"
}
report() { ls "$1"/analyze_*/analyze_report.json 2>/dev/null | head -1; }

# 1. PyTorch and Triton-typed kernels (the runner treats them alike; the
#    Triton entry is plain torch code, as Triton cannot run on a CPU) with
#    performance.backend ncu
for t in pytorch triton; do
    : >"$NCU_STANDIN_LOG"
    yaml "c_$t" "$t" cand.py ncu >"$TMP/$t.yaml"
    PATH="$TMP/bin:$PATH" "$MAGPIE" analyze -q -k "$TMP/$t.yaml" -o "$TMP/o_$t" >"$TMP/out" 2>"$TMP/err" ||
        fail "$t analyze: $(tail -5 "$TMP/err")"
    rep=$(report "$TMP/o_$t")
    python3 - "$rep" "$NCU_STANDIN_LOG" "$NCU_STANDIN_OUT" <<'PY' || fail "$t: performance_result"
import json, sys
k = json.load(open(sys.argv[1]))["results"][0]
calls = [json.loads(l) for l in open(sys.argv[2])]
assert len(calls) == 1, calls
c = calls[0]
argv = c["argv"]
i = argv.index("--metrics")
assert argv[:3] == ["--csv", "--print-units", "base"], argv
assert argv[i + 2:i + 7] == ["--clock-control", "none", "--nvtx", "--nvtx-include",
                             "magpie_profile/"], argv
assert argv[argv.index("--launch-count") + 1] == "20", argv
assert argv[-1].endswith("runner_profile_job.json") and argv[-2].endswith("magpie_runner.py"), argv
assert c["target_rc"] == 0, c
# NVTX: one range, balanced, around the candidate's 3 calls only; the
# inputs' set-up and the warm-up call outside it; no reference run at all
ev = c["events"]
assert ev.count("push magpie_profile") == 1 and ev.count("pop") == 1, ev
inside = ev[ev.index("push magpie_profile") + 1:ev.index("pop")]
assert inside == ["launch cand_mul", "launch cand_add"] * 3, ev
assert "launch reference" not in ev, ev
assert ev[:ev.index("push magpie_profile")].count("launch cand_mul") == 1, ev  # the warm-up
assert c["profiled"] == ["cand_mul", "cand_add"] * 3 and not c["unbalanced"], c
assert k["performance_state"] == "SUCCESS", (k["performance_state"], k.get("errors"))
p = k["performance_result"]
assert p["success"] and p["backend"] == "ncu", p
assert "--nvtx-include magpie_profile/" in p["command"], p["command"]
names = {d["kernel_name"]: d for d in p["kernels"]}
assert set(names) == {"vadd", "vadd(const float *, const float *, float *, int)"}, names
assert all(d["dispatch_count"] == 3 for d in names.values()), names
# the C path's aggregation: a metric's mean over every profiled launch that has it
s = p["summary"]
bd = k["time_breakdown"]
assert bd["profile_s"] > 0, bd
pp = bd["profile_process"]
assert pp["phases"]["profiled_s"] >= 0 and "warmup_s" in pp["phases"], pp
assert pp["wall_s"] > 0 and "imports_s" in pp, pp
PY
    # the same numbers as the C path's parser reading ncu's printed output
    "$MAGPIE" suggest --json "$rep" >"$TMP/s_rep.json" 2>"$TMP/err" || fail "$t: suggest on the report: $(cat "$TMP/err")"
    "$MAGPIE" suggest --json --ncu-csv "$NCU_STANDIN_OUT" --kernel-id "c_$t" >"$TMP/s_csv.json" 2>"$TMP/err" ||
        fail "$t: suggest on the ncu output: $(cat "$TMP/err")"
    python3 - "$rep" "$TMP/s_rep.json" "$TMP/s_csv.json" "$NCU_STANDIN_OUT" <<'PY' || fail "$t: suggestions"
import json, sys
a, b = json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
a = a["kernels"][0] if "kernels" in a else a
assert a["vendor"] == "nvidia" and a["suggestions"], a
for key in ("bottlenecks", "suggestions"):
    assert a[key] == b[key], (key, a[key], b[key])
PY
    grep -q "profile" "$TMP/out" || fail "$t: no profile time in the summary: $(cat "$TMP/out")"
done

# 2. a candidate that launches nothing inside the range: a failed stage that says so
: >"$NCU_STANDIN_LOG"
yaml host pytorch host.py ncu >"$TMP/host.yaml"
PATH="$TMP/bin:$PATH" "$MAGPIE" analyze -q -k "$TMP/host.yaml" -o "$TMP/o_host" >"$TMP/out" 2>&1
python3 - "$(report "$TMP/o_host")" <<'PY' || fail "host-only candidate"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["correctness_state"] == "SUCCESS", r["correctness_state"]
assert r["performance_state"] == "FAILED", r["performance_state"]
assert "inside the NVTX range magpie_profile" in r["performance_result"]["errors"], r["performance_result"]
PY

# ... and one where the counters may not be read: ncu's error line, not a parse error
NCU_STANDIN_NO_PERMISSION=1 PATH="$TMP/bin:$PATH" "$MAGPIE" analyze -q -k "$TMP/pytorch.yaml" -o "$TMP/o_perm" >"$TMP/out" 2>&1
python3 - "$(report "$TMP/o_perm")" <<'PY' || fail "no permission for the counters"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["performance_state"] == "FAILED", r["performance_state"]
assert "ncu printed no metrics" in r["performance_result"]["errors"], r["performance_result"]
assert "ERR_NVGPUCTRPERM" in r["performance_result"]["errors"], r["performance_result"]
PY

# ... and one whose calls raise in the profiled process (here: only under
# the profiler): the runner's own message, not ncu's empty output
cat >"$TMP/k/flaky.py" <<'PY'
import os
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        if os.environ.get("NCU_STANDIN_EVENTS"):
            raise RuntimeError("flaky under the profiler")
        return x + x
PY
yaml flaky pytorch flaky.py ncu >"$TMP/flaky.yaml"
PATH="$TMP/bin:$PATH" "$MAGPIE" analyze -q -k "$TMP/flaky.yaml" -o "$TMP/o_flaky" >"$TMP/out" 2>&1
python3 - "$(report "$TMP/o_flaky")" <<'PY' || fail "candidate raising in the profiled process"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["correctness_state"] == "SUCCESS" and r["performance_state"] == "FAILED", r
assert any("profiled calls under ncu failed" in e and "flaky under the profiler" in e
           for e in r["errors"]), r["errors"]
PY

# compare: runner kernels are profiled only when asked (backend ncu), each
# in a process of its own, after the verdicts
printf 'kernels:
  - {id: c1, type: pytorch, source_files: [%s], reference: %s}
  - {id: c2, type: pytorch, source_files: [%s], reference: %s}
latency: {max_time_s: 0.5}
' \
    "$TMP/k/cand.py" "$TMP/k/ref.py" "$TMP/k/cand.py" "$TMP/k/ref.py" >"$TMP/cmp.yaml"
: >"$NCU_STANDIN_LOG"
PATH="$TMP/bin:$MP_SRC/tests/fixtures/gpu/bin:$PATH" MAGPIE_NO_NVML=1 "$MAGPIE" compare -q \
    -k "$TMP/cmp.yaml" -o "$TMP/o_cmp" >/dev/null 2>&1
[ -s "$NCU_STANDIN_LOG" ] && fail "compare with backend auto ran ncu"
printf 'performance: {backend: ncu}
' >>"$TMP/cmp.yaml"
PATH="$TMP/bin:$PATH" "$MAGPIE" compare -q -k "$TMP/cmp.yaml" -o "$TMP/o_cmp2" >/dev/null 2>&1
python3 - "$(ls "$TMP"/o_cmp2/compare_*/compare_report.json | head -1)" "$NCU_STANDIN_LOG" <<'PY' || fail "compare with backend ncu"
import json, sys
d = json.load(open(sys.argv[1]))["results"]
assert len([l for l in open(sys.argv[2]) if l.strip()]) == 2
for k in d["kernel_results"]:
    assert k["performance_state"] == "SUCCESS", (k["extra"]["kernel_id"], k["errors"])
    assert len(k["performance_result"]["kernels"]) == 2, k["performance_result"]
    assert k["time_breakdown"]["profile_s"] > 0 and "timed_process" in k["time_breakdown"]
PY

# 3. off: --no-perf, and auto where no NVIDIA GPU is found: no ncu run
: >"$NCU_STANDIN_LOG"
PATH="$TMP/bin:$PATH" "$MAGPIE" analyze -q --no-perf -k "$TMP/pytorch.yaml" -o "$TMP/o_np" >/dev/null 2>&1 || fail "--no-perf analyze"
yaml auto pytorch cand.py "" >"$TMP/auto.yaml"
PATH="$TMP/bin:$PATH" MAGPIE_NO_NVML=1 "$MAGPIE" analyze -q -k "$TMP/auto.yaml" -o "$TMP/o_auto" >/dev/null 2>&1 || fail "auto analyze"
[ -s "$NCU_STANDIN_LOG" ] && fail "ncu ran with --no-perf or without an NVIDIA GPU: $(cat "$NCU_STANDIN_LOG")"
for o in o_np o_auto; do
    grep -q '"performance_state": *"SKIPPED"' "$(report "$TMP/$o")" || fail "$o: performance not SKIPPED"
done

# 4. MCP, one stdio session as an agent drives it: analyze (auto: the
#    nvidia-smi stand-in shows the H200), then suggest_optimizations on the
#    text analyze answered
: >"$NCU_STANDIN_LOG"
PATH="$TMP/bin:$MP_SRC/tests/fixtures/gpu/bin:$PATH" MAGPIE_NO_NVML=1 \
    python3 - "$MAGPIE" "$TMP/k/cand.py" "$TMP/k/ref.py" "$TMP/o_mcp" <<'PY' || fail "MCP analyze -> suggest_optimizations"
import json, signal, subprocess, sys
magpie, cand, ref, out = sys.argv[1:]
signal.alarm(900)  # a bound on the whole exchange (an ASan build under load is slow)
p = subprocess.Popen([magpie, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL, text=True)


def rpc(i, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    p.stdin.flush()
    for line in p.stdout:  # ends with magpie's answer (or its exit)
        m = json.loads(line)
        if m.get("id") == i:
            return m
    raise SystemExit("no answer to " + method)


rpc(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                      "clientInfo": {"name": "t", "version": "1"}})
p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
a = rpc(2, "tools/call", {"name": "analyze", "arguments": {
    "kernel_path": cand, "kernel_type": "pytorch", "reference": ref, "output_dir": out,
    "max_time_s": 0.5}})["result"]
assert not a.get("isError"), a
text = a["content"][0]["text"]
r = json.loads(text)
assert r["performance_state"] == "SUCCESS", (r["performance_state"], r.get("errors"))
assert r["performance_result"]["kernels"], r["performance_result"]
s = rpc(3, "tools/call", {"name": "suggest_optimizations",
                          "arguments": {"analysis_result": text}})["result"]
assert not s.get("isError"), s
s = json.loads(s["content"][0]["text"])
assert s["vendor"] == "nvidia" and s["suggestions"] and s["kernel_id"] == "cand", s
p.stdin.close()
p.wait(timeout=200)
PY
[ $fails = 0 ] && echo ok
exit $fails
