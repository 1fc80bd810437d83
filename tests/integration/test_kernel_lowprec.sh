#!/usr/bin/env bash
# Low-precision correctness of the Python runner (runtime/magpie_check.py,
# docs/correctness.md) on examples/kernels/lowprec/cpu.yaml, with whatever
# device torch finds: no dtype and no tolerances in the YAML, so they come
# from the tensors, and fp16/bf16/fp8 outputs are judged against a float64
# run of the reference. Correct kernels (fused, other reduction orders,
# unfused low-precision chains) must pass; subtly wrong ones (a dropped term,
# a float16 accumulator, a statistic over half the row, a short denominator)
# and NaN outputs must fail, NaN with its real reason. The report must be
# strict JSON. PyTorch is not installed by `make deps`: SKIP without it.
#
# Env: MAGPIE (magpie binary), MP_SRC (repository root), MAGPIE_PYTHON.
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_SRC:?MP_SRC must point to the repository}"
PY=${MAGPIE_PYTHON:-python3}
if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
    echo "SKIP: PyTorch is not installed for $PY (verified on the H200 and a CPU venv, see docs/correctness.md)"
    exit 0
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/klp.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cd "$MP_SRC" || exit 1
export MAGPIE_RUNTIME_DIR="$MP_SRC/runtime"
fails=0
"$MAGPIE" analyze -q --no-perf --no-latency -k examples/kernels/lowprec/cpu.yaml -o "$TMP/r" \
    >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc = 1 ] || { echo "FAIL: analyze exit $rc (expected 1: wrong kernels): $(tail -5 "$TMP/err")"; fails=1; }
rep=$(ls "$TMP"/r/analyze_*/analyze_report.json 2>/dev/null | head -1)
"$PY" - "$rep" "$TMP"/r/analyze_*/*/runner_run_result.json <<'PY' || fails=1
import json, sys

def strict(path):
    def bad(c):
        raise ValueError("%s: non-JSON constant %s" % (path, c))
    with open(path) as f:
        return json.load(f, parse_constant=bad)

d = strict(sys.argv[1])["results"]
for p in sys.argv[2:]:
    strict(p)
ok = {k["extra"]["kernel_id"]: k["correctness_state"] == "SUCCESS" for k in d}
want = {"rmsnorm_fused": True, "matmul_splitk": True, "softmax_unfused": True,
        "fp8_matmul_fused": True, "fp8_quant_recip": True,
        "rmsnorm_half_row": False, "rmsnorm_nan": False, "matmul_fp16_acc": False,
        "matmul_drop_k": False, "softmax_drop_last": False}
assert ok == want, {k: (ok.get(k), v) for k, v in want.items() if ok.get(k) != v}
by = {k["extra"]["kernel_id"]: k["correctness_result"] for k in d}
# the issue's case: bf16 output, no dtype in the YAML -> bf16 tolerance + float64 rule
t = by["rmsnorm_fused"]["tolerance"]
assert t["dtype"] == "bfloat16" and t["rule"] == "high_precision", t
assert t["hp_reference"] == "float64" and t["hp_ratio"] <= t["hp_factor"], t
assert by["fp8_quant_recip"]["tolerance"]["dtype"] == "float8_e4m3fn", by["fp8_quant_recip"]
# NaN outputs: the reason survives, the statistic is null + "inf"
n = by["rmsnorm_nan"]
assert "NaN/Inf values" in n["errors"], n
assert n["max_abs_err"] is None and n["nonfinite"]["max_abs_err"] == "inf", n
assert "RMS error" in by["rmsnorm_half_row"]["errors"], by["rmsnorm_half_row"]
for k in ("matmul_drop_k", "matmul_fp16_acc", "softmax_drop_last"):
    assert "times the reference's own error bound" in by[k]["errors"], by[k]
PY
[ $fails = 0 ] && echo ok
exit $fails
