#!/bin/bash
# `magpie gpu show|set|reset` and the benchmark YAML's gpu.hardware section,
# against stand-ins only: the stub NVML library (tests/tools/stub_nvml.c,
# loaded through MAGPIE_NVML_LIB; it keeps its settings in a file and logs
# every setting call) and amd-smi / rocm-smi stand-in scripts
# (tests/tools/gpuctl-bin, modelled on the documented interfaces: no real
# output of them was recorded). No real GPU is touched, ever.
set -u
MAGPIE=${MAGPIE:?} MP_SRC=${MP_SRC:?} MP_BIN=${MP_BIN:?}
W=$(mktemp -d /tmp/mp_gpuctl_it.XXXXXX)
pass=0 fail=0
cleanup() { rm -rf "$W"; }
trap cleanup EXIT
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }
check() { if eval "$2"; then ok "$1"; else ko "$1"; fi; }

STUB=$MP_BIN/libstub_nvml.so
if [ ! -f "$STUB" ]; then
    echo "SKIPPED: $STUB not built"
    echo "0 passed, 0 failed"
    exit 0
fi
export STUB_NVML_STATE=$W/nvml.state STUB_NVML_LOG=$W/nvml.log
nv() { MAGPIE_NVML_LIB=$STUB "$MAGPIE" "$@"; }

# --- NVIDIA through the stub NVML ---
nv gpu show >"$W/show.out" 2>&1
RC=$?
check "show: exit 0" '[ $RC = 0 ]'
check "show: stub GPUs and their limits" \
    'grep -q "^GPU 1: NVIDIA H200 (stub)" "$W/show.out" && grep -q "power limit  700 W (default 700 W, allowed 200-700 W)" "$W/show.out"'

nv gpu set -i 0 --power-limit 500 --gpu-clock 1500,1500 --mem-clock 3201 --dry-run >"$W/dry.out" 2>&1
RC=$?
cat >"$W/dry.want" <<'EOF'
dry run: nothing is changed; these calls would be made:
GPU 0 (NVIDIA H200 (stub)): power limit 700 W -> 500 W  [nvmlDeviceSetPowerManagementLimit(0, 500000 mW)]
GPU 0 (NVIDIA H200 (stub)): SM/graphics clock 345 MHz (max 1980 MHz) -> locked to 1500-1500 MHz  [nvmlDeviceSetGpuLockedClocks(0, 1500, 1500)]
GPU 0 (NVIDIA H200 (stub)): memory clock 3201 MHz (max 3201 MHz) -> locked to 3201-3201 MHz  [nvmlDeviceSetMemoryLockedClocks(0, 3201, 3201)]
EOF
check "set --dry-run: exit 0" '[ $RC = 0 ]'
check "set --dry-run: exactly the changes, now -> after, with the calls" 'diff "$W/dry.want" "$W/dry.out"'
check "set --dry-run: no setting call made" '[ ! -s "$STUB_NVML_LOG" ]'

nv gpu set -i 0 --power-limit 500 --gpu-clock 1500,1500 >"$W/set.out" 2>&1
RC=$?
check "set: exit 0" '[ $RC = 0 ]'
check "set: the calls" 'printf "nvmlDeviceSetPowerManagementLimit 0 500000\nnvmlDeviceSetGpuLockedClocks 0 1500 1500\n" | diff - "$STUB_NVML_LOG"'
check "set: GPU 0 changed, GPU 1 not" 'grep -q "^0 500000 1500 1500 0 0$" "$STUB_NVML_STATE" && grep -q "^1 700000 0 0 0 0$" "$STUB_NVML_STATE"'
nv gpu show --json >"$W/show.json" 2>&1
check "show --json: the new limit" \
    'python3 -c "import json,sys; j=json.load(open(sys.argv[1])); g=j[\"gpus\"][0]; sys.exit(not (j[\"backend\"]==\"nvml\" and g[\"power_limit_watts\"]==500 and g[\"gpu_clock_mhz\"]==1500))" "$W/show.json"'

: >"$STUB_NVML_LOG"
nv gpu reset --dry-run >"$W/rdry.out" 2>&1
check "reset --dry-run: both GPUs listed, nothing called" \
    'grep -q "GPU 0 (NVIDIA H200 (stub)): power limit 500 W -> 700 W" "$W/rdry.out" && grep -q "GPU 1 (NVIDIA H200 (stub)): SM/graphics clock lock -> none  \[nvmlDeviceResetGpuLockedClocks(1)\]" "$W/rdry.out" && [ ! -s "$STUB_NVML_LOG" ]'
nv gpu reset >"$W/reset.out" 2>&1
RC=$?
check "reset: exit 0, defaults back" '[ $RC = 0 ] && grep -q "^0 700000 0 0 0 0$" "$STUB_NVML_STATE"'

# refusals: checked before any call
: >"$STUB_NVML_LOG"
nv gpu set --power-limit 900 >"$W/e1.out" 2>&1
RC=$?
check "set 900 W: exit 2, range named, nothing called" '[ $RC = 2 ] && grep -q "outside what it allows (200-700 W)" "$W/e1.out" && [ ! -s "$STUB_NVML_LOG" ]'
nv gpu set -i 5 --power-limit 500 >"$W/e2.out" 2>&1
RC=$?
check "set -i 5: exit 2" '[ $RC = 2 ] && grep -q "GPU 5 does not exist" "$W/e2.out"'
nv gpu set --gpu-level 3 >"$W/e3.out" 2>&1
RC=$?
check "levels on NVIDIA: exit 2" '[ $RC = 2 ] && grep -q "for AMD GPUs" "$W/e3.out"'
nv gpu set --gpu-clock 1600,1500 >"$W/e4.out" 2>&1
RC=$?
check "min > max: exit 2" '[ $RC = 2 ]'
STUB_NVML_DENY=1 nv gpu set -i 1 --power-limit 400 >"$W/e5.out" 2>&1
RC=$?
check "not root: exit 1 with NVML's message" '[ $RC = 1 ] && grep -q "Insufficient Permissions (changing GPU settings needs root)" "$W/e5.out"'

# --- AMD through the amd-smi / rocm-smi stand-ins (no NVML) ---
export SMI_SIM_LOG=$W/smi.log
amd() { MAGPIE_NVML_LIB=/nonexistent/libnvidia-ml.so.1 PATH="$MP_SRC/tests/tools/gpuctl-bin:/usr/bin:/bin" "$MAGPIE" "$@"; }
amd gpu set -i 1 --power-limit 300 --gpu-clock 1000,2100 --gpu-level 3 --dry-run >"$W/adry.out" 2>&1
RC=$?
cat >"$W/adry.want" <<'EOF'
dry run: nothing is changed; these calls would be made:
GPU 1 (AMD Instinct MI300X (stand-in)): power limit unknown -> 300 W  [amd-smi set -g 1 -o 300]
GPU 1 (AMD Instinct MI300X (stand-in)): SM/graphics clock unknown -> locked to 1000-2100 MHz  [amd-smi set -g 1 -L sclk min 1000; amd-smi set -g 1 -L sclk max 2100]
GPU 1 (AMD Instinct MI300X (stand-in)): sclk level auto -> 3  [amd-smi set -g 1 -c sclk 3]
EOF
check "amd-smi --dry-run: exit 0" '[ $RC = 0 ]'
check "amd-smi --dry-run: exact lines" 'diff "$W/adry.want" "$W/adry.out"'
check "amd-smi --dry-run: only the detection query ran" '[ "$(grep -v "^amd-smi static --json$" "$SMI_SIM_LOG" | wc -l)" = 0 ]'
: >"$SMI_SIM_LOG"
amd gpu set -i 1 --power-limit 300 --gpu-clock 1000,2100 --gpu-level 3 >"$W/aset.out" 2>&1
RC=$?
cat >"$W/aset.want" <<'EOF'
amd-smi static --json
amd-smi set -g 1 -o 300
amd-smi set -g 1 -L sclk min 1000
amd-smi set -g 1 -L sclk max 2100
amd-smi set -g 1 -c sclk 3
EOF
check "amd-smi set: exit 0" '[ $RC = 0 ]'
check "amd-smi set: exact argv of each run" 'diff "$W/aset.want" "$SMI_SIM_LOG"'
: >"$SMI_SIM_LOG"
amd gpu reset -i 0 >"$W/areset.out" 2>&1
RC=$?
check "amd-smi reset: clocks then power cap" '[ $RC = 0 ] && printf "amd-smi static --json\namd-smi reset -g 0 -c\namd-smi reset -g 0 -o\n" | diff - "$SMI_SIM_LOG"'
: >"$SMI_SIM_LOG"
SMI_SIM_DENY=1 amd gpu set -i 0 --power-limit 300 >"$W/adeny.out" 2>&1
RC=$?
check "amd-smi refused: exit 1 with the tool's message" '[ $RC = 1 ] && grep -q "AMDSMI_STATUS_NO_PERM" "$W/adeny.out"'
: >"$SMI_SIM_LOG"
amd gpu set --backend rocm-smi -i 0 --power-limit 300 --mem-clock 900,1300 --mem-level 2 >"$W/rset.out" 2>&1
RC=$?
cat >"$W/rset.want" <<'EOF'
rocm-smi -d 0 --setpoweroverdrive 300 --autorespond y
rocm-smi -d 0 --setextremum min mclk 900 --autorespond y
rocm-smi -d 0 --setextremum max mclk 1300 --autorespond y
rocm-smi -d 0 --setmclk 2
EOF
check "rocm-smi set: exit 0" '[ $RC = 0 ]'
# (the GPU list came from `amd-smi static --json`, detection's first AMD source)
check "rocm-smi set: exact argv" 'grep -v "^amd-smi" "$SMI_SIM_LOG" | diff "$W/rset.want" -'

# --- benchmark YAML gpu.hardware: set for the run, put back after it (also
# after SIGTERM to magpie); the stand-in engine (tests/tools/fake_engine.py)
# serves on loopback, the GPUs are the stub's ---
if command -v python3 >/dev/null; then
    mkdir -p "$W/bin"
    printf '#!/bin/sh\nexec python3 %s "$@"\n' "$MP_SRC/tests/tools/fake_engine.py" >"$W/bin/vllm"
    chmod +x "$W/bin/vllm"
    export FAKE_ENGINE_TAG="gpuctl$$" FAKE_ENGINE_MAX_S=90
    port() { python3 "$MP_SRC/tests/tools/free_port.py"; }
    rm -f "$STUB_NVML_STATE"
    nv gpu set -i 1 --power-limit 600 >/dev/null 2>&1 # GPU 1 starts at 600 W: it must come back to 600
    cat >"$W/hw.yaml" <<'YAML'
gpu:
  device_ids: [0, 1]
  hardware:
    default:
      power: {limit_watts: 450}
      frequency: {gpu_clock_mhz: [1500, 1500]}
    per_gpu:
      1: {power: {limit_watts: 400}}
benchmark:
  framework: vllm
  model: fake-model
  run_mode: local
  envs: {CONC: 2, ISL: 16, OSL: 8, NUM_PROMPTS: 4, NUM_WARMUPS: 0}
  profiler: {torch_profiler: {enabled: false}}
YAML
    : >"$STUB_NVML_LOG"
    PATH="$W/bin:$PATH" PORT=$(port) MAGPIE_NVML_LIB=$STUB timeout 120 "$MAGPIE" benchmark -b "$W/hw.yaml" \
        -o "$W/bench" -q >"$W/bench.out" 2>"$W/bench.err"
    RC=$?
    WS=$(ls -d "$W"/bench/benchmark_vllm_* 2>/dev/null | tail -1)
    check "benchmark with gpu.hardware: exit 0" '[ $RC = 0 ]'
    cat >"$W/bench.want" <<'WANT'
nvmlDeviceSetPowerManagementLimit 0 450000
nvmlDeviceSetGpuLockedClocks 0 1500 1500
nvmlDeviceSetPowerManagementLimit 1 400000
nvmlDeviceSetGpuLockedClocks 1 1500 1500
nvmlDeviceResetGpuLockedClocks 0
nvmlDeviceSetPowerManagementLimit 0 700000
nvmlDeviceResetGpuLockedClocks 1
nvmlDeviceSetPowerManagementLimit 1 600000
WANT
    check "benchmark: set before, put back after (the values read before)" 'diff "$W/bench.want" "$STUB_NVML_LOG"'
    check "benchmark: GPUs as before" 'printf "0 700000 0 0 0 0\n1 600000 0 0 0 0\n" | diff - "$STUB_NVML_STATE"'
    check "benchmark: gpu_hardware.log in the workspace" \
        'grep -q "GPU 1 (NVIDIA H200 (stub)): power limit 400 W -> 600 W" "$WS/gpu_hardware.log"'
    check "benchmark: the report says so" 'grep -q "gpu.hardware: set for the run and put back" "$WS/benchmark_report.json"'

    # SIGTERM mid-run: settings in force while the engine serves, put back after
    : >"$STUB_NVML_LOG"
    P=$(port)
    PATH="$W/bin:$PATH" PORT=$P MAGPIE_NVML_LIB=$STUB FAKE_ENGINE_ITL_MS=50 "$MAGPIE" benchmark -b "$W/hw.yaml" \
        --num-prompts 40 --output-len 64 -o "$W/sig" -q >"$W/sig.out" 2>&1 &
    MP=$!
    for _ in $(seq 900); do
        python3 -c "import sys,urllib.request as u; sys.exit(u.urlopen(sys.argv[1], timeout=2).status != 200)" \
            "http://127.0.0.1:$P/health" 2>/dev/null && break
        sleep 0.1
    done
    DURING=$(cat "$STUB_NVML_STATE")
    kill -TERM $MP
    wait $MP
    RC=$?
    check "sigterm: settings in force during the run" '[ "$DURING" = "$(printf "0 450000 1500 1500 0 0\n1 400000 1500 1500 0 0")" ]'
    check "sigterm: magpie ended (exit $RC)" '[ $RC != 0 ]'
    check "sigterm: put back" 'printf "0 700000 0 0 0 0\n1 600000 0 0 0 0\n" | diff - "$STUB_NVML_STATE"'
    check "sigterm: no engine left" '[ "$(pgrep -f "fake-engine-core-$FAKE_ENGINE_TAG" | wc -l)" = 0 ]'

    # a setting the GPU refuses: nothing stays changed, the engine never starts
    : >"$STUB_NVML_LOG"
    PATH="$W/bin:$PATH" PORT=$(port) MAGPIE_NVML_LIB=$STUB STUB_NVML_FAIL=nvmlDeviceSetGpuLockedClocks \
        timeout 120 "$MAGPIE" benchmark -b "$W/hw.yaml" -o "$W/refused" -q >"$W/refused.out" 2>&1
    RC=$?
    WS=$(ls -d "$W"/refused/benchmark_vllm_* 2>/dev/null | tail -1)
    check "refused: exit 1" '[ $RC = 1 ]'
    check "refused: the reason in the report" 'grep -q "gpu.hardware could not be applied" "$WS/benchmark_report.json"'
    check "refused: GPU 0 put back, GPU 1 untouched" 'printf "0 700000 0 0 0 0\n1 600000 0 0 0 0\n" | diff - "$STUB_NVML_STATE"'
    check "refused: no engine started" '[ ! -s "$WS/server.log" ]'

    # a bad value in the section: exit 2 naming the field, nothing created
    sed 's/limit_watts: 450/limit_watts: -1/' "$W/hw.yaml" >"$W/bad.yaml"
    MAGPIE_NVML_LIB=$STUB "$MAGPIE" benchmark -b "$W/bad.yaml" -o "$W/bad" >"$W/bad.out" 2>&1
    RC=$?
    check "bad gpu.hardware: exit 2, field named" '[ $RC = 2 ] && grep -q "gpu.hardware.default.power.limit_watts" "$W/bad.out" && [ ! -d "$W/bad" ]'
else
    echo "SKIPPED benchmark gpu.hardware: python3 not found (the stand-in engine needs it)"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
