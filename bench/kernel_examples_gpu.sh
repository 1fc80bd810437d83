#!/bin/bash
# The CUDA and PyTorch/Triton example sets end to end on a GPU (no ncu: it
# would lock the clocks), for docs/compatibility.md. Writes
# $OUT/examples_log.txt (terminal summaries) and $OUT/example_reports.tar.gz.
#   bench/kernel_examples_gpu.sh      (from the repository root; GPU)
set -u
OUT=${OUT:-/tmp/kernel_examples}
M=${MAGPIE:-build/rel-k/magpie}
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$OUT"
W=$(mktemp -d)
log=$OUT/examples_log.txt
for y in cuda/compare.yaml cuda/compare_2pct.yaml cuda/compare_matmul.yaml cuda/analyze.yaml \
    pytorch/compare.yaml pytorch/analyze.yaml; do
    case $y in *compare*) mode=compare ;; *) mode=analyze ;; esac
    t0=$(date +%s.%N)
    echo "=== magpie $mode --no-perf -k examples/kernels/$y" >>"$log"
    timeout 150 "$M" $mode --no-perf -o "$W/$(echo "$y" | tr / _)" -k "examples/kernels/$y" \
        >>"$log" 2>&1
    echo "=== rc=$? wall=$(awk "BEGIN{print $(date +%s.%N) - $t0}") s" >>"$log"
done
(cd "$W" && find . -name '*_report.json' -o -name '*_result.json' | tar czf "$OUT/example_reports.tar.gz" -T -)
