#!/usr/bin/env bash
# The references `magpie trace replay` writes for the real H200 Mixtral
# trace's top 20 ops, run under PyTorch (replay_refs.py: each imports, builds
# its inputs with the recorded shapes and strides, runs one call), then
# `--run` with MAGPIE_REPLAY_ALLOW_CPU on two GEMM rows so the timing path
# (runtime/magpie_replay.py, the analyze runner's Sampler) fills the replay
# columns. On a GPU the refs run on it and --run times real kernels. Exit 77
# (skipped) when torch is not importable (CI has none).
#
# Env: MAGPIE, MP_SHARED, MP_SRC; MAGPIE_PYTHON (default python3).
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_SHARED:?MP_SHARED must point to the shared data}"
: "${MP_SRC:?MP_SRC must point to the repository}"
PY=${MAGPIE_PYTHON:-python3}
if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
    echo "SKIP: PyTorch is not importable for $PY (set MAGPIE_PYTHON to an interpreter with torch)"
    exit 77
fi
TRACE="$MP_SHARED/data/traces/h200/mixtral_shape_l8_bs16_p256_d12.json.gz"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/replayt.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export MAGPIE_RUNTIME_DIR="$MP_SRC/runtime"
fails=0
"$MAGPIE" trace replay "$TRACE" -o "$TMP/r" -q >"$TMP/out" 2>&1 || {
    echo "FAIL: replay: $(tail -3 "$TMP/out")"
    exit 1
}
"$PY" "$MP_SRC/tests/integration/replay_refs.py" "$TMP/r" >"$TMP/refs" 2>&1 || {
    echo "FAIL: refs:"
    cat "$TMP/refs"
    fails=1
}
grep -q "refs: 20 ran" "$TMP/refs" || {
    echo "FAIL: not all 20 refs ran: $(tail -1 "$TMP/refs")"
    fails=1
}
# one op of each kind (tests/fixtures/replay/ops_synth.py): on a CPU the
# flash-attention op has no kernel, the vLLM custom op is not importable
"$MAGPIE" trace replay "$MP_SRC/tests/fixtures/replay/ops_synth.json.gz" --top 0 -o "$TMP/s" -q \
    >"$TMP/out" 2>&1 || { echo "FAIL: synthetic replay: $(tail -3 "$TMP/out")"; fails=1; }
"$PY" "$MP_SRC/tests/integration/replay_refs.py" "$TMP/s" >"$TMP/refs" 2>&1 || {
    echo "FAIL: synthetic refs:"
    cat "$TMP/refs"
    fails=1
}
grep -Eq "refs: 1[56] ran, [01] without a kernel on this device, 1 custom ops not importable, 0 failed" \
    "$TMP/refs" || { echo "FAIL: synthetic refs: $(tail -1 "$TMP/refs")"; fails=1; }
# the refs are what `magpie compare` takes: baseline op and candidate pass
# correctness and the re-check after timing (an accumulating in-place op
# included); the runner runs on whatever device torch has
for n in 1 13 16; do
    (cd "$TMP/s" && MAGPIE_PYTHON="$PY" "$MAGPIE" compare -q --no-perf --max-time 1 \
        -k "compare_$n.yaml" -o "$TMP/s/cmp") >"$TMP/cmp" 2>&1
    grep -q "Correctness: 2/2 passed" "$TMP/cmp" || {
        echo "FAIL: compare_$n.yaml: $(grep -i correctness "$TMP/cmp" | head -3)"
        fails=1
    }
done
MAGPIE_REPLAY_ALLOW_CPU=1 MAGPIE_PYTHON="$PY" "$MAGPIE" trace replay "$TRACE" --category GEMM \
    --top 2 --run -o "$TMP/run" >"$TMP/out" 2>&1 || {
    echo "FAIL: --run: $(tail -5 "$TMP/out")"
    fails=1
}
"$PY" - "$TMP/run/replay_summary.json" <<'PY' || fails=1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["run_note"].startswith("replayed on"), d["run_note"]
for o in d["ops"]:
    assert o["replay_kernel_us_median"] and o["replay_kernel_us_median"] > 0, o
    assert o["replay_kernel_us_ci_lo"] <= o["replay_kernel_us_median"] <= o["replay_kernel_us_ci_hi"], o
    assert o["ratio"] > 0, o
PY
[ $fails = 0 ] && echo ok
exit $fails
