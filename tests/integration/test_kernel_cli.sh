#!/usr/bin/env bash
# magpie analyze / compare front end: --help, usage errors (exit 2), bad
# kernel YAML reported with file:line:col, an unreadable -k file and a
# docker image that would be an option refused (exit 2), a failing testcase
# (exit 1) with later stages NOT_RUN, a passing testcase with a
# MAGPIE_LATENCY_JSON line, and the CUDA compile stage when nvcc is
# installed (no GPU needed).
#
# Env: MAGPIE (magpie binary), MP_SRC (repository root).
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_SRC:?MP_SRC must point to the repository}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/kcli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
expect_rc() { # expected-rc description command...
    local want=$1 what=$2
    shift 2
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$?
    [ "$rc" = "$want" ] || fail "$what: exit $rc, expected $want ($(head -c 300 "$TMP/err"))"
}

expect_rc 0 "analyze --help" "$MAGPIE" analyze --help
grep -q 'examples:' "$TMP/out" || fail "analyze --help has no examples"
expect_rc 0 "compare --help" "$MAGPIE" compare --help
grep -q -- '--baseline' "$TMP/out" || fail "compare --help lacks --baseline"
expect_rc 2 "analyze with no kernels" "$MAGPIE" analyze
expect_rc 2 "unknown option" "$MAGPIE" analyze --bogus
expect_rc 2 "--baseline on analyze" "$MAGPIE" analyze --baseline 1 x.cu
expect_rc 2 "hip without testcase" "$MAGPIE" analyze "$MP_SRC/examples/kernels/cuda/vadd.cu"

# bad YAML values: file:line:col in the message, exit 2
printf 'kernel:\n  id: k\n  type: cuda\nperformance:\n  timeout_seconds: soon\n' >"$TMP/bad.yaml"
expect_rc 2 "bad timeout" "$MAGPIE" analyze -k "$TMP/bad.yaml" -o "$TMP/r"
grep -q 'bad.yaml:5:20' "$TMP/err" || fail "bad value not located: $(cat "$TMP/err")"
printf 'kernel: [unclosed\n' >"$TMP/syntax.yaml"
expect_rc 2 "YAML syntax" "$MAGPIE" analyze -k "$TMP/syntax.yaml" -o "$TMP/r"
grep -q 'syntax.yaml:' "$TMP/err" || fail "syntax error not located: $(cat "$TMP/err")"
printf 'kernels: []\n' >"$TMP/empty.yaml"
expect_rc 2 "no kernels" "$MAGPIE" analyze -k "$TMP/empty.yaml" -o "$TMP/r"
grep -q 'No kernels found' "$TMP/err" || fail "empty config message: $(cat "$TMP/err")"
printf 'kernel: {id: k, type: hip, testcase_command: "true", bogus: 1}\n' >"$TMP/unk.yaml"
expect_rc 0 "unknown key only warns" "$MAGPIE" analyze -k "$TMP/unk.yaml" -o "$TMP/r" --no-perf
grep -q "unknown key 'bogus'" "$TMP/err" || fail "unknown key not warned: $(cat "$TMP/err")"

# issue 27: a kernel config that cannot be read is an input error (exit 2,
# as --help says) naming the file; a missing -c stays an empty config
for cmd in analyze compare; do
    expect_rc 2 "$cmd -k missing file" "$MAGPIE" $cmd -k "$TMP/no such.yaml" -o "$TMP/r"
    grep -q -- "-k $TMP/no such.yaml: cannot read the kernel config: No such file" "$TMP/err" ||
        fail "$cmd -k missing file: message $(cat "$TMP/err")"
    expect_rc 2 "$cmd -k directory" "$MAGPIE" $cmd -k "$TMP" -o "$TMP/r"
    grep -q "cannot read the kernel config: it is a directory" "$TMP/err" ||
        fail "$cmd -k directory: message $(cat "$TMP/err")"
done
expect_rc 0 "missing -c is an empty config" "$MAGPIE" -c "$TMP/none.yaml" analyze \
    -k "$TMP/unk.yaml" -o "$TMP/r" --no-perf

# issue 27: a docker image that docker/podman would read as an option (or
# that holds whitespace) is refused before anything runs, naming the field
expect_rc 2 "--docker-image starting with -" "$MAGPIE" -e container \
    --docker-image=--privileged analyze -k "$TMP/unk.yaml" -o "$TMP/rimg"
grep -q "field '--docker-image': an image name cannot start with '-'" "$TMP/err" ||
    fail "--docker-image -x: message $(cat "$TMP/err")"
expect_rc 2 "--docker-image with a newline" "$MAGPIE" -e container \
    --docker-image="$(printf 'img\n-v')" compare -k "$TMP/unk.yaml" -o "$TMP/rimg"
grep -q "control character 0x0a" "$TMP/err" || fail "--docker-image newline: $(cat "$TMP/err")"
cat >"$TMP/img.yaml" <<'YAML'
kernel: {id: k, type: hip, testcase_command: "true"}
scheduler:
  environment: container
  docker_image: "-v/:/host"
YAML
expect_rc 2 "scheduler.docker_image starting with -" "$MAGPIE" analyze -k "$TMP/img.yaml" \
    -o "$TMP/rimg"
grep -q "img.yaml:4:17: field 'scheduler.docker_image': an image name cannot start with '-'" \
    "$TMP/err" || fail "scheduler.docker_image in -k: $(cat "$TMP/err")"
expect_rc 2 "scheduler.docker_image in -c" "$MAGPIE" -c "$TMP/img.yaml" analyze -k "$TMP/unk.yaml" \
    -o "$TMP/rimg"
grep -q "img.yaml:4:17: field 'scheduler.docker_image'" "$TMP/err" ||
    fail "scheduler.docker_image in -c: $(cat "$TMP/err")"
[ ! -e "$TMP/rimg" ] || fail "a refused image still created a workspace"

# testcase mode: failing testcase -> exit 1, later stages NOT_RUN
cat >"$TMP/k.yaml" <<YAML
kernels:
  - id: failing
    type: hip
    testcase_command: [sh, -c, "echo boom >&2; exit 3"]
YAML
expect_rc 1 "failing testcase" "$MAGPIE" analyze -k "$TMP/k.yaml" -o "$TMP/r" --no-perf
rep=$(ls -d "$TMP"/r/analyze_failing_*/analyze_report.json 2>/dev/null | head -1)
[ -n "$rep" ] || fail "no analyze_report.json"
python3 - "$rep" <<'PY' || fail "report states for the failing testcase"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["correctness_state"] == "FAILED", r
assert r["performance_state"] == "NOT_RUN" and r["latency_state"] == "NOT_RUN", r
assert "boom" in r["correctness_result"]["errors"], r
assert r["score"] == 0.5 or r["score"] == 0.0, r
PY

# testcase mode: passing testcase that prints Magpie's latency marker
cat >"$TMP/k2.yaml" <<YAML
kernel:
  id: timed
  type: hip
  testcase_command: "sh -c 'echo ok; echo \"MAGPIE_LATENCY_JSON: {\\\\\"samples_ms\\\\\": [1.0, 1.1, 0.9, 1.0, 1.05]}\"'"
YAML
expect_rc 0 "passing testcase with marker" "$MAGPIE" analyze -k "$TMP/k2.yaml" -o "$TMP/r2" --no-perf
rep=$(ls -d "$TMP"/r2/analyze_timed_*/analyze_report.json 2>/dev/null | head -1)
python3 - "$rep" <<'PY' || fail "latency from the marker"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["correctness_state"] == "SUCCESS" and r["latency_state"] == "SUCCESS", r
ws = r["latency_result"]["wall_stats"]
assert abs(ws["median_ms"] - 1.0) < 1e-12 and len(ws["samples_ms"]) == 5, ws
assert ws["median_ci95_ms"][0] <= 1.0 <= ws["median_ci95_ms"][1], ws
PY

# compare with testcase kernels: interleaved rounds of the timed testcases
cat >"$TMP/c.yaml" <<'YAML'
kernels:
  - id: a
    type: hip
    testcase_command: "sh -c 'echo \"MAGPIE_LATENCY_JSON: {\\\"samples_ms\\\": [1.0, 1.01, 0.99, 1.0, 1.0, 1.02, 0.98, 1.0, 1.0, 1.0]}\"'"
  - id: b
    type: hip
    testcase_command: "sh -c 'echo \"MAGPIE_LATENCY_JSON: {\\\"samples_ms\\\": [0.5, 0.51, 0.49, 0.5, 0.5, 0.52, 0.48, 0.5, 0.5, 0.5]}\"'"
YAML
expect_rc 0 "compare testcases" "$MAGPIE" compare -q --no-perf -k "$TMP/c.yaml" -o "$TMP/rc"
rep=$(ls "$TMP"/rc/compare_*/compare_report.json 2>/dev/null | head -1)
python3 - "$rep" <<'PY' || fail "compare of testcase kernels"
import json, sys
d = json.load(open(sys.argv[1]))["results"]
assert d["comparison_metrics"]["verdicts"] == ["BASELINE", "FASTER"], d["comparison_metrics"]
assert d["winner"] == 1, d["winner"]
assert len(d["kernel_results"][1]["latency_result"]["wall_stats"]["samples_ms"]) == 30  # 3 rounds
PY

# CUDA compile stage (nvcc only; the harness then reports the missing driver)
if command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ]; then
    export PATH="$PATH:/usr/local/cuda/bin"
    (cd "$MP_SRC" && "$MAGPIE" analyze -q --no-perf --type cuda \
        --reference examples/kernels/cuda/vadd_ref.cu examples/kernels/cuda/vadd.cu \
        -o "$TMP/r3" >"$TMP/out" 2>"$TMP/err")
    rep=$(ls -d "$TMP"/r3/analyze_vadd_*/analyze_report.json 2>/dev/null | head -1)
    python3 - "$rep" <<'PY' || fail "CUDA compile stage"
import json, os, sys
r = json.load(open(sys.argv[1]))["results"][0]
assert r["compiling_state"] == "SUCCESS", r
assert os.path.exists(os.path.join(r["extra"]["workdir"], "kernel.cubin")), r
PY
    for f in "$MP_SRC"/examples/kernels/cuda/*.cu; do
        case $f in *_test.cu) continue ;; esac
        nvcc -cubin -arch=sm_90 -o "$TMP/x.cubin" "$f" 2>"$TMP/err" || fail "nvcc $f: $(cat "$TMP/err")"
    done
    nvcc -O3 -arch=sm_90 -I"$MP_SRC/runtime" -o "$TMP/vt" "$MP_SRC/examples/kernels/cuda/vadd_test.cu" \
        2>"$TMP/err" || fail "nvcc vadd_test.cu with magpie_timing.h: $(cat "$TMP/err")"
else
    echo "SKIP: nvcc not installed (CUDA compile checks)"
fi

# Clock monitor during the latency stage: with the nvidia-smi stand-in first
# on PATH (tests/fixtures/gpu: an H200 recording, and for the monitor's loop
# query the samples recorded during a power-capped 8192^3 matmul) the timed
# testcase run gets those samples summarised and is flagged as throttled;
# the monitor's output is kept in the workdir and no stand-in is left running.
if [ -n "${MP_FIXTURES:-}" ] && [ -x "$MP_FIXTURES/gpu/bin/nvidia-smi" ]; then
    # the testcase of k2.yaml, taking 1 s as a real timed run would
    sed "s/sh -c 'echo ok; /sh -c 'sleep 1; echo ok; /" "$TMP/k2.yaml" >"$TMP/k3.yaml"
    PATH="$MP_FIXTURES/gpu/bin:$PATH" MAGPIE_NO_NVML=1 "$MAGPIE" analyze -k "$TMP/k3.yaml" \
        -o "$TMP/r3" --no-perf >"$TMP/out" 2>"$TMP/err" || fail "analyze with the stand-in: $(head -c 300 "$TMP/err")"
    rep=$(ls -d "$TMP"/r3/analyze_timed_*/analyze_report.json 2>/dev/null | head -1)
    python3 - "$rep" <<'PY' || fail "clock monitor summary"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
g = r["latency_result"]["gpu_state"]
d = g["during_timing"]
assert d["busy_samples"] == 389 and d["sm_clock_mhz_min"] == 1530, d
assert abs(d["capped_share"] - 114 / 389) < 1e-9, d
assert g["throttled"] is True, g
PY
    grep -q "power/thermal cap in 29% of them" "$TMP/out" || fail "terminal summary lacks the clock line"
    grep -q "<td>SM 1885 MHz, cap in 29%; THROTTLED</td>" "$(dirname "$rep")/report.html" ||
        fail "report.html lacks the GPU state"
    [ -s "$(ls -d "$TMP"/r3/analyze_timed_*/0_timed/gpu_clocks.csv 2>/dev/null | head -1)" ] ||
        fail "gpu_clocks.csv not kept"
    pgrep -f "clocks_throttle_reasons.active" >/dev/null && fail "a clock monitor was left running"
fi

if [ "$fails" -gt 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "ok"
