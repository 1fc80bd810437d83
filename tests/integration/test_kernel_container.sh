#!/usr/bin/env bash
# analyze / compare with `-e container --docker-image IMG` (and the YAML's
# scheduler.environment / docker_image): compile, testcase and the harness
# run inside `docker run` (podman when docker is absent). No container engine
# can run on the test machines (docs/compatibility.md), so docker / podman are
# the stand-in tests/tools/container-bin/docker: it refuses an argv of the
# wrong shape, logs every argv, runs the command here in a session of its own
# (a "container" that outlives a killed client) and kills it on `rm -f NAME`.
# Checked: the exact argv (mounts at their own paths, the caller's uid:gid,
# --rm and a name, the vendor's GPU flags for docker and podman), a failing
# testcase, SIGTERM mid-run (the container removed, nothing left running,
# the report written, the signal's exit status), no image, no runtime.
#
# Env: MAGPIE (magpie binary), MP_SRC (repository root).
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_SRC:?MP_SRC must point to the repository}"
W=$(mktemp -d "${TMPDIR:-/tmp}/kct.XXXXXX")
W=$(realpath "$W")
TAG="kct$$"
cleanup() {
    pkill -KILL -f "sleep 300 # $TAG" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }
check() { if eval "$2"; then ok "$1"; else ko "$1"; fi; }

if ! command -v cc >/dev/null; then
    echo "SKIPPED: no C compiler (cc) for the test kernels"
    echo "0 passed, 0 failed"
    exit 0
fi
unset CUDA_VISIBLE_DEVICES HIP_VISIBLE_DEVICES ROCR_VISIBLE_DEVICES MAGPIE_GPU_ARCH MAGPIE_CONTAINER_RUNTIME
export MAGPIE_NO_NVML=1 CT_SIM_STATE=$W/state CT_SIM_LOG=$W/ct.log CT_SIM_IMAGE=magpie-test:1
BIN=$(dirname "$(realpath "$MAGPIE")")
UG="$(id -u):$(id -g)"
CTBIN=$MP_SRC/tests/tools/container-bin
mkdir -p "$W/k"
cat >"$W/k/prog.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) { puts("testcase ok"); return argc > 1 ? atoi(argv[1]) : 0; }
C
cat >"$W/ok.yaml" <<YAML
kernels:
  - {id: ok, type: hip, working_dir: k, compile_command: cc -O1 -o prog prog.c,
     testcase_command: ./prog}
YAML
# PATH without the machine's own docker / podman (those would be found first)
BASEPATH=/usr/bin:/bin
cd "$W" || exit 1

# --- docker, no GPU: exact argv of each container ---
PATH=$CTBIN:$BASEPATH "$MAGPIE" -e container --docker-image magpie-test:1 analyze -k ok.yaml \
    --no-latency -q -o out >"$W/a.out" 2>"$W/a.err"
RC=$?
check "analyze in a container: exit 0" '[ $RC = 0 ]'
check "compile and testcase SUCCESS" 'grep -q "^Compiling: SUCCESS" "$W/a.out" && grep -q "^Correctness: SUCCESS (testcase" "$W/a.out"'
# names are magpie-kernel-<pid>-<n>; the rest is exact
sed -E 's/magpie-kernel-[0-9]+-/magpie-kernel-PID-/' "$CT_SIM_LOG" >"$W/ct.norm"
cat >"$W/ct.want" <<EOF
docker run --rm --name magpie-kernel-PID-1 --user $UG -v $W:$W -v $BIN:$BIN:ro -w $W/k -e HOME=/tmp magpie-test:1 cc -O1 -o prog prog.c 
docker run --rm --name magpie-kernel-PID-2 --user $UG -v $W:$W -v $BIN:$BIN:ro -w $W/k -e HOME=/tmp magpie-test:1 $W/k/./prog 
EOF
check "exact docker argv: compile, then the testcase" 'diff "$W/ct.want" "$W/ct.norm"'
check "containers gone" '[ -z "$(ls -A "$CT_SIM_STATE")" ]'
check "the log names the container command" 'grep -rq "(in a container: .*docker run --rm" out/analyze_ok_*/0_ok/'

# --- the YAML's scheduler section instead of flags ---
: >"$CT_SIM_LOG"
cat >"$W/yml.yaml" <<YAML
scheduler: {environment: container, docker_image: magpie-test:1}
kernels:
  - {id: ok, type: hip, working_dir: k, compile_command: cc -O1 -o prog prog.c,
     testcase_command: ./prog}
YAML
PATH=$CTBIN:$BASEPATH "$MAGPIE" analyze -k yml.yaml --no-latency -q -o out >"$W/y.out" 2>&1
RC=$?
check "scheduler.environment: container from the YAML: exit 0, two containers" \
    '[ $RC = 0 ] && [ "$(grep -c "^docker run" "$CT_SIM_LOG")" = 2 ]'

# --- GPU flags: NVIDIA (the nvidia-smi stand-in of tests/fixtures/gpu) with
# docker and with podman (CDI), AMD (the amd-smi stand-in) ---
: >"$CT_SIM_LOG"
PATH=$CTBIN:$MP_SRC/tests/fixtures/gpu/bin:$BASEPATH "$MAGPIE" -e container --docker-image magpie-test:1 \
    analyze -k ok.yaml --no-latency --no-perf -q -o out >"$W/n.out" 2>&1
check "NVIDIA + docker: --gpus all" 'grep -q "^docker run --rm --name magpie-kernel-[0-9]*-1 --user $UG --gpus all -v " "$CT_SIM_LOG"'
: >"$CT_SIM_LOG"
PATH=$MP_SRC/tests/tools/container-podman-bin:$MP_SRC/tests/fixtures/gpu/bin:$BASEPATH "$MAGPIE" -e container \
    --docker-image magpie-test:1 analyze -k ok.yaml --no-latency --no-perf -q -o out >"$W/p.out" 2>&1
RC=$?
check "no docker: podman, exit 0" '[ $RC = 0 ] && grep -q "^podman run " "$CT_SIM_LOG"'
check "NVIDIA + podman: CDI device" 'grep -q "^podman run --rm --name magpie-kernel-[0-9]*-1 --user $UG --device nvidia.com/gpu=all -v " "$CT_SIM_LOG"'
: >"$CT_SIM_LOG"
PATH=$CTBIN:$MP_SRC/tests/tools/gpuctl-bin:$BASEPATH "$MAGPIE" -e container --docker-image magpie-test:1 \
    analyze -k ok.yaml --no-latency --no-perf -q -o out >"$W/amd.out" 2>&1
check "AMD: /dev/kfd, /dev/dri, video group" \
    'grep -q "^docker run --rm --name magpie-kernel-[0-9]*-1 --user $UG --device /dev/kfd --device /dev/dri --group-add video -v " "$CT_SIM_LOG"'

# --- compare in containers ---
: >"$CT_SIM_LOG"
cat >"$W/cmp.yaml" <<YAML
kernels:
  - {id: a, type: hip, working_dir: k, compile_command: cc -O1 -o prog prog.c, testcase_command: ./prog}
  - {id: b, type: hip, working_dir: k, compile_command: cc -O2 -o prog2 prog.c, testcase_command: ./prog2}
YAML
PATH=$CTBIN:$BASEPATH "$MAGPIE" -e container --docker-image magpie-test:1 compare -k cmp.yaml --no-latency \
    -q -o out >"$W/c.out" 2>&1
RC=$?
check "compare in containers: exit 0, 4 containers" '[ $RC = 0 ] && [ "$(grep -c "^docker run" "$CT_SIM_LOG")" = 4 ]'

# --- a failing testcase: exit 1, and the container is removed by name ---
: >"$CT_SIM_LOG"
cat >"$W/bad.yaml" <<YAML
kernels:
  - {id: bad, type: hip, working_dir: k, compile_command: cc -O1 -o prog prog.c, testcase_command: ./prog 3}
YAML
PATH=$CTBIN:$BASEPATH "$MAGPIE" -e container --docker-image magpie-test:1 analyze -k bad.yaml --no-latency \
    -q -o out >"$W/b.out" 2>&1
RC=$?
check "failing testcase: exit 1" '[ $RC = 1 ]'
check "failing testcase: rm -f of its container" \
    '[ "$(tail -1 "$CT_SIM_LOG" | sed -E "s/[0-9]+-2/N/")" = "docker rm -f magpie-kernel-N " ]'

# --- SIGTERM while a testcase runs: the container is removed, nothing is
# left running, the report is written, magpie ends by the signal ---
: >"$CT_SIM_LOG"
cat >"$W/slow.yaml" <<YAML
kernels:
  - {id: slow, type: hip, working_dir: k, compile_command: cc -O1 -o prog prog.c,
     testcase_command: "sh -c 'sleep 300 # $TAG'"}
YAML
PATH=$CTBIN:$BASEPATH "$MAGPIE" -e container --docker-image magpie-test:1 analyze -k slow.yaml \
    --no-latency -q -o slow >"$W/s.out" 2>&1 &
MP=$!
for _ in $(seq 900); do
    pgrep -f "sleep 300 # $TAG" >/dev/null && break
    sleep 0.1
done
check "slow testcase started in its container" 'pgrep -f "sleep 300 # $TAG" >/dev/null'
kill -TERM $MP
wait $MP
RC=$?
check "SIGTERM: magpie ends by the signal (exit $RC = 143)" '[ $RC = 143 ]'
check "SIGTERM: rm -f of the running container" 'tail -1 "$CT_SIM_LOG" | grep -q "^docker rm -f magpie-kernel-[0-9]*-2 $"'
check "SIGTERM: nothing left running" '! pgrep -f "sleep 300 # $TAG" >/dev/null && [ -z "$(ls -A "$CT_SIM_STATE")" ]'
check "SIGTERM: the report is written" 'ls slow/analyze_slow_*/analyze_report.json >/dev/null 2>&1'
check "SIGTERM: no container started after it" '[ "$(grep -c "^docker run" "$CT_SIM_LOG")" = 2 ]'

# --- input errors: exit 2, nothing created ---
PATH=$CTBIN:$BASEPATH "$MAGPIE" -e container analyze -k ok.yaml -q -o noimg >"$W/ni.out" 2>&1
RC=$?
check "no image: exit 2" '[ $RC = 2 ] && grep -q "needs an image: --docker-image" "$W/ni.out" && [ ! -d noimg ]'
MAGPIE_CONTAINER_RUNTIME=no-such-runtime "$MAGPIE" -e container --docker-image magpie-test:1 analyze \
    -k ok.yaml -q -o nort >"$W/nr.out" 2>&1
RC=$?
check "no runtime: exit 2" '[ $RC = 2 ] && grep -q "MAGPIE_CONTAINER_RUNTIME=no-such-runtime: not found" "$W/nr.out" && [ ! -d nort ]'

# --- the C harness (OpenCL on PoCL) in a container: magpie itself runs inside ---
if [ -d /etc/OpenCL/vendors ] && [ -n "$(ls /etc/OpenCL/vendors 2>/dev/null)" ]; then
    : >"$CT_SIM_LOG"
    (cd "$MP_SRC" && ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" PATH=$CTBIN:$BASEPATH "$MAGPIE" \
        -e container --docker-image magpie-test:1 analyze -k examples/kernels/opencl/analyze.yaml \
        --no-latency -q -o "$W/ocl") >"$W/o.out" 2>&1
    RC=$?
    check "OpenCL harness in a container: exit 0" '[ $RC = 0 ] && grep -q "Correctness: SUCCESS" "$W/o.out"'
    check "OpenCL harness: magpie --harness-child ran in the container" \
        'grep -q "^docker run .* magpie-test:1 $(realpath "$MAGPIE") analyze --harness-child " "$CT_SIM_LOG"'
else
    echo "SKIPPED OpenCL harness: no OpenCL ICD"
fi

# --- the Python runner (PyTorch) in a container: the image's python3, or
# MAGPIE_CONTAINER_PYTHON; here the stand-in "image" is this machine, so the
# Python with torch that test_kernel_pytorch.sh uses (MAGPIE_PYTHON) stands in ---
PYT=${MAGPIE_PYTHON:-python3}
if "$PYT" -c 'import torch' >/dev/null 2>&1; then
    : >"$CT_SIM_LOG"
    (cd "$MP_SRC" && MAGPIE_CONTAINER_PYTHON=$(command -v "$PYT") PATH=$CTBIN:$BASEPATH "$MAGPIE" \
        -e container --docker-image magpie-test:1 analyze -q --max-time 2 \
        -k examples/kernels/pytorch/analyze.yaml -o "$W/py") >"$W/py.out" 2>&1
    RC=$?
    check "PyTorch runner in a container: exit 0, verified" '[ $RC = 0 ] && grep -q "Correctness: SUCCESS (reference, verified" "$W/py.out"'
    check "PyTorch runner: magpie_runner.py ran in the container" \
        'grep -q "^docker run .* magpie-test:1 [^ ]*python[^ ]* $(realpath "$MP_SRC")/runtime/magpie_runner.py " "$CT_SIM_LOG"'
else
    echo "SKIPPED PyTorch runner: no torch for $PYT (set MAGPIE_PYTHON)"
fi

# --- the MCP analyze tool with environment container (and ray refused):
# one stdio session; stdin stays open until both answers are in ---
: >"$CT_SIM_LOG"
A2="{\"kernel_path\":\"$W/k/prog.c\",\"testcase_command\":\"./prog\",\"compile_command\":\"cc -O1 -o prog prog.c\",\"check_performance\":false,\"environment\":\"container\",\"docker_image\":\"magpie-test:1\",\"output_dir\":\"$W/mcpout\"}"
A3="{\"kernel_path\":\"$W/k/prog.c\",\"testcase_command\":\"./prog\",\"environment\":\"ray\"}"
PATH=$CTBIN:$BASEPATH timeout 300 python3 "$MP_SRC/tests/tools/mcp_client.py" call --json \
    --stdio "$MAGPIE" analyze "$A2" analyze "$A3" >"$W/mcp.out" 2>"$W/mcp.err"
check "MCP analyze, environment container: compiled and checked in containers" \
    'sed -n 1p "$W/mcp.out" | grep -q "compiling_state[^A-Z]*SUCCESS" && [ "$(grep -c "^docker run --rm --name magpie-kernel-" "$CT_SIM_LOG")" -ge 2 ]'
check "MCP analyze, environment ray: a tool error naming the CLI" \
    'sed -n 2p "$W/mcp.out" | grep -q "^{\"isError\": true" && sed -n 2p "$W/mcp.out" | grep -q "magpie analyze -e ray"'
check "MCP: containers gone" '[ -z "$(ls -A "$CT_SIM_STATE")" ]'

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
