#!/usr/bin/env bash
# The optimization loop end to end on one CPU machine, with the stand-in
# engine (tests/tools/fake_engine.py: an OpenAI-compatible streaming server
# answering as `vllm serve`):
#
#   1. baseline benchmark, unprofiled, repeated (the numbers to beat)
#   2. profiled benchmark: torch-profiler trace, gap analysis, TraceLens
#      inference stages (the stand-in writes a recorded H200 vLLM trace)
#   3. the stages and the gap analysis: which kernels to work on; the op
#      behind the top kernel rebuilt as a runnable experiment (the gap row's
#      replay_command: `magpie trace replay`) and, where torch is importable,
#      the top GEMM replayed and checked and timed by `magpie compare`
#   4. kernel variants compared on OpenCL (PoCL): the candidate to ship
#   5. re-benchmark with the candidate, same workload, unprofiled
#   6. `magpie benchmark compare`: is the end-to-end change real, or within
#      run-to-run noise? and a control (the baseline setting again)
#
# The stand-in "engine with the candidate kernel" is the same server with a
# shorter inter-token latency (FAKE_ENGINE_ITL_MS): BASE_ITL_MS (default 4)
# before, NEW_ITL_MS (default 2) after. Set NEW_ITL_MS=4 to see the loop
# refuse to claim an improvement.
#
# usage: examples/optloop/run.sh [OUT_DIR]      (from the repository root)
# env:   MAGPIE (default: magpie on PATH, else build/release/magpie),
#        BASE_ITL_MS, NEW_ITL_MS, PROMPTS (default 48), REPEAT (default 3),
#        SKIP_OPENCL=1 to leave out step 4
# exit:  0 the loop ran (whatever the verdict); 1 a step failed
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-optloop_out}
MAGPIE=${MAGPIE:-$(command -v magpie || echo "$ROOT/build/release/magpie")}
BASE_ITL_MS=${BASE_ITL_MS:-4} NEW_ITL_MS=${NEW_ITL_MS:-2}
PROMPTS=${PROMPTS:-48} REPEAT=${REPEAT:-3}
TRACE=$ROOT/examples/traces/serving/mixtral_shape_l8_bs16_p256_d12.json.gz
mkdir -p "$OUT/bin"
OUT=$(cd "$OUT" && pwd)
step() { printf '\n=== %s\n' "$*"; }
die() {
    echo "optloop: $*" >&2
    exit 1
}
ws() { ls -d "$1"/benchmark_vllm_* 2>/dev/null | tail -1; }
[ -x "$MAGPIE" ] || die "magpie not found (set MAGPIE)"
command -v python3 >/dev/null || die "python3 is needed for the stand-in engine"

# the stand-in engine, on PATH as `vllm`
printf '#!/bin/sh\nexec python3 %s "$@"\n' "$ROOT/tests/tools/fake_engine.py" >"$OUT/bin/vllm"
chmod +x "$OUT/bin/vllm"
export PATH="$OUT/bin:$PATH" FAKE_ENGINE_MAX_S=300 FAKE_ENGINE_TTFT_MS=8
# a free loopback port rather than the default 8888 (often taken, e.g. by Jupyter)
export PORT=${PORT:-$(python3 "$ROOT/tests/tools/free_port.py")}
WORKLOAD=(vllm --model optloop-model --run-mode local --concurrency 4 --input-len 64
    --output-len 32 --num-prompts "$PROMPTS")

step "1. baseline benchmark (unprofiled, $REPEAT repeats, ITL ${BASE_ITL_MS} ms)"
FAKE_ENGINE_ITL_MS=$BASE_ITL_MS "$MAGPIE" benchmark "${WORKLOAD[@]}" --repeat "$REPEAT" \
    -o "$OUT/baseline" -q >"$OUT/baseline.log" 2>&1 || {
    cat "$OUT/baseline.log"
    die "baseline benchmark failed"
}
BASE=$(ws "$OUT/baseline")
grep -E "^(Status|Repeats|  output_throughput)" "$BASE/summary.txt"

step "2. profiled benchmark (torch profiler, gap analysis, TraceLens stages)"
cat >"$OUT/profiled.yaml" <<EOF
benchmark:
  framework: vllm
  model: optloop-model
  run_mode: local
  envs: {CONC: 4, ISL: 64, OSL: 32, NUM_PROMPTS: 8, NUM_WARMUPS: 0}
  profiler:
    torch_profiler: {enabled: true}
    tracelens: {enabled: true, num_steps: 8}
  gap_analysis:
    enabled: true
    top_k: 10
EOF
FAKE_ENGINE_ITL_MS=$BASE_ITL_MS FAKE_ENGINE_TRACE=$TRACE "$MAGPIE" benchmark -b "$OUT/profiled.yaml" \
    -o "$OUT/profiled" -q >"$OUT/profiled.log" 2>&1 || {
    cat "$OUT/profiled.log"
    die "profiled benchmark failed"
}
PROF=$(ws "$OUT/profiled")
echo "workspace: $PROF"

step "3a. inference stages (TraceLens per-stage reports)"
ls "$PROF"/tracelens/*_kernel_roofline_simple.csv 2>/dev/null | sed 's|.*/|  |' ||
    die "no stage reports"
step "3b. gap analysis: top kernels of the profiled run, each with its replay command"
# an empty source tree: rows are classified without cloning anything
mkdir -p "$OUT/no-src"
"$MAGPIE" benchmark --trace-dir "$PROF/torch_trace" --top-k 5 --find-kernel-sources \
    --kernel-source-repos "$OUT/no-src" -o "$OUT/gap" -q 2>&1 | sed -n '1,16p'

step "3c. the op behind the top kernel, rebuilt at the trace's shapes (trace replay)"
CMD=$(python3 -c 'import csv, sys
rows = list(csv.reader(l for l in open(sys.argv[1], newline="") if not l.startswith("#")))
print(rows[1][rows[0].index("replay_command")])' "$OUT/gap/gap_analysis/gap_analysis.csv")
[ -n "$CMD" ] || die "the gap row has no replay_command"
echo "  ${CMD:0:150}..."
(cd "$OUT" && eval "\"\$MAGPIE\" ${CMD#magpie }" -q) >"$OUT/replay_top.log" 2>&1 ||
    die "the gap row's replay command failed (see $OUT/replay_top.log)"
sed -n '1,3p' "$OUT/replay_top.log"

step "3d. the top GEMM as an experiment: replay --run, then compare (op vs candidate template)"
"$MAGPIE" trace replay "$PROF"/torch_trace/*.json* --category GEMM --top 1 --run --max-time 1 \
    -q -o "$OUT/replay_gemm" >"$OUT/replay_gemm.log" 2>&1 || die "trace replay --run failed"
sed -n '/^n /,/^run:/p' "$OUT/replay_gemm.log"
if "${MAGPIE_PYTHON:-python3}" -c 'import torch' >/dev/null 2>&1; then
    (cd "$OUT/replay_gemm" && "$MAGPIE" compare -k compare_1.yaml --max-time 1 -o cmp) \
        >"$OUT/replay_compare.log" 2>&1 || echo "  (compare failed: see $OUT/replay_compare.log)"
    grep -iE "correctness|winner|FASTER|SLOWER|WITHIN" "$OUT/replay_compare.log" | head -6
else
    echo "  (torch is not importable: cd $OUT/replay_gemm && magpie compare -k compare_1.yaml)"
fi

if [ "${SKIP_OPENCL:-0}" != 1 ]; then
    step "4. kernel variants on OpenCL (PoCL): which candidate wins"
    if (cd "$ROOT" && "$MAGPIE" compare -k examples/kernels/opencl/compare.yaml -o "$OUT/kernels") \
        >"$OUT/kernels.log" 2>&1; then
        grep -iE "winner|FASTER|SLOWER|INCORRECT" "$OUT/kernels.log" | head -12
    else
        echo "  (kernel compare did not run: no OpenCL device? see $OUT/kernels.log)"
    fi
fi

step "5. re-benchmark with the candidate (same workload, ITL ${NEW_ITL_MS} ms)"
FAKE_ENGINE_ITL_MS=$NEW_ITL_MS "$MAGPIE" benchmark "${WORKLOAD[@]}" --repeat "$REPEAT" \
    -o "$OUT/candidate" -q >"$OUT/candidate.log" 2>&1 || {
    cat "$OUT/candidate.log"
    die "candidate benchmark failed"
}
CAND=$(ws "$OUT/candidate")
echo "  control: the baseline setting once more"
FAKE_ENGINE_ITL_MS=$BASE_ITL_MS "$MAGPIE" benchmark "${WORKLOAD[@]}" --repeat "$REPEAT" \
    -o "$OUT/control" -q >"$OUT/control.log" 2>&1 || {
    cat "$OUT/control.log"
    die "control benchmark failed"
}
CTRL=$(ws "$OUT/control")

step "6. is the end-to-end change real?"
"$MAGPIE" benchmark compare "$BASE" "$CAND" "$CTRL" --label baseline --label candidate \
    --label control -o "$OUT/compare.json" --html "$OUT/compare.html" >"$OUT/compare.txt" ||
    die "benchmark compare failed"
cat "$OUT/compare.txt"
python3 - "$OUT/compare.json" <<'EOF' | tee "$OUT/decision.txt"
import json, sys
j = json.load(open(sys.argv[1]))
cand, ctrl = j["candidates"]
def verdicts(c):
    return {m["name"]: m["verdict"] for m in c["metrics"]}
v, vc = verdicts(cand), verdicts(ctrl)
print(f"candidate: {cand['faster']} metrics FASTER, {cand['slower']} SLOWER, "
      f"{len(v) - cand['faster'] - cand['slower']} WITHIN NOISE")
print(f"control (same setting again): {ctrl['faster']} FASTER, {ctrl['slower']} SLOWER")
if cand["slower"]:
    print("DECISION: regression - do not ship: " +
          ", ".join(k for k, x in v.items() if x == "SLOWER"))
elif cand["faster"]:
    print("DECISION: real improvement: " + ", ".join(k for k, x in v.items() if x == "FASTER"))
else:
    print("DECISION: within run-to-run noise - no improvement can be claimed")
if ctrl["faster"] or ctrl["slower"]:
    print("WARNING: the control differs from the baseline: this machine is too noisy "
          "for the verdicts above")
EOF
echo
echo "outputs in $OUT: compare.json, compare.html, decision.txt, the workspaces"
