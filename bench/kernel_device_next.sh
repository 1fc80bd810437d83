#!/bin/bash
# Issue 5's remaining GPU checks, in one device call (about 9 minutes):
#   1. the runner's 8192^3 bf16 matmul with the power guard (default), without
#      it and with a fixed 1x cool-down, and the 4096^3 matmul and softmax
#      with the defaults, interleaved process by process
#      (bench/kernel_noise_matmul.sh, ROUNDS rounds, default 8; VARIANTS
#      overrides the set);
#   2. the runner's sensitivity set, examples/kernels/pytorch/compare_2pct.yaml
#      (add_triton_copy must not be FASTER/SLOWER, add_triton_2pct SLOWER);
#   3. the clock monitor on a real GPU: one analyze of the 8192^3 matmul, whose
#      report must carry latency_result.gpu_state.during_timing and whose
#      workdir must keep gpu_clocks.csv.
# Only a handful of files go to $OUT (the device tool returns at most 16 by
# name): noise_raw.jsonl, smi.csv, noise_summary.txt, compare_2pct.txt,
# compare_2pct.json, clockmon.txt, gpu_clocks.csv, log.txt and the first
# round's runner result of the guarded 8192^3 matmul (per-sample clocks).
#   bench/kernel_device_libs.sh build/rel-k     (here, first)
#   device: MAGPIE=$PWD/.klibs/magpie OUT=$OUT bash bench/kernel_device_next.sh [ROUNDS]
set -u
R=${1:-8}
OUT=${OUT:?}
M=${MAGPIE:-build/rel-k/magpie}
export PATH=$PATH:/usr/local/cuda/bin
W=$(mktemp -d)
log=$OUT/log.txt
# 2 and 3 first: short, and their results must not be lost to a time limit
timeout 150 "$M" compare --no-perf -o "$W/c" -k examples/kernels/pytorch/compare_2pct.yaml \
    >"$OUT/compare_2pct.txt" 2>>"$log"
echo "compare rc=$?" >>"$log"
cp "$(find "$W/c" -name compare_report.json | head -1)" "$OUT/compare_2pct.json" 2>>"$log"
cat >"$W/k8192.yaml" <<'YAML'
kernel: {id: matmul_bf16_8192, type: pytorch,
         source_files: [examples/kernels/pytorch/matmul_bf16_8192.py],
         reference: examples/kernels/pytorch/matmul_bf16_8192.py, dtype: bfloat16, seeds: 1}
YAML
timeout 120 "$M" analyze --no-perf -o "$W/a" -k "$W/k8192.yaml" >"$OUT/clockmon.txt" 2>>"$log"
echo "analyze rc=$?" >>"$log"
python3 - "$(find "$W/a" -name analyze_report.json | head -1)" >>"$OUT/clockmon.txt" 2>&1 <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print("gpu_state:", json.dumps(r["latency_result"]["gpu_state"]))
PY
cp "$(find "$W/a" -name gpu_clocks.csv | head -1)" "$OUT/gpu_clocks.csv" 2>>"$log"
VARIANTS=${VARIANTS:-matmul_bf16_8192 matmul_bf16_8192_noguard matmul_bf16_8192_cool1 \
matmul_bf16_4096 softmax_4096} KEEP_RESULT=matmul_bf16_8192 \
    MAGPIE=$M OUT=$OUT timeout ${NOISE_S:-400} bash bench/kernel_noise_matmul.sh "$R" >>"$log" 2>&1
python3 bench/kernel_noise.py summary "$OUT/noise_raw.jsonl" >"$OUT/noise_summary.txt" 2>&1
python3 bench/kernel_noise.py clocks "$OUT/noise_raw.jsonl" "$OUT/smi.csv" \
    >>"$OUT/noise_summary.txt" 2>&1
rm -f "$OUT/noise_log.txt"
cat "$OUT/noise_summary.txt" | grep -v '^    medians'
tail -12 "$OUT/compare_2pct.txt"
grep -E 'GPU|gpu_state' "$OUT/clockmon.txt"
