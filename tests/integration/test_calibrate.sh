#!/usr/bin/env bash
# magpie gpu calibrate where no GPU is (the GPU runs are bench/calibrate_gpu.sh):
# usage errors exit 2, no driver exits 1 with why; and the calibration an H200
# produced (tests/fixtures/calib) used by the reports: --gpu-arch-json takes it
# as an arch file, the cache makes --gpu-arch auto take it over the data sheet
# for a trace of that GPU model, the ceiling is named and % of the data sheet's
# peak sits beside % of roofline; MAGPIE_NO_CALIBRATION=1 and --gpu-arch H200
# keep the data sheet; with an H100 calibration in the same cache each
# trace takes its own GPU model's; hardware_spec and --gpu-info list the cache.
#
# Env: MAGPIE, MP_FIXTURES, MP_SHARED (../shared, for a real H200 trace).
set -u
: "${MAGPIE:?}" "${MP_FIXTURES:?}"
CAL="$MP_FIXTURES/calib/h200_calibrate.json"
TRACE="${MP_SHARED:-}/data/traces/h200/mixtral_shape_l8_bs16_p256_d12.json.gz"
t=$(mktemp -d "${TMPDIR:-/tmp}/calib.XXXXXX")
trap 'rm -rf "$t"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# --- usage and environment ---
"$MAGPIE" gpu calibrate --dtypes bf16,fp9 >"$t/o" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "unknown dtype 'fp9'" "$t/o" || fail "bad --dtypes: rc $rc $(cat "$t/o")"
"$MAGPIE" gpu calibrate --quick --thorough >"$t/o" 2>&1
[ $? -eq 2 ] || fail "--quick --thorough accepted"
"$MAGPIE" gpu calibrate --repeats 1 >"$t/o" 2>&1
[ $? -eq 2 ] || fail "--repeats 1 accepted"
"$MAGPIE" gpu calibrate extra >"$t/o" 2>&1
[ $? -eq 2 ] || fail "a positional argument accepted"
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    "$MAGPIE" gpu calibrate --quick -o "$t/none.json" >"$t/o" 2>&1
    rc=$?
    [ $rc -eq 1 ] && grep -q "CUDA driver not found" "$t/o" || fail "no GPU: rc $rc $(cat "$t/o")"
    [ ! -e "$t/none.json" ] || fail "no GPU, yet -o was written"
fi
"$MAGPIE" gpu calibrate --help | grep -q "max_achievable_tflops" || fail "--help"
"$MAGPIE" gpu calibrate --dry-run >"$t/o" 2>&1
[ $? -eq 2 ] || fail "--dry-run without settings accepted"

# --- calibrating under settings (gpu.hardware's power/clocks), through the
# stub NVML (tests/tools/stub_nvml.c): planned, applied, and put back even
# when the calibration itself fails (no CUDA driver here) ---
STUB=${MP_BIN:-}/libstub_nvml.so
if [ -f "$STUB" ] && ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    export STUB_NVML_STATE=$t/nvml.state STUB_NVML_LOG=$t/nvml.log
    MAGPIE_NVML_LIB=$STUB "$MAGPIE" gpu calibrate --power-limit 500 --gpu-clock 1500,1500 \
        --dry-run >"$t/dry" 2>&1 || fail "settings --dry-run: $(cat "$t/dry")"
    grep -q "power limit 700 W -> 500 W" "$t/dry" && grep -q "locked to 1500-1500 MHz" "$t/dry" ||
        fail "the plan: $(cat "$t/dry")"
    [ ! -s "$STUB_NVML_LOG" ] || fail "--dry-run changed something: $(cat "$STUB_NVML_LOG")"
    MAGPIE_NVML_LIB=$STUB "$MAGPIE" gpu calibrate --power-limit 500 --gpu-clock 1500,1500 \
        --quick >"$t/set" 2>&1
    [ $? -eq 1 ] || fail "settings without CUDA: not exit 1"
    printf '%s\n' "nvmlDeviceSetPowerManagementLimit 0 500000" "nvmlDeviceSetGpuLockedClocks 0 1500 1500" \
        "nvmlDeviceResetGpuLockedClocks 0" "nvmlDeviceSetPowerManagementLimit 0 700000" |
        diff - "$STUB_NVML_LOG" >"$t/d" || fail "applied and put back: $(cat "$t/d")"
    grep -q "^0 700000 0 0 0 0$" "$STUB_NVML_STATE" || fail "GPU 0 not as found: $(cat "$STUB_NVML_STATE")"
    unset STUB_NVML_STATE STUB_NVML_LOG
fi

# --- the reports with the H200's calibration ---
if [ -f "$TRACE" ]; then
    "$MAGPIE" trace report "$TRACE" -o "$t/r1" --gpu-arch-json "$CAL" \
        --roofline-simple "$t/s1.csv" >"$t/o1" 2>&1 || fail "trace report --gpu-arch-json: $(tail -3 "$t/o1")"
    grep -q "^roofline ceiling: NVIDIA H200 (measured by magpie gpu calibrate, 2026-12-05T03:12:21Z, GPU-716027ad" "$t/o1" ||
        fail "the ceiling is not named: $(grep -i ceiling "$t/o1")"
    grep -q "measured ceiling" "$t/r1/report.html" || fail "report.html does not name the ceiling"
    grep -q "of the data sheet's peak" "$t/r1/report.html" || fail "report.html lacks % of peak"
    python3 - "$t/s1.csv" <<'PY' || fail "pct_peak_mean"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert "pct_peak_mean" in rows[0], rows[0].keys()
n = 0
for r in rows:
    if not r["pct_peak_mean"]:
        continue
    n += 1
    ratio = float(r["pct_peak_mean"]) / float(r["pct_roofline_mean"])
    ai = float(r["arithmetic_intensity_flops_per_byte"])
    # the measured ceiling is below the data sheet (H200: 4800 GB/s, bf16 989)
    assert 0 < ratio < 1, (r["op_name"], ratio)
    if r["compute_spec"] == "matrix_bf16" and ai > 1000:  # compute bound under both
        assert abs(ratio - 785.6 / 989) < 1e-3, ratio
    if ai < 1:  # memory bound under both
        assert abs(ratio - 4618.8 / 4800) < 1e-3, ratio
assert n >= 20, n
PY
    # the cache: --gpu-arch auto takes the calibration over the data sheet
    mkdir -p "$t/cache" && cp "$CAL" "$t/cache/"
    env -u MAGPIE_NO_CALIBRATION MAGPIE_CALIBRATION_DIR="$t/cache" "$MAGPIE" trace report "$TRACE" \
        -o "$t/r2" --gpu-arch auto >"$t/o2" 2>&1 || fail "auto with a cache"
    grep -q "^roofline ceiling: NVIDIA H200 (measured by" "$t/o2" || fail "auto did not take the cache: $(grep ceiling "$t/o2")"
    cmp -s "$t/r1/unified_perf_summary.csv" "$t/r2/unified_perf_summary.csv" ||
        fail "cache and --gpu-arch-json of the same file disagree"
    MAGPIE_NO_CALIBRATION=1 MAGPIE_CALIBRATION_DIR="$t/cache" "$MAGPIE" trace report "$TRACE" \
        -o "$t/r3" --gpu-arch auto >"$t/o3" 2>&1 || fail "auto without the cache"
    grep -q "^roofline ceiling: H200 (NVIDIA" "$t/o3" || fail "MAGPIE_NO_CALIBRATION: $(grep ceiling "$t/o3")"
    env -u MAGPIE_NO_CALIBRATION MAGPIE_CALIBRATION_DIR="$t/cache" "$MAGPIE" trace report "$TRACE" \
        -o "$t/r4" --gpu-arch H200 >"$t/o4" 2>&1 || fail "--gpu-arch H200"
    grep -q "measured" "$t/o4" && fail "--gpu-arch H200 took the calibration"
    cmp -s "$t/r3/unified_perf_summary.csv" "$t/r4/unified_perf_summary.csv" ||
        fail "the data sheet differs between auto (no cache) and H200"
    cmp -s "$t/r1/unified_perf_summary.csv" "$t/r3/unified_perf_summary.csv" &&
        fail "the measured and the data sheet reports are the same"
    # two GPU models in one cache (the H100's recorded on an H100 the same
    # day): each trace takes its own model's calibration
    H100_TRACE="${MP_SHARED:-}/data/traces/tracelens-tests/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
    cp "$MP_FIXTURES/calib/h100_calibrate.json" "$t/cache/"
    if [ -f "$H100_TRACE" ]; then
        env -u MAGPIE_NO_CALIBRATION MAGPIE_CALIBRATION_DIR="$t/cache" "$MAGPIE" trace report \
            "$H100_TRACE" -o "$t/r5" --gpu-arch auto >"$t/o5" 2>&1 || fail "auto, H100 trace"
        grep -q "^roofline ceiling: NVIDIA H100 80GB HBM3 (measured by magpie gpu calibrate, 2026-12-05T11:00:23Z, GPU-ab385d16" "$t/o5" ||
            fail "the H100 trace did not take the H100's calibration: $(grep ceiling "$t/o5")"
    fi
    env -u MAGPIE_NO_CALIBRATION MAGPIE_CALIBRATION_DIR="$t/cache" "$MAGPIE" trace report "$TRACE" \
        -o "$t/r6" --gpu-arch auto >"$t/o6" 2>&1 || fail "auto with two models cached"
    grep -q "^roofline ceiling: NVIDIA H200 (measured by" "$t/o6" ||
        fail "the H200 trace with two models cached: $(grep ceiling "$t/o6")"
else
    echo "skipped the report checks: no $TRACE"
fi

# --- listings ---
mkdir -p "$t/cache2" && cp "$CAL" "$t/cache2/"
env -u MAGPIE_NO_CALIBRATION MAGPIE_CALIBRATION_DIR="$t/cache2" "$MAGPIE" --gpu-info --json >"$t/gi.json" ||
    fail "--gpu-info --json"
python3 - "$t/gi.json" <<'PY' || fail "--gpu-info calibrations"
import json, sys
d = json.load(open(sys.argv[1]))
c = d["calibrations"]
assert len(c) == 1 and c[0]["name"] == "NVIDIA H200" and c[0]["max_achievable_tflops"]["matrix_bf16"] == 785.6, c
PY
MAGPIE_CALIBRATION_DIR="$t/nowhere" "$MAGPIE" --gpu-info --json | python3 -c \
    'import json,sys; assert json.load(sys.stdin)["calibrations"] == []' || fail "an absent cache"

if [ $fails -eq 0 ]; then
    echo "test_calibrate: all passed"
else
    echo "test_calibrate: $fails failure(s)"
    exit 1
fi
