#!/usr/bin/env bash
# The H200 fidelity run of issue 28 in one device call (bench/README.md,
# "replay_fidelity_h200"): on the GPU machine, after `bash
# bench/replay_fidelity.sh --stage` here (the shared H200 traces and the
# shared make_traces.py into .gpudata/), with `.klibs` from
# bench/kernel_device_libs.sh and build/release/magpie carried:
#   1. bench/replay_fidelity.sh on the shared Mixtral and TP2 rank-0 traces;
#   2. the Mixtral trace's split aten::sort rows (27, 30) with --run;
#   3. a Llama-8B-shaped trace captured there, replayed the same way.
# Runs nothing unless the GPU is an H200 (an H100 cannot judge H200 kernel
# times; exit 3). Everything under /tmp/o is tarred into $OUT/all.tgz, also
# when the steps run past BUDGET_S (default 555 s); PT: seconds per trace
# (default 105); TRACES: the traces of step 1.
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    nvidia-smi -L
    echo "NOT AN H200: nothing run"
    exit 3
fi
export PYTHONUNBUFFERED=1 MAGPIE_RUNTIME_DIR=$PWD/runtime
M=$PWD/.klibs/magpie O=/tmp/o
mkdir -p $O
steps() {
    # shellcheck disable=SC2086 # TRACES is a list of paths and globs
    MAGPIE=$M OUT=$O/a PER_TRACE_S=${PT:-105} bash bench/replay_fidelity.sh \
        ${TRACES:-.gpudata/mixtral*.gz .gpudata/tp2*.gz} >/dev/null 2>&1
    cp $O/a/fidelity.txt "$OUT/fidelity_h200_shared.txt"
    for r in 27 30; do
        timeout 60 "$M" trace replay .gpudata/mixtral*.gz --row $r --run --max-time 1 \
            -o $O/s$r >$O/s$r.log 2>&1
    done
    timeout 150 python3 .gpudata/make_traces.py --out /tmp/tl --which llama >$O/mk.log 2>&1
    MAGPIE=$M OUT=$O/l PER_TRACE_S=100 bash bench/replay_fidelity.sh \
        /tmp/tl/llama8b_bs8_p512_d24.json >/dev/null 2>&1
    cp $O/l/fidelity.txt "$OUT/fidelity_h200_llama.txt"
}
export -f steps
export M O OUT
timeout "${BUDGET_S:-555}" bash -c steps
tar czf "$OUT/all.tgz" -C $O .
cut -c1-220 $O/a/fidelity.txt | tail -30
for r in 27 30; do
    python3 - "$O/s$r/replay_summary.json" <<'PY' 2>&1
import json, sys
o = json.load(open(sys.argv[1]))["ops"][0]
print(o["rank"], o["ratio"], o["replay_kernel_us_median"], o["trace_kernel_us_median"],
      o["kernels_match"], (o["replay_note"] or "")[:300])
PY
done
cut -c1-220 $O/l/fidelity.txt 2>/dev/null | tail -8
