#!/usr/bin/env bash
# The AMD-only tools magpie drives, replaced by stand-ins on PATH (there is
# no AMD GPU here): rocprofv3 writes a kernel_trace.csv in the documented
# column layout, accordo prints its JSON verdict. Checks magpie's side of
# the contract: the argv it builds, where it looks for the output, how it
# parses it into the report. Unverified against the real tools.
#
# Env: MAGPIE (magpie binary).
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kamd.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
mkdir -p "$TMP/bin"
cat >"$TMP/bin/rocprofv3" <<'SH'
#!/bin/sh
# stand-in: rocprofv3 --kernel-trace --output-format csv -d DIR -- cmd...
echo "$@" >"$ROCPROF_ARGS_LOG"
dir=
while [ $# -gt 0 ]; do
    case $1 in
    -d) dir=$2; shift 2 ;;
    --) shift; break ;;
    *) shift ;;
    esac
done
mkdir -p "$dir/host/123"
if [ -n "${ROCPROF_JSON_REPLAY:-}" ]; then # the JSON a real rocprofv3 wrote (MI350 recording)
    gzip -dc "$ROCPROF_JSON_REPLAY" >"$dir/host/123/123_results.json"
    exec "$@"
fi
printf '"Kind","Agent_Id","Kernel_Name","Start_Timestamp","End_Timestamp"\n' >"$dir/host/123/123_kernel_trace.csv"
printf '"KERNEL_DISPATCH","1","vadd","100","1100"\n"KERNEL_DISPATCH","1","__amd_rocclr_copyBuffer","1200","1300"\n"KERNEL_DISPATCH","1","vadd","2000","5000"\n' >>"$dir/host/123/123_kernel_trace.csv"
exec "$@"
SH
cat >"$TMP/bin/accordo" <<'SH'
#!/bin/sh
echo "$@" >"$ACCORDO_ARGS_LOG"
echo "accordo: capturing"
if [ "$ACCORDO_VERDICT" = ok ]; then
    echo '{"is_valid": true, "num_arrays_validated": 2, "matched_arrays": {}, "num_mismatches": 0}'
else
    echo '{"is_valid": false, "num_arrays_validated": 2, "num_mismatches": 1, "error_message": "", "mismatches": [{"arg_name": "c", "dispatch_index": 0, "max_difference": 0.25}]}'
fi
SH
chmod +x "$TMP/bin/rocprofv3" "$TMP/bin/accordo"
export PATH="$TMP/bin:$PATH" ROCPROF_ARGS_LOG="$TMP/rocprof.args" ACCORDO_ARGS_LOG="$TMP/accordo.args"

cat >"$TMP/k.yaml" <<'YAML'
kernel: {id: hipk, type: hip, testcase_command: "sh -c 'echo ran > testcase.ran'", working_dir: WD}
performance: {backend: rocprofv3}
YAML
sed -i "s|WD|$TMP|" "$TMP/k.yaml"
"$MAGPIE" analyze -q -k "$TMP/k.yaml" -o "$TMP/r" >"$TMP/out" 2>"$TMP/err" || fail "rocprofv3 analyze: $(cat "$TMP/err")"
grep -q -- '--kernel-trace --output-format csv -d' "$TMP/rocprof.args" || fail "rocprofv3 argv: $(cat "$TMP/rocprof.args")"
[ -f "$TMP/testcase.ran" ] || fail "the testcase did not run under rocprofv3"
rep=$(ls "$TMP"/r/analyze_hipk_*/analyze_report.json | head -1)
python3 - "$rep" <<'PY' || fail "rocprofv3 report"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
p = r["performance_result"]
assert r["performance_state"] == "SUCCESS", r
assert p["kernels"] == [{"kernel_name": "vadd", "dispatch_count": 2,
                         "duration_ns": {"avg": 2000.0, "min": 1000.0, "max": 3000.0, "total": 4000.0}}], p
PY

# rocprofv3 that wrote JSON (--output-format json, e.g. through a prof_command):
# the recording of the real tool (tests/fixtures/kernel/README.md) replayed
if [ -n "${MP_FIXTURES:-}" ]; then
    ROCPROF_JSON_REPLAY="$MP_FIXTURES/kernel/rocprofv3_mi350_kernel_trace.json.gz" \
        "$MAGPIE" analyze -q -k "$TMP/k.yaml" -o "$TMP/rj" >"$TMP/out" 2>"$TMP/err" ||
        fail "rocprofv3 JSON analyze: $(cat "$TMP/err")"
    rep=$(ls "$TMP"/rj/analyze_hipk_*/analyze_report.json | head -1)
    python3 - "$rep" <<'PY' || fail "rocprofv3 JSON report"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
p = r["performance_result"]
assert r["performance_state"] == "SUCCESS", r
k = p["kernels"]
assert len(k) == 78 and sum(x["dispatch_count"] for x in k) == 1847, len(k)
assert k[0]["kernel_name"] == "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", k[0]
assert k[0]["dispatch_count"] == 65 and k[0]["duration_ns"]["total"] == 86361069, k[0]
PY
fi

cat >"$TMP/a.yaml" <<'YAML'
kernel: {id: acc, type: hip}
correctness:
  backend: accordo
  accordo: {kernel_name: vadd, reference_binary: ./ref, optimized_binary: ./opt, atol: 0.001,
            equal_nan: true, kernel_args: [[a, "float*"], [n, int]]}
YAML
ACCORDO_VERDICT=ok "$MAGPIE" analyze -q --no-perf -k "$TMP/a.yaml" -o "$TMP/r" >"$TMP/out" 2>"$TMP/err" ||
    fail "accordo ok: exit $? $(cat "$TMP/out")"
grep -q -- '--kernel-name vadd --reference-binary ./ref --optimized-binary ./opt --atol 0.001 --rtol 1e-05 --equal-nan --kernel-args a:float\* n:int' "$TMP/accordo.args" ||
    fail "accordo argv: $(cat "$TMP/accordo.args")"
ACCORDO_VERDICT=bad "$MAGPIE" analyze -q --no-perf -k "$TMP/a.yaml" -o "$TMP/r" >"$TMP/out" 2>"$TMP/err"
[ $? = 1 ] || fail "accordo mismatch must exit 1"
grep -q 'c (dispatch 0): max difference 0.25' "$TMP/out" || fail "accordo mismatch not reported: $(cat "$TMP/out")"

if [ "$fails" -gt 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "ok"
