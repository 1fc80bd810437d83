# Sourced by the load generator's integration tests (test_loadgen*.sh): a
# work directory $W (removed on exit), ok/ko counters, and the calibration
# server (tests/calib/calib_server) started on a free loopback port with its
# per-request log in $W/srv.jsonl, and stopped. The caller sets MAGPIE and
# MP_BIN (ctest does) and may set CALIB_EXIT_AFTER (the server's own limit
# in s, default 120).
set -u
MAGPIE=${MAGPIE:?} MP_BIN=${MP_BIN:?}
CALIB=$MP_BIN/calib/calib_server
W=$(mktemp -d "/tmp/${CALIB_TAG:-mp_loadgen_it}.XXXXXX")
SRV=
pass=0 fail=0
cleanup() {
    [ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }

start_server() { # schedule-file
    rm -f "$W/port" "$W/srv.jsonl"
    "$CALIB" --schedule "$1" --port-file "$W/port" --log "$W/srv.jsonl" \
        --exit-after-s "${CALIB_EXIT_AFTER:-120}" >"$W/srv.out" 2>&1 &
    SRV=$!
    for _ in $(seq 2400); do [ -s "$W/port" ] && break; sleep 0.05; done # <= 120 s
    PORT=$(cat "$W/port")
}

stop_server() {
    kill "$SRV" 2>/dev/null
    wait "$SRV" 2>/dev/null
    SRV=
}
