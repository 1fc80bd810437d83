#!/usr/bin/env bash
# `magpie warm-pool` (cli/cmd_warm_pool.c; docs/kernel-timing.md, "Warm
# runners"): the MCP sessions' warm runner pool for the command line.
#  - --daemon prints the shell assignments; the socket is 0600 in a 0700
#    directory; bad arguments exit 2;
#  - with PoCL OpenCL: two analyze commands of examples/kernels/opencl/vadd.cl
#    with MAGPIE_WARM_SOCKET set, the second on the warm harness child (no
#    process start, no device open), the same verdict as a cold run;
#  - hostile clients (garbage, a line over the protocol's 64 KiB limit, a
#    bad request, then more silent or dribbling clients than the pool has
#    slots, held open) leave the pool answering: an analyze during the flood
#    is still served warm (silent clients lose their slot after
#    MAGPIE_WARM_REQUEST_S);
#  - SIGTERM ends the pool and its runners and removes the socket and its
#    directory; --exit-after ends an idle pool by itself.
#
# Env: MAGPIE (magpie binary), MP_SRC (repository root).
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_SRC:?MP_SRC must point to the repository}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/warmcli.XXXXXX")
cleanup() {
    [ -n "${MAGPIE_WARM_POOL_PID:-}" ] && kill "$MAGPIE_WARM_POOL_PID" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
# PoCL's LLVM is not built with the sanitizers: leaks it leaves at exit are not ours
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
export MAGPIE_RUNTIME_DIR="$MP_SRC/runtime"
export TMPDIR="$TMP"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# bad arguments
"$MAGPIE" warm-pool --exit-after -1 >"$TMP/out" 2>&1
[ $? = 2 ] && grep -q "expects seconds >= 0, got '-1'" "$TMP/out" || fail "--exit-after -1: $(cat "$TMP/out")"
"$MAGPIE" warm-pool --bogus >"$TMP/out" 2>&1
[ $? = 2 ] && grep -q "unknown argument '--bogus'" "$TMP/out" || fail "--bogus: $(cat "$TMP/out")"
long=$(printf 'x%.0s' $(seq 1 120))
"$MAGPIE" warm-pool --socket "$TMP/$long/warm.sock" >"$TMP/out" 2>&1
[ $? = 1 ] && grep -q "socket path too long" "$TMP/out" || fail "long socket path: $(cat "$TMP/out")"

# the daemon: assignments for eval, a private socket
MAGPIE_WARM_IDLE_S=60 MAGPIE_WARM_REQUEST_S=2 "$MAGPIE" warm-pool --daemon --exit-after 600 >"$TMP/vars" 2>"$TMP/err" ||
    fail "warm-pool --daemon exited $?: $(cat "$TMP/err")"
eval "$(cat "$TMP/vars")"
sock=${MAGPIE_WARM_SOCKET:-}
[ -S "$sock" ] && [ "$(stat -c %a "$sock")" = 600 ] && [ "$(stat -c %a "$(dirname "$sock")")" = 700 ] ||
    fail "socket $sock: $(ls -la "$(dirname "$sock")" 2>&1)"
kill -0 "${MAGPIE_WARM_POOL_PID:-0}" 2>/dev/null || fail "no pool process ${MAGPIE_WARM_POOL_PID:-}"

analyze() { # $1: output name; prints the JSON result's path
    (cd "$MP_SRC" && timeout 300 "$MAGPIE" analyze -k examples/kernels/opencl/analyze.yaml --no-latency \
        -o "$TMP/$1" --json -q >"$TMP/$1.json" 2>"$TMP/$1.err")
    echo $?
}
check() { # $1: output name, $2: warm|cold
    python3 - "$TMP/$1.json" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"][0]
assert r["compiling_state"] == "SUCCESS" and r["correctness_state"] == "SUCCESS", r
b = r["time_breakdown"]["build_process"]
if sys.argv[2] == "warm":
    assert b.get("warm") is True and "start_s" not in b and "device_open_s" not in b, b
else:
    assert not b.get("warm") and "start_s" in b, b
PY
}
if [ ! -d /etc/OpenCL/vendors ] || [ -z "$(ls /etc/OpenCL/vendors 2>/dev/null)" ]; then
    echo "SKIP analyze: no OpenCL ICD installed (apt-get install pocl-opencl-icd)"
else
    [ "$(analyze a1)" = 0 ] || fail "first analyze: $(tail -3 "$TMP/a1.err")"
    check a1 cold || fail "first analyze should start a runner"
    [ "$(analyze a2)" = 0 ] || fail "second analyze: $(tail -3 "$TMP/a2.err")"
    check a2 warm || fail "second analyze not warm"
    # hostile clients, then the pool must still serve warm
    python3 - "$sock" <<'PY' || fail "hostile clients"
import socket, sys, time
path = sys.argv[1]
def conn():
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    return s
s = conn(); s.sendall(b"this is not json\n"); s.settimeout(30)
try:
    s.recv(4096)  # a refusal line or a close: either is fine
except socket.timeout:
    raise SystemExit("no answer to garbage")
s.close()
s = conn(); s.sendall(b"{" * 70000)  # over the 64 KiB line limit, no newline
s.settimeout(30)
try:
    s.recv(4096)
except (socket.timeout, ConnectionResetError):
    pass
s.close()
s = conn(); s.sendall(b'{"key": 1, "argv": "x"}\n'); s.settimeout(30); s.recv(4096); s.close()
PY
    kill -0 "$MAGPIE_WARM_POOL_PID" 2>/dev/null || fail "the pool died of hostile clients"
    # more silent clients than the pool has slots (64), held open: each is
    # dropped after MAGPIE_WARM_REQUEST_S (2 s here), so analyze still gets in
    python3 - "$sock" "$TMP/flood_ready" <<'PY' &
import socket, sys, time
held = []
for _ in range(70):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    held.append(s)
held[0].sendall(b'{"key": "dribble')  # and one that never finishes its line
open(sys.argv[2], "w").close()
time.sleep(120)
PY
    flood=$!
    for _ in $(seq 1 300); do [ -e "$TMP/flood_ready" ] && break; sleep 0.1; done
    [ -e "$TMP/flood_ready" ] || fail "the flood could not connect"
    [ "$(analyze a3)" = 0 ] || fail "analyze during a flood of silent clients: $(tail -3 "$TMP/a3.err")"
    check a3 warm || fail "analyze during a flood of silent clients not warm"
    kill $flood 2>/dev/null
    wait $flood 2>/dev/null
    # without the variable: cold, the same verdict
    [ "$(MAGPIE_WARM_SOCKET= analyze a4)" = 0 ] && check a4 cold || fail "cold analyze"
fi

# SIGTERM: the pool, its runners, the socket and its directory go
pool=$MAGPIE_WARM_POOL_PID
kids=$(pgrep -P "$pool" | tr '\n' ' ')
kill -TERM "$pool"
for _ in $(seq 1 300); do kill -0 "$pool" 2>/dev/null || break; sleep 0.1; done
kill -0 "$pool" 2>/dev/null && fail "pool $pool still running after SIGTERM"
[ -e "$sock" ] || [ -d "$(dirname "$sock")" ] && fail "socket or directory left: $sock"
for k in $kids; do
    for _ in $(seq 1 300); do kill -0 "$k" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$k" 2>/dev/null && fail "runner $k left after the pool"
done
unset MAGPIE_WARM_POOL_PID

# --exit-after: an idle pool ends by itself
"$MAGPIE" warm-pool --daemon --exit-after 1 >"$TMP/vars2" 2>&1 || fail "second daemon"
p2=$(sed -n 's/^MAGPIE_WARM_POOL_PID=\([0-9]*\);.*/\1/p' "$TMP/vars2")
s2=$(sed -n 's/^MAGPIE_WARM_SOCKET=\([^;]*\);.*/\1/p' "$TMP/vars2")
for _ in $(seq 1 300); do kill -0 "$p2" 2>/dev/null || break; sleep 0.1; done
kill -0 "$p2" 2>/dev/null && { fail "idle pool $p2 still running after 30 s"; kill "$p2"; }
[ -e "$s2" ] && fail "idle pool left its socket $s2"

[ $fails = 0 ] && echo "test_warm_pool_cli: all passed"
exit $((fails > 0))
