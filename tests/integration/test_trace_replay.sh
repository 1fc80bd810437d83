#!/usr/bin/env bash
# `magpie trace replay` on the real H200 Mixtral trace (../shared): the IR
# entries of four ops against a golden (fixtures/replay/), every one of the
# top 20 ops rebuilt or listed with a reason, the files of every rebuilt op
# (ref_<n>.py parses and has Model/get_inputs/get_init_inputs, its tensors
# carry the recorded shapes and strides, cand_<n>.py, compare_<n>.yaml), the
# summary's columns, --run without a GPU (exit 0, a note), and bad input
# (exit 2 naming what is wrong). No torch needed (test_trace_replay_torch.sh
# runs the references when torch is importable).
#
# Env: MAGPIE (magpie binary), MP_SHARED (shared data), MP_FIXTURES.
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_SHARED:?MP_SHARED must point to the shared data}"
: "${MP_FIXTURES:?MP_FIXTURES must point to tests/fixtures}"
TRACE="$MP_SHARED/data/traces/h200/mixtral_shape_l8_bs16_p256_d12.json.gz"
[ -f "$TRACE" ] || { echo "FAIL: $TRACE is missing"; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/replay.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$MAGPIE" trace replay "$TRACE" -o "$TMP/r" >"$TMP/out" 2>"$TMP/err" ||
    fail "replay exited $?: $(tail -3 "$TMP/err")"
grep -q "20 of 239 rows selected" "$TMP/out" || fail "selection: $(tail -2 "$TMP/out")"

python3 - "$TMP/r" "$MP_FIXTURES/replay/h200_mixtral_ir.json" <<'PY' || fails=$((fails + 1))
import ast, csv, json, os, sys
d, golden = sys.argv[1], sys.argv[2]
ir = json.load(open(os.path.join(d, "event_replay_ir.json")))
skipped = json.load(open(os.path.join(d, "event_replay_skipped.json")))
summ = json.load(open(os.path.join(d, "replay_summary.json")))
ops = summ["ops"]
assert len(ops) == 20 and summ["rows_in_ranking"] == 239, (len(ops), summ["rows_in_ranking"])
# the ranking is unified_perf_summary's: rows 1..20 in order, by kernel time
assert [o["rank"] for o in ops] == list(range(1, 21))
sums = [o["trace_kernel_us_sum"] for o in ops]
assert sums == sorted(sums, reverse=True), sums
# every op rebuilt, or listed with a reason
for o in ops:
    assert o["rebuilt"] or o["reason"], o
    assert o["in_ir"] or o["reason"], o
    assert o["in_ir"] == any(e["magpie"]["n"] == o["n"] for e in ir), o
assert {s["n"] for s in skipped} == {o["n"] for o in ops if not o["in_ir"]}
assert all(s["reason"] for s in skipped)
assert sum(o["rebuilt"] for o in ops) == 20 and sum(o["in_ir"] for o in ops) == 15, \
    [(o["n"], o["rebuilt"], o["in_ir"]) for o in ops]
# TraceLens's EventReplay IR: what batched_replay.py reads
for e in ir:
    assert set(e) >= {"op_name", "replay_ir", "count"}, e
    for a in e["replay_ir"]["list_pos_args"] + e["replay_ir"]["list_kwargs"]:
        assert set(a) == {"arg_name", "arg_type", "value"}, a
        if a["arg_type"].startswith("Tensor") and a["value"] is not None:
            v = a["value"]
            assert set(v) == {"shape", "dtype", "strides", "init"}, v
            assert len(v["shape"]) == len(v["strides"])
            assert v["dtype"] in ("double", "float", "c10::Half", "c10::BFloat16", "long", "int",
                                  "bool"), v
            assert v["init"] in ("normal", None)
            if v["dtype"] in ("long", "int", "bool"):
                assert v["init"] is None, v
gold = json.load(open(golden))
by_n = {e["magpie"]["n"]: e for e in ir}
for g in gold:
    got = by_n.get(g["magpie"]["n"])
    assert got == g, "IR of op %d:\n%s\nexpected\n%s" % (g["magpie"]["n"], got, g)
# the recorded arguments of each rebuilt op are in its ref, tensors as recorded
for o in ops:
    if not o["rebuilt"]:
        continue
    n = o["n"]
    src = open(os.path.join(d, "ref_%d.py" % n)).read()
    tree = ast.parse(src)
    names = {x.name for x in tree.body if isinstance(x, (ast.FunctionDef, ast.ClassDef))}
    assert {"Model", "get_inputs", "get_init_inputs"} <= names, (n, names)
    dims = ast.literal_eval(o["shape_key"])
    doc = ast.get_docstring(tree)
    strides = ast.literal_eval(doc.split("Input Strides: ")[1].split("\n")[0])
    types = ast.literal_eval(doc.split("Input type: ")[1].split("\n")[0])
    calls = [c for c in ast.walk(tree) if isinstance(c, ast.Call)
             and getattr(c.func, "id", "") == "_tensor" and len(c.args) >= 3]
    made = sorted(str((ast.literal_eval(c.args[0]), ast.literal_eval(c.args[1]))) for c in calls)
    want = sorted(str((tuple(dd), tuple(ss))) for dd, ss, t in zip(dims, strides, types)
                  if t and t not in ("Scalar", "ScalarList"))
    assert made == want, (n, made, want)
    assert "torch.ops.aten.%s(" % o["op"].split("::")[1] in src, n
    # parameters (left out of L2 by the cold state): GEMM weights, norm weights
    par = [ast.literal_eval(x.value) for x in tree.body if isinstance(x, ast.Assign)
           and getattr(x.targets[0], "id", "") == "PARAMETER_INPUTS"]
    want_par = {"aten::mm": [1], "aten::_grouped_mm": [1]}.get(o["op"], [])
    if o["op"] == "aten::mul" and dims[0] == (2048,):
        want_par = [0]  # (2048,) * (16, 1, 2048): the RMSNorm weight
    assert par == [want_par], (n, o["op"], dims, par)
    cand = open(os.path.join(d, "cand_%d.py" % n)).read()
    assert "class ModelNew" in cand and "ref_%d.py" % n in cand
    ast.parse(cand)
    cmp_ = open(os.path.join(d, "compare_%d.yaml" % n)).read()
    assert "source_files: [ref_%d.py]" % n in cmp_ and "cand_%d.py" % n in cmp_
# the summary CSV: one row per op, trace columns filled, replay columns empty
rows = list(csv.DictReader(open(os.path.join(d, "replay_summary.csv"), newline="")))
assert len(rows) == 20
for r in rows:
    assert r["trace_kernel_us_median"] and r["trace_kernels"], r
    assert r["replay_kernel_us_median"] == "" and r["ratio"] == "", r
# values_from: the grouped GEMMs' offs are not recorded (default: random routing)
for r in rows:
    assert r["values_from"] == ("default" if r["op"] == "aten::_grouped_mm" else ""), r
    if r["op"] == "aten::_grouped_mm":
        assert "values_from default" in r["note"], r["note"]
        assert "values_from: default" in open(os.path.join(d, "ref_%s.py" % r["n"])).read()
mm = [r for r in rows if r["op"] == "aten::mm"][0]
assert mm["gflops"] and mm["compute_spec"] == "matrix_bf16" and mm["roofline_bound"], mm
print("ok: IR, refs and summary")
PY

# the TP2 H200 traces (two ranks, NCCL all-reduces): the top 20 of each are
# all rebuilt and all IR entries; the all-reduces (not in unified_perf_summary,
# from coll_analysis) are listed after them as not replayable alone
for r in 0 1; do
    TP2="$MP_SHARED/data/traces/h200-tp2/torch_trace/tp2-rank-$r.1796011317.pt.trace.json.gz"
    [ -f "$TP2" ] || continue
    "$MAGPIE" trace replay "$TP2" -o "$TMP/tp2_$r" >"$TMP/out" 2>&1 || fail "TP2 rank $r: exit $?"
    grep -q "22 of 66 rows selected: 20 rebuilt as PyTorch references, 20 in event_replay_ir.json" \
        "$TMP/out" || fail "TP2 rank $r: $(grep 'rows selected' "$TMP/out")"
    python3 - "$TMP/tp2_$r" <<'PY' || fails=$((fails + 1))
import json, os, sys
d = sys.argv[1]
ops = json.load(open(os.path.join(d, "replay_summary.json")))["ops"]
top, coll = ops[:20], ops[20:]
assert all(o["rebuilt"] and o["in_ir"] for o in top), [(o["n"], o["reason"]) for o in top]
assert [o["op"] for o in coll] == ["nccl:allreduce"] * 2, [o["op"] for o in coll]
for o in coll:
    assert not o["rebuilt"] and o["rank"] == 0 and o["op_category"] == "collective", o
    assert "not replayable alone" in o["reason"] and "peer ranks" in o["reason"], o
    assert o["calls"] > 0 and o["trace_kernel_us_sum"] > 0 and "over ranks [0, 1]" in o["shape_key"]
sk = json.load(open(os.path.join(d, "event_replay_skipped.json")))
assert [s["n"] for s in sk] == [21, 22] and all("collective" in s["reason"] for s in sk), sk
PY
done

# one op of each kind the issue lists first (tests/fixtures/replay/ops_synth.py)
"$MAGPIE" trace replay "$MP_FIXTURES/replay/ops_synth.json.gz" --top 0 -o "$TMP/s" >"$TMP/out" 2>&1 ||
    fail "synthetic trace: exit $?: $(tail -3 "$TMP/out")"
python3 - "$TMP/s" <<'PY' || fails=$((fails + 1))
import json, os, sys
d = sys.argv[1]
ops = json.load(open(os.path.join(d, "replay_summary.json")))["ops"]
by = {o["op"]: o for o in ops}
assert len(ops) == 17 and all(o["rebuilt"] for o in ops), [(o["op"], o["reason"]) for o in ops]
ref = lambda op: open(os.path.join(d, by[op]["ref"])).read()
assert "torch.ops.aten._scaled_mm(self_, mat2, scale_a, scale_b, None, None, torch.bfloat16, False)" \
    in ref("aten::_scaled_mm"), ref("aten::_scaled_mm")
assert "torch.float8_e4m3fn" in ref("aten::_scaled_mm")
assert "'offsets', 64)" in ref("aten::_grouped_mm")
assert "_tensor((4, 128), (0, 1), torch.bfloat16)" in ref("aten::add")
assert "_tensor((64, 32), (1, 64), torch.bfloat16)" in ref("aten::copy_")
assert "dtype=torch.bfloat16, non_blocking=False" in ref("aten::_to_copy")
assert "'index', 1000)" in ref("aten::index_select")
assert "'index', 100)" in ref("aten::index_add_")
assert "register_buffer(\"m_self\"" in ref("aten::index_add_")
assert "[1, 1], [1, 1], [1, 1], False, [0, 0], 1)" in ref("aten::convolution")
assert "not importable here" in ref("_C::rms_norm") and "'vllm._C'" in ref("_C::rms_norm")
assert not by["_C::rms_norm"]["in_ir"] and not by["aten::_scaled_mm"]["in_ir"]
assert by["aten::_scaled_dot_product_flash_attention"]["in_ir"]
ir = {e["op_name"]: e for e in json.load(open(os.path.join(d, "event_replay_ir.json")))}
add = ir["aten::add"]["replay_ir"]["list_pos_args"][1]["value"]
assert add["strides"] == [0, 1] and add["init"] is None, add  # expanded: no normal_ init
kw = ir["aten::_to_copy"]["replay_ir"]["list_kwargs"]
assert [(a["arg_name"], a["value"]) for a in kw] == [("dtype", 15), ("non_blocking", False)], kw
print("ok: synthetic ops")
PY

# graph-mode serving traces (vLLM and SGLang on MI300, ../shared): without their capture
# traces the graph's kernels have no CPU op and are listed with the hint;
# with --capture-folder they get their ops, rebuilt (vLLM's custom ops as
# refs that read the schema the package registers); the replay command of a
# kernel row (trace sources) carries the capture folder beside the trace
# all rows of TRACE into OUT0 without, OUT1 with the captures in CAP; the
# "rows selected" lines must hold WANT0 and WANT1
with_captures() { # TRACE CAP OUT0 OUT1 WANT0 WANT1
    "$MAGPIE" trace replay "$1" --top 0 -o "$3" >"$TMP/out" 2>&1 || fail "$1: exit $?"
    grep -q "$5" "$TMP/out" || fail "$1 without captures: $(grep 'rows selected' "$TMP/out")"
    "$MAGPIE" trace replay "$1" --capture-folder "$2" --top 0 -o "$4" >"$TMP/out" 2>&1 ||
        fail "$1 + captures: exit $?"
    grep -q "$6" "$TMP/out" || fail "$1 with captures: $(grep 'rows selected' "$TMP/out")"
}
V="$MP_SHARED/data/traces/tracelens-tests/inference/vllm_decode_full"
if [ -d "$V/capture_traces" ]; then
    with_captures "$V/graph_execution.json.gz" "$V/capture_traces" "$TMP/g0" "$TMP/g1" \
        "30 of 30 rows selected: 9 rebuilt" \
        "27 of 27 rows selected: 18 rebuilt as PyTorch references, 8 in event_replay_ir.json"
    grep -q "^capture merge: 1 of 1 graph launch(es) merged, 125786 capture events added" \
        "$TMP/out" || fail "capture merge line: $(grep 'capture merge' "$TMP/out")"
    # captures of another run (SGLang's): said so, the rows stay unmerged
    "$MAGPIE" trace replay "$V/graph_execution.json.gz" --capture-folder \
        "$MP_SHARED/data/traces/tracelens-tests/inference/sglang_decode/capture_traces" \
        -o "$TMP/gx" >"$TMP/out" 2>&1 || fail "foreign captures: exit $?"
    grep -q "0 of 1 graph launch(es) merged.*(nothing merged: these captures do not match" \
        "$TMP/out" || fail "foreign captures: $(grep 'capture merge' "$TMP/out")"
    "$MAGPIE" trace replay "$V/graph_execution.json.gz" --capture-folder "$TMP/nonexistent" \
        -o "$TMP/bad" >"$TMP/out" 2>&1
    [ $? = 2 ] && grep -q "nonexistent: capture folder not found" "$TMP/out" ||
        fail "missing capture folder: $(cat "$TMP/out")"
    python3 - "$TMP/g0" "$TMP/g1" <<'PY' || fails=$((fails + 1))
import ast, json, os, sys
g0, g1 = (json.load(open(os.path.join(d, "replay_summary.json")))["ops"] for d in sys.argv[1:])
graph = [o for o in g0 if o["op"].startswith("hipGraphLaunch->")]
assert len(graph) == 20 and all("--capture-folder DIR" in o["reason"] for o in graph), graph[0]
by = {o["op"]: o for o in g1}
rot = by["_C::rotary_embedding"]
assert rot["rebuilt"] and not rot["in_ir"] and rot["calls"] == 24, rot
src = open(os.path.join(sys.argv[2], rot["ref"])).read()
ast.parse(src)
for want in ('("tensor", ((32,), (1,), torch.int64)),',
             '("tensor", ((32, 4096), (5120, 1), torch.bfloat16)),', '("value", 64),',
             '("value", True),', "_PACKAGE = 'vllm._C'", "_WRITES = ", "alias_info.is_write"):
    assert want in src, want
moe = [o for o in g1 if o["op"].startswith("vllm::moe_forward->")]
assert moe and all("one kernel of vllm::moe_forward, which TraceLens ranks kernel by kernel"
                   in o["reason"] for o in moe), moe[0]["reason"]
PY
    "$MAGPIE" trace sources "$V/graph_execution.json.gz" --json >"$TMP/src.json" 2>/dev/null ||
        fail "trace sources on the graph trace: exit $?"
    python3 - "$TMP/src.json" "$V" "$MP_SHARED/data/traces/h200" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
ks = d if isinstance(d, list) else d["kernels"]
cmd = next(k["replay_command"] for k in ks if "rotary_embedding_kernel" in k["name"])
assert " --capture-folder '%s/capture_traces' --kernel '" % sys.argv[2] in cmd, cmd
PY
    "$MAGPIE" trace sources "$TRACE" --json 2>/dev/null | grep -q -- "--capture-folder" &&
        fail "a capture folder in the replay command of a trace without one"
    # and the gap analysis's rows (its capture lookup is once per table)
    "$MAGPIE" benchmark --trace-dir "$V" --find-kernel-sources -o "$TMP/gapv" >/dev/null 2>&1 ||
        fail "gap analysis of the graph trace: exit $?"
    n=$(grep -c -- "--capture-folder '$V/capture_traces' --kernel '" "$TMP/gapv/gap_analysis/gap_analysis.csv")
    [ "$n" = 20 ] || fail "gap analysis rows with the capture folder: $n of 20"
fi

S="$MP_SHARED/data/traces/tracelens-tests/inference/sglang_decode"
if [ -d "$S/capture_traces" ]; then
    with_captures "$S/sglang_Qwen3-8B_decode.json.gz" "$S/capture_traces" "$TMP/s0" "$TMP/s1" \
        "28 of 28 rows selected: 6 rebuilt" "29 of 29 rows selected: 22 rebuilt"
    python3 - "$TMP/s1" <<'PY' || fails=$((fails + 1))
import json, os, sys
ops = json.load(open(os.path.join(sys.argv[1], "replay_summary.json")))["ops"]
by = {}
for o in ops:
    by.setdefault(o["op"].split("->")[0], o)
assert "SGLang profiler annotation" in by["sglang_profiler::attention_paged_attention_ragged_100"]["reason"]
assert "runtime call hipLaunchKernel with no CPU op" in by["hipLaunchKernel"]["reason"], by["hipLaunchKernel"]
for op in ("sgl_kernel::rotary_embedding", "sgl_kernel::silu_and_mul", "aiter::gemm_a16w16"):
    assert by[op]["rebuilt"] and by[op]["calls"] == 36, by[op]
    assert "_PACKAGE = 'sgl_kernel'" in open(os.path.join(sys.argv[1], by["sgl_kernel::silu_and_mul"]["ref"])).read()
PY
fi

# --run on a machine without a GPU (or without torch): the files, a note, exit 0
if ! python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    "$MAGPIE" trace replay "$TRACE" --op aten::topk --top 1 --run -o "$TMP/run" \
        >"$TMP/out" 2>"$TMP/err" || fail "--run without a GPU exited $?: $(tail -3 "$TMP/err")"
    grep -q "nothing was replayed" "$TMP/err" || fail "--run: no note: $(cat "$TMP/err")"
    [ -f "$TMP/run/ref_1.py" ] && [ -f "$TMP/run/replay_summary.csv" ] ||
        fail "--run without a GPU did not write the files"
fi

# selection and bad input
"$MAGPIE" trace replay "$TRACE" --row 7 -o "$TMP/row" >"$TMP/out" 2>&1 ||
    fail "--row 7: exit $?"
grep -q "^1 .*aten::mm" "$TMP/out" || fail "--row 7: $(head -3 "$TMP/out")"
"$MAGPIE" trace replay "$TRACE" --category GEMM --top 2 -o "$TMP/cat" --json >"$TMP/out" 2>&1 ||
    fail "--category: exit $?"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [o["op"] for o in d["ops"]]==["aten::mm","aten::mm"], d' \
    "$TMP/out" || fail "--category GEMM --json"
"$MAGPIE" trace replay "$TRACE" --row 9999 -o "$TMP/bad" >"$TMP/out" 2>&1
[ $? = 2 ] && grep -q "row 9999" "$TMP/out" || fail "--row 9999: $(cat "$TMP/out")"
"$MAGPIE" trace replay "$TMP/missing.json" -o "$TMP/bad" >"$TMP/out" 2>&1
[ $? = 2 ] && grep -q "missing.json" "$TMP/out" || fail "missing trace: $(cat "$TMP/out")"
printf '{"traceEvents": [\n{"name": "x", "ph": "X", "ts": 1, "dur": }\n]}\n' >"$TMP/broken.json"
"$MAGPIE" trace replay "$TMP/broken.json" -o "$TMP/bad" >"$TMP/out" 2>&1
[ $? = 2 ] && grep -q "broken.json:2:" "$TMP/out" || fail "broken trace: $(cat "$TMP/out")"
# a CPU-only run (vLLM's CPU build profiles ops but no kernels): said so
printf '{"traceEvents": [\n{"name": "_C::rms_norm", "cat": "cpu_op", "ph": "X", "ts": 1, "dur": 5, "pid": 1, "tid": 1, "args": {"Input Dims": [[8, 64], [8, 64], [64], []]}}\n]}\n' \
    >"$TMP/cpuonly.json"
"$MAGPIE" trace replay "$TMP/cpuonly.json" -o "$TMP/bad" >"$TMP/out" 2>&1
[ $? = 2 ] && grep -q "cpuonly.json: the trace holds no GPU kernels (a CPU-only run" "$TMP/out" ||
    fail "CPU-only trace: $(cat "$TMP/out")"
"$MAGPIE" trace replay "$TRACE" >"$TMP/out" 2>&1
[ $? = 2 ] || fail "no -o: not exit 2"
"$MAGPIE" trace replay "$TRACE" -o "$TMP/x" --top -1 >"$TMP/out" 2>&1
[ $? = 2 ] || fail "--top -1: not exit 2"
[ -e "$TMP/bad" ] && fail "a failed replay left $TMP/bad"

# trace_prev_* (what ran before each op on its stream) against an independent
# reading of the trace's JSON: this trace (decode ops launched 20-150 us
# apart, a residual add before the fp32 copy) and an MI300 training trace
# with activation checkpointing (two rows share their cells)
python3 "$MP_SRC/tests/integration/replay_prev_check.py" "$TRACE" "$TMP/r/replay_summary.json" \
    >"$TMP/prev.out" 2>&1 || fail "trace_prev (H200 Mixtral): $(tail -3 "$TMP/prev.out")"
python3 - "$TMP/r/replay_summary.json" <<'PY' || fails=$((fails + 1))
import json, sys
ops = {(o["op"], o["shape_key"]): o for o in json.load(open(sys.argv[1]))["ops"]}
m = ops[("aten::mean", "((16, 1, 2048), (), (), ())")]  # RMSNorm: pow, then mean
assert m["trace_prev_op"] == "aten::pow" and m["trace_prev_share"] == 1.0, m
assert m["trace_prev_shape"] == "((16, 1, 2048), ())" and 20 < m["trace_gap_us"] < 60, m
PY
R=$MP_SHARED/data/traces/tracelens-tests/mi300/resnet_act_checkpoint.json.gz
"$MAGPIE" trace replay "$R" -q -o "$TMP/ck" >"$TMP/out" 2>&1 || fail "replay of $R: $(tail -2 "$TMP/out")"
python3 "$MP_SRC/tests/integration/replay_prev_check.py" "$R" "$TMP/ck/replay_summary.json" \
    >"$TMP/prev.out" 2>&1 || fail "trace_prev (MI300 resnet): $(tail -3 "$TMP/prev.out")"

# the dirty-L2 levels sent with the job (src/replay/traffic.c) against an
# independent reading of the same two traces' JSON; --run with a Python
# that cannot import torch writes the job and times nothing
printf '#!/bin/sh\nexec python3 -S "$@"\n' >"$TMP/notorch_py"
chmod +x "$TMP/notorch_py"
for t in "$TRACE" "$R"; do
    rm -rf "$TMP/dj"
    MAGPIE_PYTHON="$TMP/notorch_py" "$MAGPIE" trace replay "$t" --run -q -o "$TMP/dj" \
        >"$TMP/out" 2>&1 || fail "--run without torch on $t: $(tail -2 "$TMP/out")"
    python3 "$MP_SRC/tests/integration/replay_dirty_check.py" "$t" "$TMP/dj/replay_summary.json" \
        "$TMP/dj/replay_job.json" >"$TMP/dirty.out" 2>&1 ||
        fail "dirty levels ($t): $(tail -3 "$TMP/dirty.out" | cut -c1-600)"
done

# a mangled copy of the trace (seeded): kernels lost, streams missing or
# negative, negative durations, shifted timestamps, absurd or unreadable
# Input Dims / Input type, memset/memcpy bytes of 1e19 and -4. The replay
# goes on: unreadable rows are listed with the reason, the others rebuilt,
# every dirty-L2 level finite
python3 - "$TRACE" "$TMP/mangled.json" <<'PY'
import gzip, json, random, sys
random.seed(7)
d = json.load(gzip.open(sys.argv[1]))
out = []
for e in d["traceEvents"]:
    r, c = random.random(), e.get("cat")
    if c == "kernel":
        if r < 0.03:
            continue
        if r < 0.06:
            e["args"].pop("stream", None)
        elif r < 0.08:
            e["args"]["stream"] = -5
        elif r < 0.10:
            e["dur"] = -3.0
        elif r < 0.12:
            e["ts"] -= 50
    elif c == "cpu_op" and r < 0.05:
        e["args"]["Input Dims"] = [[10**18, 10**18], [-1], "x", [[[[1]]]]]
    elif c == "cpu_op" and r < 0.08:
        e["args"]["Input type"] = [1, None, {"a": 2}]
    elif c in ("gpu_memset", "gpu_memcpy"):
        e["args"]["bytes"] = 10**19 if r < 0.5 else -4
    out.append(e)
d["traceEvents"] = out
json.dump(d, open(sys.argv[2], "w"))
PY
rm -rf "$TMP/mg"
MAGPIE_PYTHON="$TMP/notorch_py" "$MAGPIE" trace replay "$TMP/mangled.json" --top 40 --run -q \
    -o "$TMP/mg" >"$TMP/out" 2>&1 || fail "mangled trace: exit $?: $(tail -2 "$TMP/out")"
python3 - "$TMP/mg" <<'PY' || fails=$((fails + 1))
import json, math, os, sys
d = sys.argv[1]
s = json.load(open(os.path.join(d, "replay_summary.json")))["ops"]
j = json.load(open(os.path.join(d, "replay_job.json")))["ops"]
assert len(s) == 40 and sum(o["rebuilt"] for o in s) >= 30, [o["reason"] for o in s]
assert any(o["reason"].startswith("the recorded arguments are not readable: Input type")
           for o in s), [o["reason"] for o in s]
assert j and all(o.get("dirty") for o in j), j
for o in j:
    for l2, lv in o["dirty"]:
        assert all(math.isfinite(b) and 0 <= b <= l2 * 2**20 + 1 and 0 < w <= 1 for b, w in lv), lv
PY

# --op selects an op's rows with its kernels ranked apart (OP->KERNEL):
# the Mixtral trace's aten::sort has no row of its own, seven split rows,
# each rebuilt as aten::sort whole (--run times the row's kernel alone)
"$MAGPIE" trace replay "$TRACE" --op aten::sort -q -o "$TMP/so" >"$TMP/out" 2>&1 ||
    fail "--op aten::sort: exit $?: $(tail -2 "$TMP/out")"
python3 - "$TMP/so/replay_summary.json" <<'PY' || fails=$((fails + 1))
import json, sys
ops = json.load(open(sys.argv[1]))["ops"]
assert len(ops) == 7 and all(o["op"].startswith("aten::sort->") for o in ops), [o["op"] for o in ops]
assert all(o["rebuilt"] and not o["in_ir"] and "per launch" in o["note"] for o in ops), ops[0]
assert [o["calls"] for o in ops] == [64, 96, 8, 80, 8, 8, 8], [o["calls"] for o in ops]
PY

[ $fails = 0 ] && echo ok
exit $((fails > 0))
