#!/bin/bash
# Run-to-run noise of kernel timing on a GPU: the median of each of ROUNDS
# separate processes, for magpie's C harness (vadd, examples/kernels/cuda/
# noise.yaml), magpie's Python runner (8192^3 bf16 matmul) and
# triton.testing.do_bench on the same kernels; processes of all variants
# interleaved round by round so drift hits all alike. Writes
# $OUT/noise_raw.jsonl and $OUT/noise_summary.txt (see bench/kernel_timing.md).
#   bench/kernel_noise.sh [ROUNDS]       (from the repository root; GPU)
# Variants of the harness: async (the default: poison and L2 flush queued
# ahead of the kernel), sync (MAGPIE_SYNC_FLUSH=1, the fills waited for, as
# before 2026-11-30), sync_pinned (the same pinned to one CPU core).
set -u
R=${1:-10}
OUT=${OUT:-/tmp/kernel_noise}
M=${MAGPIE:-build/rel-k/magpie}
H=bench/kernel_noise.py
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$OUT"
W=$(mktemp -d)
raw=$OUT/noise_raw.jsonl
q() { nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader; }
"$M" analyze --no-perf -q -o "$W/v" -k examples/kernels/cuda/noise.yaml >"$W/v.log" 2>&1
vjob=$(ls "$W"/v/*/0_vadd/harness_run_job.json)
"$M" analyze --no-perf --no-latency -q -o "$W/m" -k examples/kernels/pytorch/noise.yaml \
    >"$W/m.log" 2>&1
mjob=$(grep -l matmul_bf16_8192 $(find "$W/m" -name runner_run_job.json) | head -1)
python3 $H job "$mjob" "$W/m_w01.json" only=matmul_bf16_8192 warmup_s=0.1
python3 $H job "$mjob" "$W/m_w1.json" only=matmul_bf16_8192 warmup_s=1.0
cubin=$W/vadd.cubin
nvcc -cubin -arch=sm_90 -o "$cubin" examples/kernels/cuda/vadd.cu || cubin=
echo "jobs: $vjob $mjob" >"$OUT/noise_log.txt"
for r in $(seq 1 "$R"); do
    echo "round $r $(q)" >>"$OUT/noise_log.txt"
    for v in async sync sync_pinned; do
        env=()
        pre=()
        [ "$v" != async ] && env=(MAGPIE_SYNC_FLUSH=1)
        [ "$v" = sync_pinned ] && pre=(taskset -c 3)
        rm -f "$(dirname "$vjob")/harness_run_result.json"
        env "${env[@]}" "${pre[@]}" timeout 60 "$M" analyze --harness-child "$vjob" \
            >>"$OUT/noise_log.txt" 2>&1
        python3 $H parse "$(dirname "$vjob")/harness_run_result.json" harness "$v" >>"$raw"
    done
    for v in w01 w1; do
        rm -f "$(dirname "$mjob")/runner_run_result.json"
        timeout 120 python3 runtime/magpie_runner.py "$W/m_$v.json" >>"$OUT/noise_log.txt" 2>&1
        python3 $H parse "$(dirname "$mjob")/runner_run_result.json" runner "$v" >>"$raw"
    done
    timeout 120 python3 examples/kernels/pytorch/noise_dobench.py $cubin 2>>"$OUT/noise_log.txt" |
        sed 's/"tool": "do_bench"/"tags": ["do_bench"]/' >>"$raw"
done
echo "end $(q)" >>"$OUT/noise_log.txt"
python3 $H summary "$raw" | tee "$OUT/noise_summary.txt"
