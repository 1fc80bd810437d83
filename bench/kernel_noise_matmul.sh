#!/bin/bash
# Run-to-run noise of the Python runner's timing next to
# triton.testing.do_bench and the C harness on the H200: ROUNDS rounds, each
# one process per variant, interleaved, with nvidia-smi sampling clocks,
# power, temperature and throttle reasons every 20 ms in the background so
# each process's median can be set against the clocks
# during its own run. Variants (runner = runtime/magpie_runner.py on the jobs
# one `magpie analyze -k examples/kernels/pytorch/noise.yaml` wrote):
#   runner_<kernel>         defaults, one process per kernel (matmul 4096,
#                           matmul 8192, softmax 4096, add 65536)
#   runner_<kernel>_nohold  the same without the launch hold (the GPU spin
#                           the runner queues ahead of each sample so the
#                           kernel is queued before the start event fires),
#                           i.e. the runner before 2026-11-30 (not run by
#                           default: VARIANTS="..." picks the variants)
#   runner_<kernel>_noguard the same without the power guard (the runner
#                           before its clock probe and cool-down)
#   runner_<kernel>_cool1   the guard with a fixed cool-down of 1x the
#                           kernel's time (no adaptation)
#   do_bench     examples/kernels/pytorch/noise_dobench.py (all five kernels)
#   harness      magpie's C harness on vadd (examples/kernels/cuda/noise.yaml)
#   harness_burn[_noguard]  the C harness on a power-bound kernel
#                (examples/kernels/cuda/mma_burn.yaml), with and without its
#                power guard
# Writes $OUT/noise_raw.jsonl (one line per process and kernel, with the
# process's start and end time), $OUT/smi.csv and $OUT/noise_summary.txt.
#   OUT=DIR MAGPIE=build/rel-k/magpie bench/kernel_noise_matmul.sh [ROUNDS]   (GPU)
set -u
R=${1:-12}
OUT=${OUT:-/tmp/kernel_noise}
M=${MAGPIE:-build/rel-k/magpie}
H=bench/kernel_noise.py
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$OUT"
W=$(mktemp -d)
raw=$OUT/noise_raw.jsonl
: >"$raw"
log=$OUT/noise_log.txt
q='timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active'
nvidia-smi --query-gpu=$q --format=csv,noheader -lms 20 >"$OUT/smi.csv" 2>>"$log" &
smi=$!
"$M" analyze --no-perf -q -o "$W/v" -k examples/kernels/cuda/noise.yaml >"$W/v.log" 2>&1
vjob=$(ls "$W"/v/*/0_vadd/harness_run_job.json)
"$M" analyze --no-perf --no-latency -q -o "$W/m" -k examples/kernels/pytorch/noise.yaml \
    >"$W/m.log" 2>&1
for k in matmul_bf16_4096 matmul_bf16_8192 softmax_4096 add_65536; do
    j=$(find "$W/m" -path "*_$k/runner_run_job.json" | head -1)
    echo "job $k: $j" >>"$log"
    python3 $H job "$j" "$W/r_$k.json"
    python3 $H job "$j" "$W/r_${k}_nohold.json" hold_cycles=-1
    python3 $H job "$j" "$W/r_${k}_noguard.json" power_guard=false
    python3 $H job "$j" "$W/r_${k}_cool1.json" cool_ratio=1
done
echo "harness job: $vjob" >>"$log"
# the harness on a power-bound kernel, with and without its power guard
"$M" analyze --no-perf --no-latency -q -o "$W/b" -k examples/kernels/cuda/mma_burn.yaml \
    >"$W/b.log" 2>&1
bjob=$(ls "$W"/b/*/0_mma_burn/harness_run_job.json 2>/dev/null | head -1)
if [ -n "$bjob" ]; then
    python3 $H job "$bjob" "$(dirname "$bjob")/job_harness_burn.json"
    python3 $H job "$bjob" "$(dirname "$bjob")/job_harness_burn_noguard.json" power_guard=false
else
    cat "$W/b.log" >>"$log"
fi
cubin=$W/vadd.cubin
nvcc -cubin -arch=sm_90 -o "$cubin" examples/kernels/cuda/vadd.cu || cubin=
now() { date +%s.%N; }
for r in $(seq 1 "$R"); do
    for v in ${VARIANTS:-matmul_bf16_4096 matmul_bf16_8192 softmax_4096 add_65536 do_bench harness}; do
        t0=$(now)
        case $v in
        do_bench)
            timeout 120 python3 examples/kernels/pytorch/noise_dobench.py $cubin 2>>"$log" |
                sed 's/"tool": "do_bench"/"tags": ["do_bench"]/' >"$W/lines"
            ;;
        harness_burn | harness_burn_noguard)
            bj=$(dirname "$bjob")/job_$v.json
            rm -f "$(dirname "$bjob")/harness_run_result.json"
            timeout 60 "$M" analyze --harness-child "$bj" >>"$log" 2>&1
            python3 $H parse "$(dirname "$bjob")/harness_run_result.json" "$v" >"$W/lines"
            ;;
        harness)
            rm -f "$(dirname "$vjob")/harness_run_result.json"
            timeout 60 "$M" analyze --harness-child "$vjob" >>"$log" 2>&1
            python3 $H parse "$(dirname "$vjob")/harness_run_result.json" harness >"$W/lines"
            ;;
        *)
            res=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['output'])" \
                "$W/r_$v.json")
            rm -f "$res"
            timeout 120 python3 runtime/magpie_runner.py "$W/r_$v.json" >"$W/rlog" 2>&1
            grep -v MAGPIE_LATENCY_JSON "$W/rlog" >>"$log"
            python3 $H parse "$res" "runner_$v" >"$W/lines"
            [ "$r" = 1 ] && [ -n "${KEEP_RESULT:-}" ] && [ "$v" = "$KEEP_RESULT" ] &&
                cp "$res" "$OUT/result_${v}_round1.json"
            ;;
        esac
        t1=$(now)
        sed "s/}\$/, \"round\": $r, \"t0\": $t0, \"t1\": $t1}/" "$W/lines" >>"$raw"
    done
done
kill $smi 2>/dev/null
python3 $H summary "$raw" | tee "$OUT/noise_summary.txt"
python3 $H clocks "$raw" "$OUT/smi.csv" | tee -a "$OUT/noise_summary.txt"
