#!/bin/bash
# Low-precision correctness on a GPU (docs/correctness.md): the calibration
# of the high-precision rule (bench/lowprec_calibrate.py at two sizes) and
# the example problems through magpie (examples/kernels/lowprec/triton.yaml
# and cpu.yaml), once with this runner and, if OLD_RUNTIME names a directory
# holding an earlier magpie_runner.py, once with that one for comparison;
# then the float32 PyTorch/Triton examples, which must keep their verdicts.
# Writes $OUT/lowprec_log.txt, $OUT/calib_s1.json, $OUT/calib_s8.json and
# $OUT/lowprec_reports.tar.gz.
#   OUT=DIR MAGPIE=path/to/magpie bench/lowprec_gpu.sh      (repository root)
set -u
OUT=${OUT:-/tmp/lowprec}
M=${MAGPIE:-build/rel-k/magpie}
mkdir -p "$OUT"
W=$(mktemp -d)
log=$OUT/lowprec_log.txt
export PYTHONUNBUFFERED=1
run() { # title, command...
    local t0
    t0=$(date +%s.%N)
    echo "=== $1" >>"$log"
    shift
    "$@" >>"$log" 2>&1
    echo "=== rc=$? wall=$(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$log"
}
{
    date -u
    nvidia-smi -L
    python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
} >>"$log" 2>&1
run "calibration, scale 1" timeout 150 python3 bench/lowprec_calibrate.py --device cuda --seeds 3 \
    --json "$OUT/calib_s1.json"
run "calibration, scale 8" timeout 150 python3 bench/lowprec_calibrate.py --device cuda --seeds 3 \
    --scale 8 --json "$OUT/calib_s8.json"
for y in triton cpu; do
    run "magpie analyze --no-perf --no-latency -k examples/kernels/lowprec/$y.yaml" \
        timeout 150 "$M" analyze --no-perf --no-latency -o "$W/new_$y" \
        -k "examples/kernels/lowprec/$y.yaml"
done
if [ -n "${OLD_RUNTIME:-}" ]; then
    for y in triton cpu; do
        run "OLD RUNNER ($OLD_RUNTIME): analyze -k examples/kernels/lowprec/$y.yaml" \
            env MAGPIE_RUNTIME_DIR="$OLD_RUNTIME" timeout 150 "$M" analyze --no-perf \
            --no-latency -o "$W/old_$y" -k "examples/kernels/lowprec/$y.yaml"
    done
fi
run "float32 examples: compare --no-perf --no-latency -k examples/kernels/pytorch/compare.yaml" \
    timeout 150 "$M" compare --no-perf --no-latency -o "$W/fp32" \
    -k examples/kernels/pytorch/compare.yaml
(cd "$W" && find . -name '*_report.json' -o -name '*_result.json' |
    tar czf "$OUT/lowprec_reports.tar.gz" -T -)
grep -E '^(===|Kernel:|Correctness:)|  - Correctness' "$log" | tail -120
