#!/usr/bin/env bash
# `magpie trace replay --run`'s fidelity plumbing without a GPU:
#  - the job: each op's L2 state (auto: flushed for GEMMs; --l2 warm), the
#    sampling time (--max-time);
#  - the result read back from a stand-in for the GPU helper (it models
#    runtime/magpie_replay.py on a GPU: writes the result JSON a GPU run
#    writes, with fixed per-call kernel samples, both L2 states, kernel names
#    and clocks), so the summary's replay columns, the ratio, kernels_match
#    and the hints on why a replay is off (other kernels; the other L2 state
#    matches) are checked exactly;
#  - runtime/magpie_replay.py's splitting of kernel records into calls
#    (per_call: equal chunks, the flush's records skipped, a call with other
#    kernels refused), which needs no torch;
#  - a CPU-only machine: no torch / no CUDA writes the files, exit 0, a note.
#
# Env: MAGPIE, MP_SHARED, MP_SRC.
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_SHARED:?MP_SHARED must point to the shared data}"
: "${MP_SRC:?MP_SRC must point to the repository}"
TRACE="$MP_SHARED/data/traces/h200/mixtral_shape_l8_bs16_p256_d12.json.gz"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/replayf.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
export MAGPIE_RUNTIME_DIR="$MP_SRC/runtime"

# the stand-in helper: argv = (helper, job); copies the job beside the result
cat >"$TMP/gpu_py" <<'EOF'
#!/usr/bin/env python3
import json, os, shutil, sys
job = json.load(open(sys.argv[2]))
shutil.copy(sys.argv[2], job["output"] + ".job")
K1 = "nvjet_sm90_tst_64x8_64x16_4x2_h_bz_TNT"
fig = {  # n: (flushed samples us, warm us, cold us, kernels)
    1: ([5.7, 5.8, 5.9, 5.75, 5.85], 4.1, 5.5, [K1]),
    2: ([7.0, 7.1, 6.9, 7.05, 6.95], 5.4, 6.2, [K1]),
    3: ([60.0, 61.0, 59.0, 60.5, 59.5], 58.0, 57.0, ["nvjet_sm90_tst_128x256_64x4_2x1_v_bz_TNT"]),
}
if os.environ.get("BRACKET"):  # op 2 off in every state; the L2 probes bracket the trace
    fig[2] = ([7.0] * 5, 4.0, 6.2, [K1])
ops = []
for op in job["ops"]:
    s, w, c, k = fig[op["n"]]
    one = {"flushed": s, "warm": [w] * 5, "idle": [w + 0.1] * 5, "cold": [c] * 5}[op["l2"]]
    ops.append({"n": op["n"], "ok": True, "l2": op["l2"],
                "samples_ms": [u / 1000 for u in one], "idle_us": w + 0.1, "cold_us": c,
                "l2_flushed_us": sorted(s)[2], "l2_warm_us": w, "kernels": k,
                "kernels_per_call": len(k), "calls_profiled": 200, "prof_note": "",
                "graph_samples_ms": [x * 1.2 / 1000 for x in s], "batch": 50,
                "cuda_graph": True, "stop_reason": "noise 0.3% <= 0.5% after 12 samples",
                "sm_clock_mhz": 1980.0, "clocks_before": "sm 1980 MHz (max 1980)",
                "clocks_after": "sm 1965 MHz (max 1980)" if op["n"] != 3 else
                "sm 1410 MHz (max 1980), 671.24 W, 53 C, throttle 0x0000000000000024"})
    if "prev_ref" in op:  # the op before it in the trace, rebuilt: the after state
        ops[-1].update(after_us=sorted(s)[2] * 0.9, after_wired=0)
    if os.environ.get("BRACKET"):
        ops[-1].update(flushed_read_us=5.0 if op["n"] == 2 else s[2],
                       flushed_write_us=7.5 if op["n"] == 2 else s[2], cold_write_us=c + 1)
json.dump({"device": "NVIDIA H200 (stand-in)", "torch": "2.11", "l2_bytes": 52428800,
           "clocks": "sm 1980 MHz (max 1980)", "ops": ops}, open(job["output"], "w"))
EOF
chmod +x "$TMP/gpu_py"

MAGPIE_PYTHON="$TMP/gpu_py" "$MAGPIE" trace replay "$TRACE" --category GEMM --top 3 --run \
    --l2 flushed --max-time 0.5 -q -o "$TMP/r" >"$TMP/out" 2>&1 ||
    fail "--run exited $?: $(tail -3 "$TMP/out")"
python3 - "$TMP/r" <<'PY' || fails=$((fails + 1))
import csv, json, os, sys
d = sys.argv[1]
job = json.load(open(os.path.join(d, "replay_run.json.job")))
assert job["timing"]["max_time_s"] == 0.5 and job["timing"]["l2_flush"] is True, job["timing"]
assert [o["l2"] for o in job["ops"]] == ["flushed"] * 3, job["ops"]
s = json.load(open(os.path.join(d, "replay_summary.json")))
assert s["ran"] is True, s
assert s["run_note"].startswith("replayed on NVIDIA H200 (stand-in) (torch 2.11, L2 50 MiB)"), s
o1, o2, o3 = s["ops"]
assert [o["op"] for o in s["ops"]] == ["aten::mm"] * 3
assert o1["replay_kernel_us_median"] == 5.8 and o1["replay_l2"] == "flushed", o1
assert abs(o1["ratio"] - 5.8 / o1["trace_kernel_us_median"]) < 1e-12, o1
assert o1["replay_kernel_us_ci_lo"] <= 5.8 <= o1["replay_kernel_us_ci_hi"], o1
assert o1["replay_kernel_us_l2_flushed"] == 5.8 and o1["replay_kernel_us_l2_warm"] == 4.1
assert abs(o1["replay_graph_us"] - 5.8 * 1.2) < 1e-9, o1
assert o1["replay_samples"] == 5 and o1["replay_sm_clock_mhz"] == 1980.0, o1
assert o1["kernels_match"] is True and o1["replay_kernels"] == o1["trace_kernels"], o1
assert o1["replay_note"].startswith("kernel records of 200 calls, state flushed"), o1
assert o1["replay_clocks"] == "before: sm 1980 MHz (max 1980); after: sm 1965 MHz (max 1980)"
# 7.0 us flushed vs a 5.31 us trace; the warm replay (5.4) is within 10 %: L2
assert o2["ratio"] > 1.1 and o2["kernels_match"] is True, o2
assert "the warm replay is within 10 % (1.02x): in the workload this op was queued" \
    in o2["replay_note"], o2["replay_note"]
# another kernel ran
assert o3["kernels_match"] is False, o3
assert "other kernels ran than in the trace" in o3["replay_note"], o3["replay_note"]
# nvidia-smi's throttle reasons after the calls name the caps
assert "state flushed; clocks capped after the replay (software power cap, software thermal " \
    "cap); graph figure" in o3["replay_note"], o3["replay_note"]
assert "capped" not in o1["replay_note"], o1["replay_note"]
rows = list(csv.DictReader(open(os.path.join(d, "replay_summary.csv"))))
assert rows[0]["replay_l2"] == "flushed" and rows[0]["kernels_match"] == "True", rows[0]
assert rows[2]["kernels_match"] == "False" and rows[0]["replay_kernel_us_median"] == "5.8"
assert list(rows[0])[-2:] == ["replay_sm_clock_mhz", "replay_clocks"], list(rows[0])
# each rebuilt op's producer in the trace (trace_prev_op) goes to the helper
# as prev_<n>.py with the trace's median gap; its "after" figure comes back
for jo, o in zip(job["ops"], s["ops"]):
    assert jo["prev_ref"] == os.path.join(os.path.realpath(d), "prev_%d.py" % o["n"]), jo
    assert os.path.exists(jo["prev_ref"]) and o["prev_ref"] == "prev_%d.py" % o["n"], o
    assert abs(jo["gap_us"] - o["trace_gap_us"]) < 1e-3, (jo, o["trace_gap_us"])
    assert o["replay_kernel_us_after"] == o["replay_kernel_us_l2_flushed"] * 0.9, o
assert rows[0]["replay_kernel_us_after"] == repr(5.8 * 0.9), rows[0]
src = open(job["ops"][0]["prev_ref"]).read()
assert src.startswith('"""magpie trace replay, the op before op 1 (aten::mm): ' +
                      s["ops"][0]["trace_prev_op"]), src[:200]
PY

# --l2 auto (the default): the two GEMMs under 10 us per call in the trace
# are timed cold, the longer one flushed; each state's figure is in the row
MAGPIE_PYTHON="$TMP/gpu_py" "$MAGPIE" trace replay "$TRACE" --category GEMM --top 3 --run \
    -q -o "$TMP/a" >"$TMP/out" 2>&1 || fail "--run (auto) exited $?"
python3 - "$TMP/a" <<'PY' || fails=$((fails + 1))
import json, os, sys
d = sys.argv[1]
job = json.load(open(os.path.join(d, "replay_run.json.job")))
assert [o["l2"] for o in job["ops"]] == ["cold", "cold", "flushed"], job["ops"]
assert all(o["auto"] is True for o in job["ops"]), job["ops"]
assert job["timing"]["l2_flush"] is True, job["timing"]
# the trace's dirty-L2 levels before each op: every L2 size of the grid, the
# shares of the calls summing to 1, levels ascending
for o in job["ops"]:
    g = o["dirty"]
    assert [e[0] for e in g] == sorted(e[0] for e in g) and len(g) == 16, g
    for l2, lv in g:
        assert 1 <= len(lv) <= 3 and abs(sum(w for _, w in lv) - 1) < 1e-3, (l2, lv)
        assert [b for b, _ in lv] == sorted(b for b, _ in lv), lv
        assert all(0 <= b <= l2 * 2**20 + 1 for b, _ in lv), (l2, lv)
o1, o2, o3 = json.load(open(os.path.join(d, "replay_summary.json")))["ops"]
assert o1["trace_kernel_us_median"] < 10 and o3["trace_kernel_us_median"] >= 10, (o1, o3)
assert o1["replay_l2"] == "cold" and o1["replay_kernel_us_median"] == 5.5, o1
assert o1["replay_kernel_us_cold"] == 5.5 and abs(o1["replay_kernel_us_idle"] - 4.2) < 1e-9, o1
assert o3["replay_l2"] == "flushed" and o3["replay_kernel_us_cold"] == 57.0, o3
# 6.2 us cold vs a 5.31 us trace: the closest state within 10 % is named
assert o2["ratio"] > 1.1 and "the warm replay is within 10 % (1.02x)" in o2["replay_note"], o2
PY

# the helper's L2 probes (all clean / all dirty) bracket a trace no state matches
BRACKET=1 MAGPIE_PYTHON="$TMP/gpu_py" "$MAGPIE" trace replay "$TRACE" --category GEMM --top 2 \
    --run --l2 flushed -q -o "$TMP/b" >"$TMP/out" 2>&1 || fail "--run (probes) exited $?"
python3 - "$TMP/b" <<'PY' || fails=$((fails + 1))
import json, os, sys
o1, o2 = json.load(open(os.path.join(sys.argv[1], "replay_summary.json")))["ops"]
t = o2["trace_kernel_us_median"]
want = ("off the trace by more than 10 %%; with L2 all clean %.2fx, all dirty %.2fx (the "
        "flushed state leaves as many bytes as the trace's ops before it wrote (estimated) "
        "dirty): in the workload L2 held fewer dirty lines when the op started; "
        % (5.0 / t, 7.5 / t))
assert o2["replay_note"].startswith(want), (o2["replay_note"], want)
assert "all clean" not in o1["replay_note"], o1  # within 10 %: no hint
PY

# --l2 warm: the job asks for warm figures and the graph figure unflushed
MAGPIE_PYTHON="$TMP/gpu_py" "$MAGPIE" trace replay "$TRACE" --category GEMM --top 2 --run \
    --l2 warm -q -o "$TMP/w" >"$TMP/out" 2>&1 || fail "--l2 warm exited $?"
python3 - "$TMP/w" <<'PY' || fails=$((fails + 1))
import json, os, sys
d = sys.argv[1]
job = json.load(open(os.path.join(d, "replay_run.json.job")))
assert [o["l2"] for o in job["ops"]] == ["warm"] * 2 and job["timing"]["l2_flush"] is False, job
assert not any(o["auto"] for o in job["ops"]), job["ops"]
assert job["timing"]["max_time_s"] == 5, job["timing"]
s = json.load(open(os.path.join(d, "replay_summary.json")))
assert s["ops"][0]["replay_l2"] == "warm" and s["ops"][0]["replay_kernel_us_median"] == 4.1, s
PY
"$MAGPIE" trace replay "$TRACE" --top 1 --l2 hot -o "$TMP/x" >"$TMP/out" 2>&1
[ $? = 2 ] && grep -q "expects auto, flushed, warm, idle or cold" "$TMP/out" || fail "--l2 hot: $(cat "$TMP/out")"

# a helper that stops after the first op (crash): that op is kept, the summary
# written, exit 1 with the note; one that stops before any: the files, exit 1
cat >"$TMP/crash_py" <<'EOF'
#!/usr/bin/env python3
import json, os, subprocess, sys
job = json.load(open(sys.argv[2]))
if os.environ.get("CRASH_AT_ONCE"):
    sys.exit(3)
job["ops"] = job["ops"][:1]
open(sys.argv[2], "w").write(json.dumps(job))
subprocess.run([os.environ["GPU_PY"]] + sys.argv[1:], check=True)
sys.exit(3)
EOF
chmod +x "$TMP/crash_py"
GPU_PY="$TMP/gpu_py" MAGPIE_PYTHON="$TMP/crash_py" "$MAGPIE" trace replay "$TRACE" --category GEMM \
    --top 3 --run -q -o "$TMP/k" >"$TMP/out" 2>"$TMP/err"
[ $? = 1 ] || fail "a crashed helper: exit code not 1"
grep -q "the helper then exited with status 3: later ops not timed" "$TMP/err" ||
    fail "a crashed helper: $(cat "$TMP/err")"
python3 - "$TMP/k/replay_summary.json" <<'PY' || fails=$((fails + 1))
import json, sys
s = json.load(open(sys.argv[1]))
assert [o["replay_kernel_us_median"] is not None for o in s["ops"]] == [True, False, False], s
PY
CRASH_AT_ONCE=1 MAGPIE_PYTHON="$TMP/crash_py" "$MAGPIE" trace replay "$TRACE" --category GEMM \
    --top 1 --run -q -o "$TMP/k0" >"$TMP/out" 2>"$TMP/err"
[ $? = 1 ] && grep -q "before timing any op: the files are written" "$TMP/err" &&
    [ -f "$TMP/k0/replay_summary.csv" ] || fail "a helper crashing at once: $(cat "$TMP/err")"

# a TraceLens-split row (row 27: one radix-sort kernel of aten::sort): the
# job names the kernel to time alone; the helper's figure (per launch) is
# the row's, its kernel among those the whole op launched is a match, the
# events around graph batches (the whole op) are not its figure; a replay
# in which the kernel did not run says so and does not match
cat >"$TMP/split_py" <<'EOF'
#!/usr/bin/env python3
import json, os, shutil, sys
job = json.load(open(sys.argv[2]))
shutil.copy(sys.argv[2], job["output"] + ".job")
op = job["ops"][0]
k = op.get("kernel_only", "")
if os.environ.get("MISSING"):
    res = {"n": op["n"], "ok": False, "kernels": ["other_sort_kernel"],
           "error": "the row's kernel did not run in the replay: the op launched 1 kernels, "
                    "none of its name (another algorithm pick for this shape, or another "
                    "library version?)"}
else:
    res = {"n": op["n"], "ok": True, "l2": op["l2"], "samples_ms": [0.0061] * 5,
           "l2_warm_us": 5.0, "kernels": ["hist", k], "kernels_per_call": 9,
           "calls_profiled": 200, "prof_note": "only the row's kernel timed, per launch: 8 of "
           "the op's 9 launches per call", "graph_samples_ms": [0.06] * 5, "batch": 50,
           "cuda_graph": True, "stop_reason": "noise ok"}
json.dump({"device": "NVIDIA H200 (stand-in)", "torch": "2.11", "l2_bytes": 52428800,
           "clocks": "", "ops": [res]}, open(job["output"], "w"))
EOF
chmod +x "$TMP/split_py"
for miss in "" 1; do
    MISSING=$miss MAGPIE_PYTHON="$TMP/split_py" "$MAGPIE" trace replay "$TRACE" --row 27 --run \
        -q -o "$TMP/sp$miss" >"$TMP/out" 2>&1 || fail "split row --run exited $?: $(tail -3 "$TMP/out")"
done
python3 - "$TMP/sp" "$TMP/sp1" <<'PY' || fails=$((fails + 1))
import json, os, sys
d, d1 = sys.argv[1], sys.argv[2]
job = json.load(open(os.path.join(d, "replay_run.json.job")))
o = json.load(open(os.path.join(d, "replay_summary.json")))["ops"][0]
assert o["op"].startswith("aten::sort->void at_cuda_detail::cub::detail::radix_sort::"), o["op"]
assert o["rebuilt"] and not o["in_ir"] and o["schema"].startswith("aten::sort("), o
assert job["ops"][0]["kernel_only"] == o["trace_kernels"] and " | " not in o["trace_kernels"]
assert "rebuilt as aten::sort whole; not an IR entry" in o["reason"], o["reason"]
assert "--run times only this kernel's records, per launch" in o["note"], o["note"]
assert abs(o["replay_kernel_us_median"] - 6.1) < 1e-9 and o["kernels_match"] is True, o
assert o["replay_graph_us"] is None, o  # the whole op's, not the kernel's
assert o["replay_kernels"] == "hist | " + o["trace_kernels"], o["replay_kernels"]
assert abs(o["ratio"] - 6.1 / o["trace_kernel_us_median"]) < 1e-12, o
assert "only the row's kernel timed, per launch: 8 of the op's 9" in o["replay_note"], o
o = json.load(open(os.path.join(d1, "replay_summary.json")))["ops"][0]
assert o["kernels_match"] is False and o["replay_kernels"] == "other_sort_kernel", o
assert o["replay_kernel_us_median"] is None, o
assert o["replay_note"].startswith("the row's kernel did not run in the replay"), o
src = open(os.path.join(d, "ref_1.py")).read()
assert "torch.ops.aten.sort" in src or "torch.sort" in src, src[-800:]
PY
# a split row of an op magpie cannot rebuild whole says why (vLLM's
# aten::index with its indices list recorded as nothing)
V="$MP_SHARED/data/traces/tracelens-tests/inference/vllm_decode_full"
"$MAGPIE" trace replay "$V/graph_execution.json.gz" --capture-folder "$V/capture_traces" \
    --top 0 -q -o "$TMP/ix" >"$TMP/out" 2>&1 ||
    fail "aten::index rows: exit $?: $(tail -3 "$TMP/out")"
python3 - "$TMP/ix/replay_summary.json" <<'PY' || fails=$((fails + 1))
import json, sys
ops = [o for o in json.load(open(sys.argv[1]))["ops"] if o["op"].startswith("aten::index->")]
assert ops, "no aten::index split row"
for o in ops:
    assert not o["rebuilt"] and "aten::index cannot be rebuilt whole: the recorded arguments" \
        in o["reason"], o["reason"]
PY

# the splitting of kernel records into calls (no torch needed)
python3 - "$MP_SRC/runtime" <<'PY' || fails=$((fails + 1))
import sys
sys.path.insert(0, sys.argv[1])
import magpie_replay as m
r = lambda t, d, n: (float(t), float(d), n)
# 3 calls of [fill, a, b]: the fill skipped, per call a+b
recs = [r(10 * i + j, 1 + j, n) for i in range(3) for j, n in enumerate(["fill", "a", "b"])]
assert m.per_call(recs, 3, 1) == ([5.0, 5.0, 5.0], ["a", "b"]), m.per_call(recs, 3, 1)
assert m.per_call(recs, 3, 0) == ([6.0, 6.0, 6.0], ["fill", "a", "b"])
assert m.per_call(recs, 2, 0) is None            # 9 records do not split in 2 calls
recs[4] = r(11, 2, "c")                         # call 2 ran another kernel
assert m.per_call(recs, 3, 1) is None
assert m.per_call([], 0, 0) is None and m.per_call(recs[:3], 1, 3) is None
# a split row's kernel (KEEP: gpu_records kept only its records): per launch
m.KEEP = "a"
recs = [r(10 * i + j, 1 + 2 * j, "a") for i in range(3) for j in range(2)]
assert m.per_call(recs, 3, 0) == ([2.0, 2.0, 2.0], ["a", "a"]), m.per_call(recs, 3, 0)
assert m.per_launch(recs[:5], 3) == 9 / 5  # no split: the mean per launch
m.KEEP = None
assert m.per_launch(recs[:5], 3) == 3.0    # per call
# which kernel a split row times: its own; one of its name with other
# template arguments (another library build), said so; else none, said why
K = "void cub::Onesweep<128, long>(int*, long)"
assert m.pick_kernel(K, ["memset", K, K]) == (K, "")
k2 = "void cub::Onesweep<256, long>(int*, long)"
k, why = m.pick_kernel(K, ["memset", k2, k2])
assert k == k2 and "other template arguments" in why, (k, why)
k, why = m.pick_kernel(K, [k2, "void cub::Onesweep<64, long>(int*, long)"])
assert k is None and "2 of the same name with other template arguments" in why, why
k, why = m.pick_kernel(K, ["memset", "void cub::Histogram<1>()"])
assert k is None and "launched 2 kernels, none of its name" in why, why
assert m.kernel_base("Memset (Device)") == "Memset" and m.kernel_base("nvjet_x") == "nvjet_x"
# pick_state: the job's state; auto "warm" with inputs over half the L2 -> flushed
M = 1 << 20
p = {"warm": [1], "flushed": [2], "cold": [3], "note": ""}
assert m.pick_state({"l2": "warm", "auto": True}, p, 31 * M, 60 * M) == "flushed"
assert p["note"] == "inputs 31.0 MiB, more than half the L2 (60 MiB): flushed, not warm", p
p["note"] = ""
assert m.pick_state({"l2": "warm", "auto": True}, p, 30 * M, 60 * M) == "warm"
assert m.pick_state({"l2": "warm", "auto": False}, p, 61 * M, 60 * M) == "warm"  # forced
assert m.pick_state({"l2": "cold", "auto": True}, p, 61 * M, 60 * M) == "cold"
assert m.pick_state({"l2": "idle", "auto": True}, p, 0, 60 * M) == "warm" and p["note"] == \
    "no idle figure: warm used", p
print("per_call ok")
PY

# profile_op on real Kineto output where torch is importable ($MAGPIE_PYTHON):
# CPU op records stand in for the GPU's kernel records (no GPU here)
PY=${MAGPIE_PYTHON:-python3}
if "$PY" -c 'import torch' >/dev/null 2>&1; then
    "$PY" - "$MP_SRC/runtime" <<'PY' 2>"$TMP/perr" || { fails=$((fails + 1)); tail -5 "$TMP/perr"; }
import sys
sys.path.insert(0, sys.argv[1])
import torch, torch.profiler as tp
import magpie_replay as m
m.GPU_CATS = ("cpu_op",)  # stand-in: the CPU ops' records for the kernels'
tp.ProfilerActivity.CUDA = tp.ProfilerActivity.CPU
torch.cuda.synchronize = lambda: None
a, b = torch.randn(64, 64), torch.randn(64, 64)
flush = torch.empty(1 << 16, dtype=torch.int8)
# every state and probe splits per call, the preludes' records skipped
# (flushed: the read of the buffer, then the rewrite of dirty_bytes of it)
states = ("warm", "idle", "flushed", "cold", "flushed_write", "flushed_read", "cold_write")
for dirty in (0, 4096, 1 << 30):
    p = m.profile_op(torch, lambda: torch.relu(torch.mm(a, b)), flush, 30, None, dirty)
    assert all(len(p[k]) == 30 and min(p[k]) > 0 for k in states) and p["note"] == "", p
    assert p["names"][:1] == ["aten::mm"] and "aten::relu" in p["names"], p["names"]
# the flushed prelude: one read of the whole buffer, a rewrite of dirty bytes
# only when there are some (at most half the buffer: the L2)
fills = []
real_fill = torch.Tensor.fill_
torch.Tensor.fill_ = lambda t, v: fills.append(t.numel()) or real_fill(t, v)
for dirty, want in ((0, []), (4096, [4096]), (1 << 30, [1 << 15])):
    fills.clear()
    m.profile_op(torch, lambda: torch.mm(a, b), flush, 1, None, dirty)
    # each prelude runs once alone (its records counted) and once per call:
    # flushed's rewrite, then the probes' whole-buffer ones (write, cold_write)
    assert fills == want * 2 + [1 << 16] * 4, (dirty, fills)
torch.Tensor.fill_ = real_fill
# a millisecond op: drained and idle cool_s after every call, in every state
sleeps = []
real_sleep = m.time.sleep
m.time.sleep = sleeps.append
p = m.profile_op(torch, lambda: torch.mm(a, b), flush, 5, None, 0, 0.004)
m.time.sleep = real_sleep
assert sleeps == [0.004] * 5 * len(states) and all(len(p[k]) == 5 for k in states), sleeps
# the cold state: flush, the inputs read back (one reduction per storage: a
# view of a, a's storage again and b's under a dict give two), the call
seen = []
real_amax = torch.amax
torch.amax = lambda v: seen.append(v.numel()) or real_amax(v)
touch = m.make_touch(torch, [a, {"x": a[1:], "y": [b]}, 3, None])
touch()
assert seen == [64 * 64 * 4] * 2, seen
assert m.make_touch(torch, [1, torch.empty(0)]) is None
p = m.profile_op(torch, lambda: torch.relu(torch.mm(a, b)), flush, 30, touch)
assert len(p["cold"]) == 30 and all(x > 0 for x in p["cold"]) and p["note"] == "", p
torch.amax = real_amax
# a split row's kernel (KEEP): only its records, per launch, in every state
# (the preludes' records are not the kernel's: nothing to skip)
m.KEEP = "aten::mm"
two = lambda: torch.relu(torch.mm(torch.mm(a, b), b))
p = m.profile_op(torch, two, flush, 30, touch, 4096)
assert p["names"] == ["aten::mm", "aten::mm"] and p["note"] == "", p
assert all(len(p[k]) == 30 and min(p[k]) > 0 for k in states), p
m.KEEP = None
print("profile_op ok")
PY
    # the after state on real refs: the decode RMSNorm mean and the pow
    # before it (prev_1.py), CPU ops standing in for kernels as above
    "$MAGPIE" trace replay "$TRACE" --op aten::mean --top 1 -q -o "$TMP/pm" >"$TMP/out" 2>&1 ||
        fail "replay --op aten::mean: $(tail -2 "$TMP/out")"
    MAGPIE_REPLAY_DEVICE=cpu "$PY" - "$MP_SRC/runtime" "$TMP/pm" <<'PY' 2>"$TMP/perr" ||
import json, os, sys
sys.path.insert(0, sys.argv[1])
import torch, torch.profiler as tp
import magpie_replay as m
m.GPU_CATS = ("cpu_op",)
tp.ProfilerActivity.CUDA = tp.ProfilerActivity.CPU
torch.cuda.synchronize = lambda: None
d, dev = sys.argv[2], torch.device("cpu")
o = json.load(open(os.path.join(d, "replay_summary.json")))["ops"][0]
assert o["trace_prev_op"] == "aten::pow" and o["prev_ref"] == "prev_1.py", o
op = {"n": 1, "ref": os.path.join(d, "ref_1.py"), "prev_ref": os.path.join(d, "prev_1.py"),
      "gap_us": o["trace_gap_us"]}
model, inputs, params = m.make_model(torch, dev, op)
orig = list(inputs)
flush = torch.empty(1 << 16, dtype=torch.int8)
seen = []
call = lambda: (seen.append(inputs[0]), model(*inputs))  # which tensor the op read
a, w = m.profile_after(torch, dev, op, call, inputs, params, flush, 12, 0)
assert w == 0 and a is not None and len(a) == 12 and min(a) > 0, (w, a)
# the op read the producer's fresh output each call, never the ref's own input
assert len(seen) >= 12 and all(t is not orig[0] for t in seen[-12:]), len(seen)
assert all(t.shape == orig[0].shape and t.dtype == orig[0].dtype for t in seen[-12:])
assert all(x is y for x, y in zip(inputs, orig)), "inputs not restored"
# nothing to wire: the output's dtype matches no input
w2, conv = m.wire(torch, torch.zeros(3, dtype=torch.int64), inputs, params)
assert (w2, conv) == (None, None)
# a view: same numel, both contiguous
lst = [torch.zeros(16, 1, 2048)]
w3, put = m.wire(torch, torch.zeros(16, 2048), lst, set())
put(torch.ones(16, 2048))
assert w3 == 0 and lst[0].shape == (16, 1, 2048) and float(lst[0].sum()) == 16 * 2048, w3
assert m.wire(torch, torch.zeros(16, 2048), [torch.zeros(16, 1, 2048)], {0}) == (None, None)
# an in-place op's self is the module's own tensor (not its m0_ copy)
mod = torch.nn.Module()
mod.register_buffer("m0_self_", torch.zeros(4, 4))
mod.register_buffer("self_", torch.zeros(4, 4))
w4, put = m.wire(torch, torch.ones(4, 4), [torch.zeros(4, 1, dtype=torch.bool)], set(), mod)
put(torch.full((4, 4), 2.0))
assert w4 == "buffer self_" and float(mod.self_.sum()) == 32 and float(mod.m0_self_.sum()) == 0
print("profile_after ok")
PY
        { fails=$((fails + 1)); tail -5 "$TMP/perr"; }
else
    echo "note: torch not importable by $PY: profile_op on Kineto output not checked"
fi

# a CPU-only machine: an interpreter without torch writes the files, exit 0
cat >"$TMP/no_torch_py" <<'EOF'
#!/bin/sh
exec python3 -c 'import runpy, sys; sys.modules["torch"] = None; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")' "$@"
EOF
chmod +x "$TMP/no_torch_py"
MAGPIE_PYTHON="$TMP/no_torch_py" "$MAGPIE" trace replay "$TRACE" --category GEMM --top 1 --run \
    -q -o "$TMP/c" >"$TMP/out" 2>"$TMP/err" || fail "no torch: exit $?: $(cat "$TMP/err")"
grep -q "no GPU here: the files are written, nothing was replayed (PyTorch is not importable" \
    "$TMP/err" || fail "no torch note: $(cat "$TMP/err")"
[ -f "$TMP/c/ref_1.py" ] && [ -f "$TMP/c/replay_summary.csv" ] || fail "no torch: files missing"

# the hook from `trace sources` (and gap analysis, test_sources.sh): each row's
# replay command selects the op that launched the kernel
"$MAGPIE" trace sources "$TRACE" --json >"$TMP/src.json" 2>/dev/null || fail "trace sources"
python3 - "$TMP/src.json" >"$TMP/cmd" <<'PY' || fails=$((fails + 1))
import json, sys
ks = json.load(open(sys.argv[1]))["kernels"]
k = [k for k in ks if k["name"] == "nvjet_sm90_tst_64x8_64x16_4x2_h_bz_TNT"][0]
assert k["replay_command"].startswith("magpie trace replay '") and " --top 1 -o replay_" in \
    k["replay_command"], k["replay_command"]
print(k["replay_command"].split(" ", 1)[1])
PY
(cd "$TMP" && eval "\"\$MAGPIE\" $(cat "$TMP/cmd") --json" >"$TMP/k.json" 2>"$TMP/err") ||
    fail "the sources row's replay command: $(cat "$TMP/err")"
python3 - "$TMP/k.json" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
assert d["selected"] == 1 and d["ops"][0]["op"] == "aten::mm" and d["ops"][0]["rank"] == 7, d
assert "nvjet_sm90_tst_64x8_64x16_4x2_h_bz_TNT" in d["ops"][0]["trace_kernels"].split(" | ")
PY
# the same hooks through MCP: find_kernel_sources rows carry replay_command,
# create_testcase takes a kernel instead of a row (the server's stdin stays
# open until the replies to ids 2 and 3 are out, bounded: a closed stdin
# cancels a call)
K=nvjet_sm90_tst_64x8_64x16_4x2_h_bz_TNT
# and id 4: create_testcase with capture_folder on the graph-mode vLLM trace
V="$MP_SHARED/data/traces/tracelens-tests/inference/vllm_decode_full"
RK="void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*, c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, int, long, long, long, int, int, int)"
rm -f "$TMP/mcp.out"
(
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}' \
        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"find_kernel_sources\",\"arguments\":{\"trace_path\":\"$TRACE\",\"no_cache\":true}}}" \
        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"create_testcase\",\"arguments\":{\"trace_path\":\"$TRACE\",\"kernel\":\"$K\",\"output_dir\":\"$TMP/tc\"}}}" \
        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{\"name\":\"create_testcase\",\"arguments\":{\"trace_path\":\"$V/graph_execution.json.gz\",\"capture_folder\":\"$V/capture_traces\",\"kernel\":\"$RK\",\"output_dir\":\"$TMP/tcg\"}}}"
    end=$((SECONDS + 200))
    until { grep -q '"id":2[,}]' "$TMP/mcp.out" && grep -q '"id":3[,}]' "$TMP/mcp.out" &&
        grep -q '"id":4[,}]' "$TMP/mcp.out"; } 2>/dev/null ||
        [ "$SECONDS" -ge "$end" ]; do sleep 0.1; done
) | timeout 240 "$MAGPIE" mcp >"$TMP/mcp.out" 2>"$TMP/mcp.err"
python3 - "$TMP/mcp.out" "$K" <<'PY' || fails=$((fails + 1))
import json, sys
rep = {}
for line in open(sys.argv[1]):
    m = json.loads(line)
    rep[m.get("id")] = m
def result(i):
    r = rep[i]["result"]
    assert not r.get("isError"), r
    return json.loads(r["content"][0]["text"])
ks = result(2)["kernels"]
k = [k for k in ks if k["name"] == sys.argv[2]][0]
assert k["replay_command"].startswith("magpie trace replay '") and "--kernel '%s'" % sys.argv[2] \
    in k["replay_command"], k
tc = result(3)
assert tc["op"] == "aten::mm" and tc["rank"] == 7 and tc["rebuilt"] is True, tc
assert tc["command"].endswith("magpie compare -k compare_1.yaml"), tc
tg = result(4)
assert tg["op"] == "_C::rotary_embedding" and tg["rebuilt"] is True and tg["calls"] == 24, tg
PY
[ -f "$TMP/tc/ref_1.py" ] || fail "create_testcase by kernel wrote no ref_1.py"

"$MAGPIE" trace replay "$TRACE" --kernel no_such_kernel -o "$TMP/nk" >"$TMP/out" 2>&1
[ $? = 2 ] && grep -q "no op row matches --kernel no_such_kernel" "$TMP/out" ||
    fail "--kernel no_such_kernel: $(cat "$TMP/out")"

[ $fails = 0 ] && echo ok
exit $fails
