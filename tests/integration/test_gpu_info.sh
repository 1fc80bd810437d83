#!/usr/bin/env bash
# magpie --gpu-info end to end, against the nvidia-smi stand-in that replays
# output recorded on a real H200 (tests/fixtures/gpu), and with no GPU tools
# at all. MAGPIE_NO_NVML=1 keeps a real driver on the test machine out of it.
#
# Env: MAGPIE (magpie binary), MP_FIXTURES (tests/fixtures).
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_FIXTURES:?MP_FIXTURES must point to tests/fixtures}"

STAND_IN="$MP_FIXTURES/gpu/bin"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpuinfo.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
# Runs magpie with a given PATH and nothing else that could point it at tools.
run_magpie() {
    local path=$1
    shift
    env -u CUDA_HOME -u CUDA_PATH -u ROCM_PATH PATH="$path" MAGPIE_NO_NVML=1 "$MAGPIE" "$@"
}

# --- 1. the stand-in is honest: the recorded query only ---
if "$STAND_IN/nvidia-smi" --query-gpu=index,name --format=csv >/dev/null 2>&1; then
    fail "the nvidia-smi stand-in answered a query it has no recording for"
fi

# --- 2. text view from the recording ---
out=$(run_magpie "$STAND_IN:$PATH" --gpu-info)
rc=$?
[ $rc -eq 0 ] || fail "--gpu-info exited $rc"
# Magpie's first five lines, in Magpie's order.
expected=$'GPU Information:\n  Vendor: NVIDIA\n  Architecture: sm_90\n  Compiler: nvcc\n  Profiler: ncu'
[ "$(printf '%s\n' "$out" | head -5)" = "$expected" ] || fail "Magpie lines differ: $out"
for want in "  Source: nvidia-smi" "  GPUs: 1" \
    "    [0] NVIDIA H200  sm_90 (Hopper)  143771 MiB  driver 580.159.04" "  Tools:"; do
    printf '%s\n' "$out" | grep -qxF -- "$want" || fail "text view lacks '$want'"
done
if command -v nvcc >/dev/null 2>&1; then
    printf '%s\n' "$out" | grep -q "^    nvcc: /" || fail "nvcc is on PATH but not reported"
fi

# --- 3. JSON view from the recording ---
run_magpie "$STAND_IN:$PATH" --gpu-info --json >"$TMP/gpu.json"
rc=$?
[ $rc -eq 0 ] || fail "--gpu-info --json exited $rc"
if command -v python3 >/dev/null 2>&1; then
    have_nvcc=false
    command -v nvcc >/dev/null 2>&1 && have_nvcc=true
    python3 - "$TMP/gpu.json" "$have_nvcc" <<'PY' || fail "JSON view (see above)"
import json, sys
j = json.load(open(sys.argv[1]))
g = j["gpus"][0]
checks = {
    "vendor": (j["vendor"], "NVIDIA"),
    "architecture": (j["architecture"], "sm_90"),
    "detected": (j["detected"], True),
    "compiler": (j["compiler"], "nvcc"),
    "profiler": (j["profiler"], "ncu"),
    "source": (j["source"], "nvidia-smi"),
    "count": (len(j["gpus"]), 1),
    "name": (g["name"], "NVIDIA H200"),
    "arch": (g["arch"], "sm_90"),
    "family": (g["family"], "Hopper"),
    "compute_capability": (g["compute_capability"], "9.0"),
    "memory_total_mib": (g["memory_total_mib"], 143771),
    "driver_version": (g["driver_version"], "580.159.04"),
    "uuid": (g["uuid"], "GPU-2535b518-98a5-c7ee-f3c7-72ee9113c897"),
    "pci_bus_id": (g["pci_bus_id"], "00000000:00:06.0"),
    "power_limit_w": (g["power_limit_w"], 700.0),
    "nvcc found": (j["tools"]["nvcc"]["found"], sys.argv[2] == "true"),
    "tools": (sorted(j["tools"]), sorted(["nvcc", "hipcc", "ncu", "rocprofv3", "rocprof-compute"])),
}
bad = [f"{k}: got {got!r}, want {want!r}" for k, (got, want) in checks.items() if got != want]
for b in bad:
    print("  " + b)
sys.exit(1 if bad else 0)
PY
else
    echo "SKIPPED (JSON checks): python3 not found"
fi

# --- 4. no tools at all ---
# Install directories are searched after PATH; on a machine that has vendor
# tools there, "nothing found" cannot be arranged.
skip_none=""
for t in /usr/local/cuda/bin/nvidia-smi /opt/rocm/bin/amd-smi /opt/rocm/bin/rocm-smi \
    /opt/rocm/bin/rocminfo; do
    [ -x "$t" ] && skip_none="$t exists"
done
if [ -n "$skip_none" ]; then
    echo "SKIPPED (no-GPU case): $skip_none"
else
    mkdir -p "$TMP/empty"
    out=$(run_magpie "$TMP/empty" --gpu-info)
    rc=$?
    [ $rc -eq 0 ] || fail "--gpu-info with no tools exited $rc"
    [ "$(printf '%s\n' "$out" | head -4)" = $'GPU Information:\n  Vendor: UNKNOWN\n  Architecture: unknown\n  (No GPU detected)' ] ||
        fail "no-GPU text differs: $out"
    printf '%s\n' "$out" | grep -q "nvidia-smi: not found" || fail "no-GPU text lacks the checks"
    run_magpie "$TMP/empty" --gpu-info --json >"$TMP/none.json" || fail "--json with no tools"
    if command -v python3 >/dev/null 2>&1; then
        python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["detected"] is False and j["vendor"] == "UNKNOWN", j
assert j["source"] == "none" and j["gpus"] == [] and j["architecture"] is None, j
assert j["compiler"] is None and j["profiler"] is None, j
' "$TMP/none.json" || fail "no-GPU JSON"
    fi

    # --- 5. an nvidia-smi that fails (no driver) is passed over, not fatal ---
    mkdir -p "$TMP/broken"
    printf '#!/bin/sh\nexit 9\n' >"$TMP/broken/nvidia-smi"
    chmod +x "$TMP/broken/nvidia-smi"
    out=$(run_magpie "$TMP/broken" --gpu-info)
    rc=$?
    [ $rc -eq 0 ] || fail "--gpu-info with a failing nvidia-smi exited $rc"
    printf '%s\n' "$out" | grep -qxF "  (No GPU detected)" || fail "failing nvidia-smi: $out"
    printf '%s\n' "$out" | grep -q "nvidia-smi: exited with status 9" ||
        fail "failing nvidia-smi not explained: $out"
fi

if [ $fails -ne 0 ]; then
    echo "$fails check(s) failed"
    exit 1
fi
echo "PASS"
