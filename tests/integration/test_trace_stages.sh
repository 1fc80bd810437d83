#!/usr/bin/env bash
# `magpie trace stages`: Magpie's inference post-processing on the real H200
# mixtral serving trace. Checks the phase picks against an independent
# implementation of Magpie's rules (tests/tools/stages_ref.py) applied to
# TraceLens's own splitter output, every stage report against TraceLens's
# inference report of the same step (tests/fixtures/stages), the compact
# roofline CSVs against the reference transform, the tracelens_analysis
# JSON, and the input errors (exit 2, nothing written).
set -u
MAGPIE=${MAGPIE:?}
SRC=${MP_SRC:?}
FIX=${MP_FIXTURES:?}
H=${MP_SHARED:-}/data/traces/h200
T=$H/mixtral_shape_l8_bs16_p256_d12.json.gz
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# -- input errors
"$MAGPIE" trace stages "$t/nope" -q >"$t/log" 2>&1
[ $? = 2 ] || fail "missing dir: want exit 2"
mkdir -p "$t/empty"
"$MAGPIE" trace stages "$t/empty" -q >"$t/log" 2>&1
[ $? = 2 ] || fail "empty dir: want exit 2 ($(cat "$t/log"))"
mkdir -p "$t/noann"
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}' |
    gzip >"$t/noann/flat.json.gz"
"$MAGPIE" trace stages "$t/noann" -q >"$t/log" 2>&1
[ $? = 2 ] || fail "no annotations: want exit 2"
grep -q "no inference step annotations" "$t/log" || fail "no annotations: message: $(cat "$t/log")"
"$MAGPIE" trace stages "$t/noann" --stages bogus -q >/dev/null 2>&1
[ $? = 2 ] || fail "bad --stages: want exit 2"

if [ ! -f "$T" ]; then
    echo "shared H200 trace not found: stage comparisons skipped"
    [ $fails = 0 ] && exit 0
    exit 1
fi
command -v python3 >/dev/null || { echo "SKIPPED: python3 not found"; exit 0; }

W=$t/ws
mkdir -p "$W/torch_trace"
cp "$T" "$W/torch_trace/"
if ! "$MAGPIE" trace stages "$W/torch_trace" -o "$W" --conc 16 --isl 256 --osl 12 --num-steps 8 \
    --gpu-arch-json "$H/H200-arch-datasheet.json" -q >"$t/run.log" 2>&1; then
    fail "stages run failed"
    cat "$t/run.log"
fi
TL=$W/tracelens
# picks: Magpie's rules on TraceLens's split of the same trace, and on ours
python3 "$SRC/tests/tools/stages_ref.py" picks "$H/mixtral_shape_l8_bs16_p256_d12_tracelens_split/execution_details.csv" 16 >"$t/ref_tl.json"
python3 "$SRC/tests/tools/stages_ref.py" picks "$W/torch_trace/trace_split/execution_details.csv" 16 >"$t/ref_ours.json"
python3 - "$TL/tracelens_analysis.json" "$t/ref_tl.json" "$t/ref_ours.json" <<'PY' || fail "phase picks / JSON"
import json, os, sys
d = json.load(open(sys.argv[1]))
ok = True
for k in ("enabled", "analysis_mode", "analysis_stages", "trace_dir", "output_files", "stage_results",
          "errors", "warnings", "split_dir", "capture_folder", "output_dir", "rank0_trace", "phase_picks"):
    if k not in d:
        print("tracelens_analysis lacks", k); ok = False
if d.get("errors"):
    print("errors:", d["errors"]); ok = False
mine = {k: {"row_index": v["row_index"], "batch_size": v["batch_size"], "file": os.path.basename(v["trace_path"])}
        for k, v in d["phase_picks"].items() if v["trace_path"]}
for ref in sys.argv[2:]:
    r = json.load(open(ref))
    if r != mine:
        print("picks differ from", ref, "\n  ours", mine, "\n  ref ", r); ok = False
for st, res in d["stage_results"].items():
    for f in res["files"]:
        if not os.path.isfile(f):
            print("listed file missing:", f); ok = False
    if not os.path.isfile(os.path.join(res["output_dir"], "report.html")):
        print("no report.html for", st); ok = False
print(("ok   " if ok else "FAIL ") + "picks " + ", ".join(f"{k}=row {v['row_index']}" for k, v in sorted(mine.items())))
sys.exit(0 if ok else 1)
PY
for st in prefilldecode decode_only prefill_only; do
    g=$t/golden_$st
    mkdir -p "$g"
    for f in "$FIX/stages/$st"/*.csv.gz; do gzip -dc "$f" >"$g/$(basename "${f%.gz}")"; done
    sheets=$(cd "$g" && ls *.csv | sed 's/\.csv$//')
    echo "== $st"
    # shellcheck disable=SC2086
    python3 "$SRC/tests/tools/tl_compare.py" "$g" "$TL/$st" $sheets || fail "$st report"
    simple=$(ls "$TL/${st}"_ISL256_OSL12_CONC16_kernel_roofline_simple.csv 2>/dev/null)
    [ -n "$simple" ] || { fail "$st: no roofline simple CSV"; continue; }
    python3 "$SRC/tests/tools/stages_ref.py" simple "$TL/$st" "$t/simple_ref.csv"
    cmp -s "$simple" "$t/simple_ref.csv" || fail "$st: roofline simple CSV differs from the reference transform"
    # and against the transform of TraceLens's own report (numbers within 1e-6)
    mkdir -p "$t/s_g_$st" "$t/s_o_$st"
    python3 "$SRC/tests/tools/stages_ref.py" simple "$g" "$t/s_g_$st/simple.csv"
    cp "$simple" "$t/s_o_$st/simple.csv"
    python3 "$SRC/tests/tools/tl_compare.py" "$t/s_g_$st" "$t/s_o_$st" simple || fail "$st simple vs TraceLens"
done
# SGLang decode trace with its CUDA-graph capture folder: Magpie passes
# --capture_folder when torch_trace/capture_traces holds anything. The only
# step is the whole trace, so its decode report must equal TraceLens's golden
# (made with Magpie's flags, --enable_pseudo_ops included, plus
# --include_call_stack, so unified_perf_summary is left to the conformance test)
SG=${MP_SHARED:-}/data/traces/tracelens-tests/inference/sglang_decode
if [ -d "$SG/capture_traces" ]; then
    mkdir -p "$t/sg/torch_trace"
    cp "$SG/sglang_Qwen3-8B_decode.json.gz" "$t/sg/torch_trace/"
    cp -r "$SG/capture_traces" "$t/sg/torch_trace/"
    if "$MAGPIE" trace stages "$t/sg/torch_trace" --framework sglang -o "$t/sg" --conc 32 -q >"$t/sg.log" 2>&1; then
        echo "== sglang decode stage (capture merge)"
        python3 "$SRC/tests/tools/tl_compare.py" "$SG/perf_csvs" "$t/sg/tracelens/decode_only" \
            GEMM RMSNorm_fwd Reduce_fwd RoPE_fwd UnaryElementwise gpu_timeline InferenceAttention_fwd \
            ops_summary ops_summary_by_category ops_unique_args || fail "sglang decode stage"
        grep -q "capture_traces directory is missing" "$t/sg/tracelens/tracelens_analysis.json" &&
            fail "sglang: capture folder not used"
    else
        fail "sglang stages run failed"
        cat "$t/sg.log"
    fi
fi
# --stages picks a subset; aliases
"$MAGPIE" trace stages "$W/torch_trace" -o "$t/sub" --stages decode_only -q >/dev/null 2>&1 ||
    fail "--stages decode_only failed"
[ -d "$t/sub/tracelens/decode_only" ] && [ ! -d "$t/sub/tracelens/prefill_only" ] ||
    fail "--stages decode_only wrote the wrong stages"
[ $fails = 0 ] && echo "trace stages: all checks passed" && exit 0
echo "trace stages: $fails failure(s)"
exit 1
