# Shared by check_engines.sh and check_workloads.sh (sourced, not run): the
# printed checks, a JSON reader, a port, and stopping a server the way
# magpie stops an engine. The caller sets RES (the results file) and SRV
# (the server's pid, "" when none) before use.

# results go to a file: each engine's part runs in a subshell of its own
ok() { echo ok >>"$RES"; echo "ok   $1"; }
ko() { echo FAIL >>"$RES"; echo "FAIL $1"; }
check() { if eval "$2"; then ok "$1"; else ko "$1"; fi; }
jq_() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
port() { echo $((20000 + (RANDOM % 20000))); }

# stop_server: the way magpie stops an engine - SIGTERM to the main process,
# up to 30 s, then the group, up to 20 s, then SIGKILL
stop_server() {
    [ -n "$SRV" ] || return
    kill -TERM "$SRV" 2>/dev/null
    for _ in $(seq 60); do kill -0 "$SRV" 2>/dev/null || break; sleep 0.5; done
    kill -TERM -- "-$SRV" 2>/dev/null && sleep 1
    for _ in $(seq 40); do kill -0 -- "-$SRV" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$SRV" 2>/dev/null
    wait "$SRV" 2>/dev/null
    SRV=
}

# the closing lines: load, counts, and the status (0 when something passed
# and nothing failed)
finish() {
    echo "load after: $(uptime)"
    pass=$(grep -c '^ok' "$RES" 2>/dev/null) fail=$(grep -c '^FAIL' "$RES" 2>/dev/null)
    echo "${pass:-0} passed, ${fail:-0} failed"
    [ "${fail:-0}" = 0 ] && [ "${pass:-0}" != 0 ]
}
