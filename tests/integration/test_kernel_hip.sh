#!/usr/bin/env bash
# HIP without an AMD GPU: the HIP examples (examples/kernels/hip, Magpie-style
# testcase programs that time themselves with runtime/magpie_timing.h) go
# through `magpie compare`: every kernel's compile stage (hipcc, offload
# target from MAGPIE_GPU_ARCH) must succeed and produce a code object for
# that target, every testcase must then fail with the HIP runtime's error
# (no device), later stages stay NOT_RUN, and the exit code is 1. Also
# checks that magpie_timing.h compiles warning-free under hipcc.
#
# Env: MAGPIE (magpie binary), MP_SRC (repository root). Needs hipcc
# (Debian: hipcc, libamdhip64-dev; `make deps` installs them); SKIP without.
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_SRC:?MP_SRC must point to the repository}"
command -v hipcc >/dev/null 2>&1 || { echo "SKIP: hipcc not installed"; exit 0; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 0; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/khip.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
# Debian's hipcc (ROCm 5.2) predates gfx942 (MI300X); gfx90a (MI210/MI250)
# is the newest target it knows.
export MAGPIE_GPU_ARCH=${HIP_TEST_ARCH:-gfx90a}
# a copy laid out like the repository, so nothing is built in the source tree
mkdir -p "$TMP/src/examples/kernels" "$TMP/src/runtime"
cp -r "$MP_SRC/examples/kernels/hip" "$TMP/src/examples/kernels/"
cp "$MP_SRC/runtime/magpie_timing.h" "$TMP/src/runtime/"
(cd "$TMP/src" && "$MAGPIE" compare -q -o "$TMP/ws" -k examples/kernels/hip/compare.yaml \
    >"$TMP/out" 2>"$TMP/err")
rc=$?
[ "$rc" = 1 ] || fail "compare exit $rc, expected 1 (no AMD GPU: every testcase fails)"
rep=$(find "$TMP/ws" -name compare_report.json | head -1)
if [ -z "$rep" ]; then
    fail "no compare_report.json ($(head -c 300 "$TMP/err"))"
else
    python3 - "$rep" >"$TMP/check" 2>&1 <<'PY' || fail "report: $(cat "$TMP/check")"
import json, sys
r = json.load(open(sys.argv[1]))
res = r["results"]["kernel_results"]
ids = [k["extra"]["kernel_id"] for k in res]
assert ids == ["vadd", "vadd_x4", "vadd_chunk", "vadd_offbyone", "vadd_nowrite"], ids
for k in res:
    text = json.dumps(k)
    assert k["compiling_state"] == "SUCCESS", text[:400]
    assert k["correctness_state"] == "FAILED", text[:400]
    assert k["latency_state"] == "NOT_RUN" and k["performance_state"] == "NOT_RUN", text[:400]
    assert "hipError" in k["correctness_result"]["errors"], text[:400]
print("ok", ids)
PY
fi
for v in 0 1 2 3 4; do
    b="$TMP/src/examples/kernels/hip/vadd_test_$v"
    [ -x "$b" ] || { fail "vadd_test_$v not built"; continue; }
    grep -q -a "amdgcn-amd-amdhsa--$MAGPIE_GPU_ARCH" "$b" ||
        fail "vadd_test_$v has no code object for $MAGPIE_GPU_ARCH"
done
hipcc -O3 --offload-arch="$MAGPIE_GPU_ARCH" -Wall -Wextra -Werror -I"$MP_SRC/runtime" \
    -o "$TMP/vt" "$MP_SRC/examples/kernels/hip/vadd_test.hip" 2>"$TMP/err" ||
    fail "magpie_timing.h under hipcc -Wall -Wextra -Werror: $(head -c 600 "$TMP/err")"
[ $fails = 0 ] && echo "test_kernel_hip: ok"
exit $fails
