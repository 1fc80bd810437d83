#!/bin/bash
# The Python runner's result files are strict JSON (runtime/magpie_check.py
# strict_json / dump_strict): NaN and +-Inf become null with their value
# under "nonfinite" beside them and listed in "nonfinite_fields", nested in
# dicts and lists; and the tolerance table picks the least precise of the
# declared and the output dtype. No torch needed (magpie_check imports it
# only through the caller).
set -eu
SRC=${MP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
python3 - "$SRC/runtime" <<'PY'
import io
import json
import math
import sys

sys.path.insert(0, sys.argv[1])
import magpie_check as mc  # noqa: E402


def strict_load(text):
    def bad(c):
        raise ValueError("non-JSON constant " + c)
    return json.loads(text, parse_constant=bad)


res = {"kernels": [{"id": "0_k", "correctness": {"ok": False, "max_abs_err": math.inf,
                                                 "max_rel_err": -math.inf, "checks": 1},
                    "timing": {"samples_ms": [0.5, math.nan, 0.25]}}], "device": "cpu"}
buf = io.StringIO()
mc.dump_strict(res, buf)
d = strict_load(buf.getvalue())
c = d["kernels"][0]["correctness"]
assert c["max_abs_err"] is None and c["max_rel_err"] is None, c
assert c["nonfinite"] == {"max_abs_err": "inf", "max_rel_err": "-inf"}, c
assert d["kernels"][0]["timing"]["samples_ms"] == [0.5, None, 0.25], d
assert d["nonfinite_fields"] == ["kernels[0].correctness.max_abs_err: inf",
                                 "kernels[0].correctness.max_rel_err: -inf",
                                 "kernels[0].timing.samples_ms[1]: nan"], d["nonfinite_fields"]
assert c["checks"] == 1 and c["ok"] is False
# finite results are written unchanged, with no extra keys
buf = io.StringIO()
mc.dump_strict({"a": [1.5, {"b": 2}], "c": True, "d": None}, buf)
assert strict_load(buf.getvalue()) == {"a": [1.5, {"b": 2}], "c": True, "d": None}
# plain json.dumps of the old result would not have been JSON
try:
    json.dumps(res, allow_nan=False)
    raise AssertionError("allow_nan=False accepted inf")
except ValueError:
    pass

# tolerance table: least precise of declared and observed
assert mc.tolerance(None, "torch.bfloat16")[:3] == ("bfloat16", 1e-5, 1.6e-2)
assert mc.tolerance("float32", "torch.bfloat16")[0] == "bfloat16"  # the issue's case
assert mc.tolerance("bf16", "torch.float32")[0] == "bfloat16"
assert mc.tolerance(None, "torch.float16")[1:3] == (1e-5, 1e-3)
assert mc.tolerance(None, "torch.float8_e4m3fn")[1:3] == (2.0 ** -9, 0.125)
assert mc.tolerance(None, "torch.int64")[:3] == (None, 0.0, 0.0)
assert mc.tolerance(None, "torch.float16", atol=0.5)[1:] == (0.5, 1e-3, True)
print("ok")
PY
