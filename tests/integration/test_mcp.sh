#!/usr/bin/env bash
# `magpie mcp` end to end: JSON-RPC framing and version negotiation on raw
# stdio; then the official MCP Python SDK (PyPI `mcp`) as the client over
# stdio and streamable HTTP, in both of its negotiation modes (legacy
# initialize handshake, auto = server/discover + 2026-07-28 envelope):
# tools/list, every built tool once on real data (the shared H200 traces,
# examples/kernels/opencl on PoCL, the stand-in engine, its workspace), bad arguments, cancellation of a running
# compare (no process left), 16 concurrent HTTP sessions, Origin and bearer
# token checks, loopback by default, and docs/mcp.md in step with the table.
set -u
MAGPIE=${MAGPIE:?} SRC=${MP_SRC:?}
DATA=${MP_SHARED:-}/data/traces
t=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    rm -rf "$t"
}
trap cleanup EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# ---- raw stdio: framing, errors, negotiation (no SDK needed) ----
# rpc MSG...: for requests answered while they are read (no tool runs): end
# of input comes right after them
rpc() { printf '%s\n' "$@" | timeout 60 "$MAGPIE" mcp 2>>"$t/stderr"; }
# rpc_until ID MSG...: keeps the server's stdin open until the reply to
# request ID is out, and prints every reply. End of input cancels a call
# still running, so the wait must outlast the slowest call on a loaded
# machine (ASan build, other jobs): up to 200 s, ending as soon as the
# reply is there. The reply file is removed first: a feeder that found an
# earlier call's reply there before the new server's redirect truncated it
# closed stdin at once and cancelled the call (2 of 30 loaded runs).
rpc_until() {
    local id=$1 f="$t/until.out"
    shift
    rm -f "$f"
    (
        printf '%s\n' "$@"
        end=$((SECONDS + 200))
        until grep -q "\"id\":$id[,}]" "$f" 2>/dev/null || [ "$SECONDS" -ge "$end" ]; do sleep 0.1; done
    ) | timeout 240 "$MAGPIE" mcp >"$f" 2>>"$t/stderr"
    cat "$f"
}
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}'
out=$(rpc '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
    'not json' '[1]' '{"jsonrpc":"2.0","id":2,"method":"nope"}' '{"jsonrpc":"1.0","id":3,"method":"ping"}' \
    '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":[]}' '{"jsonrpc":"2.0","id":5,"method":"ping"}' \
    '{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01"}}}' \
    '{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}')
grep -q '"id":1,"result":{"protocolVersion":"2024-11-05"' <<<"$out" || fail "initialize 2024-11-05 echoed"
grep -q '"code":-32700' <<<"$out" || fail "parse error -32700"
grep -q '"id":null,"error":{"code":-32600,"message":"Invalid Request: batches' <<<"$out" || fail "batch refused at 2024-11-05"
grep -q '"id":2,"error":{"code":-32601' <<<"$out" || fail "unknown method -32601"
grep -q '"id":3,"error":{"code":-32600' <<<"$out" || fail "jsonrpc 1.0 -32600"
grep -q '"id":4,"error":{"code":-32602' <<<"$out" || fail "params array -32602"
grep -q '"id":5,"result":{}' <<<"$out" || fail "ping"
grep -q '"id":6,"error":{"code":-32022.*"requested":"2099-01-01"' <<<"$out" || fail "unsupported modern version -32022"
grep -q '"id":7,"result":{"supportedVersions":\["2026-07-28","2025-11-25"' <<<"$out" || fail "server/discover"
out=$(rpc '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}' \
    '{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}' \
    '[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"gap_analysis","arguments":{"top_k":"x"}}}]' \
    '[]')
grep -q '"id":1,"result":{"protocolVersion":"2025-11-25"' <<<"$out" || fail "unknown version answered with the latest"
grep -q '^\[{"jsonrpc":"2.0","id":3,"result":{}},{"jsonrpc":"2.0","id":4,"result":{"content".*"isError":true}}\]$' <<<"$out" ||
    fail "2025-03-26 batch: $out"
grep -q '"message":"Invalid Request: empty batch"' <<<"$out" || fail "empty batch"
# stdout carries protocol messages only
rpc_until 1 '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hardware_spec"}}' >"$t/only.out"
grep -q '^{"jsonrpc":"2.0","id":1,"result":{"content"' "$t/only.out" || fail "hardware_spec on stdio: $(head -c 300 "$t/only.out")"
python3 -c '
import json, sys
for l in open(sys.argv[1]):
    json.loads(l)
' "$t/only.out" || fail "stdout has a non-JSON line"
# configure_gpu on the stub NVML (tests/tools/stub_nvml.c, never a real GPU): a dry run
# changes nothing, a call sets the limit, reset puts the default back
if [ -f "${MP_BIN:-}/libstub_nvml.so" ]; then
    gpurpc() {
        MAGPIE_NVML_LIB=$MP_BIN/libstub_nvml.so STUB_NVML_STATE=$t/nvml.state STUB_NVML_LOG=$t/nvml.log \
            rpc_until 2 "$INIT" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"configure_gpu\",\"arguments\":$1}}" |
            grep '"id":2'
    }
    out=$(gpurpc '{"device_ids":[1],"power_limit_watts":450,"gpu_clock_mhz":[1400,1500],"dry_run":true}')
    grep -q '"structuredContent":{"action":"configure","config":{"power_limit_watts":450.0,"gpu_clock_mhz":\[1400,1500\],"mem_clock_mhz":null},"results":{"1":true},"dry_run":true' <<<"$out" ||
        fail "configure_gpu dry run: $out"
    grep -q 'power limit 700 W -> 450 W  \[nvmlDeviceSetPowerManagementLimit(1, 450000 mW)\]' <<<"$out" || fail "configure_gpu dry-run changes: $out"
    [ ! -s "$t/nvml.log" ] || fail "configure_gpu dry run made calls: $(cat "$t/nvml.log")"
    out=$(gpurpc '{"device_ids":[0],"power_limit_watts":450}')
    grep -q '"results":{"0":true}' <<<"$out" && grep -q '^0 450000 ' "$t/nvml.state" || fail "configure_gpu set: $out"
    out=$(gpurpc '{"reset":true}')
    grep -q '"action":"reset","results":{"0":true,"1":true}' <<<"$out" && grep -q '^0 700000 0 0 0 0$' "$t/nvml.state" ||
        fail "configure_gpu reset: $out"
    out=$(gpurpc '{"gpu_clock_mhz":[1400]}')
    grep -q '"isError":true' <<<"$out" || fail "configure_gpu one-item clock list accepted: $out"
else
    echo "SKIPPED configure_gpu: libstub_nvml.so not built (MP_BIN)"
fi
# the Ray tools without a cluster (tests/integration/test_ray.sh runs them on a real one):
# an unreachable head and a bad address are tool errors naming the address, at once
rayrpc() {
    rpc_until 2 "$INIT" "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}" |
        grep '"id":2'
}
out=$(rayrpc ray_task_status '{"task_id":"0123abcd","ray_cluster_address":"http://127.0.0.1:1"}')
grep -q '"isError":true' <<<"$out" && grep -q 'not reachable at http://127.0.0.1:1' <<<"$out" ||
    fail "ray_task_status, head unreachable: $out"
out=$(rayrpc ray_task_list '{"ray_cluster_address":"nope://x"}')
grep -q "bad Ray cluster address 'nope://x'" <<<"$out" || fail "ray_task_list, bad address: $out"
out=$(rayrpc benchmark_batch '{"configs":[{"framework":"vllm","model":"m"}],"ray_cluster_address":"http://127.0.0.1:1"}')
grep -q '"isError":true' <<<"$out" && grep -q 'not reachable' <<<"$out" || fail "benchmark_batch, head unreachable: $out"
# docs/mcp.md carries the generated tool reference
"$MAGPIE" mcp --list-tools --markdown >"$t/tools.md"
python3 - "$t/tools.md" "$SRC/docs/mcp.md" <<'PY' || fail "docs/mcp.md tool reference out of date (magpie mcp --list-tools --markdown)"
import sys
gen = open(sys.argv[1]).read().strip()
doc = open(sys.argv[2]).read()
sys.exit(0 if gen in doc else 1)
PY

# compare_benchmark_reports on two workspaces holding TraceLens's own bert
# reports (H100, MI300): the CSVs equal TraceLens's comparison (the golden of
# tests/integration/test_trace_compare.sh), run summaries from the reports;
# a workspace with tracelens_rank0_report.xlsx instead is read like
# `magpie trace compare` reads it; one with neither is a failure with a reason
BERT=$DATA/tracelens-tests/h100/gaunernst_bert-small-uncased__1016001_perf_report_csvs
if [ -d "$BERT" ]; then
    for g in h100 mi300; do
        mkdir -p "$t/cbr/ws_$g"
        cp -r "${BERT/h100/$g}" "$t/cbr/ws_$g/tracelens_rank0_csvs"
        printf '{"success": true, "framework": "vllm", "model": "bert-%s", "throughput": {"output_throughput": 1}, "latency": {}}\n' \
            "$g" >"$t/cbr/ws_$g/benchmark_report.json"
    done
    mkdir -p "$t/cbr/gold" "$t/cbr/ws_none" "$t/cbr/ws_xl"
    cp "$SRC/tests/fixtures/trace_compare/input_tl_bert_mi300.xlsx" "$t/cbr/ws_xl/tracelens_rank0_report.xlsx"
    tar -C "$t/cbr/gold" -xzf "$SRC/tests/fixtures/trace_compare/bert.tar.gz"
    timeout 120 python3 - "$MAGPIE" "$t/cbr" <<'PY' 2>>"$t/stderr" || fail "compare_benchmark_reports"
import filecmp, json, os, subprocess, sys
magpie, d = sys.argv[1:3]
p = subprocess.Popen([magpie, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(m):
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
def reply(i):
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i:
            r = m["result"]
            return r.get("structuredContent") or json.loads(r["content"][0]["text"])
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
      "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
p.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
ws = lambda n: os.path.join(d, n)
send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "compare_benchmark_reports",
      "arguments": {"workspace_dirs": [ws("ws_h100"), ws("ws_mi300")], "labels": ["h100", "mi300"],
                    "output_dir": ws("out")}}})
a = reply(1)
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "compare_benchmark_reports",
      "arguments": {"workspace_dirs": [ws("ws_h100"), ws("ws_none")], "output_dir": ws("out2"),
                    "export_format": "excel"}}})
b = reply(2)
send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "compare_benchmark_reports",
      "arguments": {"workspace_dirs": [ws("ws_h100"), ws("ws_xl")], "output_dir": ws("out3")}}})
c = reply(3)
p.stdin.close()
p.wait(timeout=30)
assert a["success"] and a["errors"] == [], a
assert sorted(a) == ["errors", "output_dir", "output_files", "run_summaries", "success"], sorted(a)
gold = sorted(os.listdir(ws("gold")))
assert sorted(os.path.basename(f) for f in a["output_files"]) == gold, a["output_files"]
for f in gold:
    assert filecmp.cmp(os.path.join(ws("gold"), f), os.path.join(ws("out"), f), shallow=False), f
s = a["run_summaries"]
assert [x["label"] for x in s] == ["h100", "mi300"] and s[1]["model"] == "bert-mi300", s
assert set(s[0]) == {"workspace", "label", "framework", "model", "throughput", "latency"}, s[0]
assert not b["success"] and any("tracelens_rank0_csvs" in e for e in b["errors"]), b
assert b["output_files"] == [] and b["run_summaries"][1]["label"] == "ws_none", b
# a workspace with the workbook (export_format excel) instead of the CSVs
assert c["success"] and len(c["output_files"]) == 18, c
subprocess.run([magpie, "trace", "compare", ws("ws_h100/tracelens_rank0_csvs"),
                ws("ws_xl/tracelens_rank0_report.xlsx"), "--names", "ws_h100", "ws_xl", "--no-xlsx",
                "--output_csvs_dir", ws("cli3")], check=True, stdout=subprocess.DEVNULL)
for f in c["output_files"]:
    assert filecmp.cmp(f, os.path.join(ws("cli3"), os.path.basename(f)), shallow=False), f
PY
else
    echo "SKIPPED compare_benchmark_reports: shared TraceLens reports not found"
fi

# ---- the official SDK ----
PY=${MCP_PYTHON:-}
if [ -z "$PY" ]; then
    for v in /work/venvs/mcp "${XDG_CACHE_HOME:-$HOME/.cache}/magpie/mcp-venv"; do
        [ -x "$v/bin/python" ] && "$v/bin/python" -c 'import mcp' 2>/dev/null && { PY=$v/bin/python; break; }
    done
fi
if [ -z "$PY" ]; then
    v="${XDG_CACHE_HOME:-$HOME/.cache}/magpie/mcp-venv"
    if python3 -m venv "$v" >/dev/null 2>&1 && timeout 300 "$v/bin/pip" install -q mcp >"$t/pip.log" 2>&1; then
        PY=$v/bin/python
        touch "$v/.magpie-ready" # complete: test_ray.sh may use it (not while pip runs)
    else
        echo "SKIPPED SDK checks: the MCP Python SDK is not installed and 'pip install mcp' failed (offline?)"
        tail -3 "$t/pip.log" 2>/dev/null
        [ $fails = 0 ] && exit 0
        exit 1
    fi
fi
"$PY" -c 'import mcp_types.version as v; print("MCP SDK versions:", v.KNOWN_PROTOCOL_VERSIONS)'
if [ ! -d "$DATA/h200" ] || [ ! -d "$DATA/h200-tp2" ]; then
    echo "SKIPPED SDK tool checks: shared traces not found under $DATA"
    [ $fails = 0 ] && exit 0
    exit 1
fi
# the stand-in serving engine for the benchmark tool
mkdir -p "$t/bin"
printf '#!/bin/sh\nexec python3 %s "$@"\n' "$SRC/tests/tools/fake_engine.py" >"$t/bin/vllm"
chmod +x "$t/bin/vllm"
export PATH="$t/bin:$PATH" FAKE_ENGINE_TAG="mcp$$" FAKE_ENGINE_MAX_S=90
client() { timeout 900 "$PY" "$SRC/tests/tools/mcp_client.py" "$@" --data "$DATA" --src "$SRC"; }

for mode in legacy auto; do
    mkdir -p "$t/stdio-$mode"
    client tools --stdio "$MAGPIE" --mode $mode --work "$t/stdio-$mode" || fail "SDK stdio $mode"
done
# The cancel checks find the harness children by the job path on their
# command line; a warm child of the server's pool (docs/kernel-timing.md,
# "Warm runners") takes its jobs on stdin, so these servers run without the
# pool (MAGPIE_WARM_RUNNERS=0). Cancelling a call whose job runs in a warm
# child: test_mcp_warm.sh.
MAGPIE_WARM_RUNNERS=0 client cancel --stdio "$MAGPIE" --mode legacy --work "$t/cancel-stdio" ||
    fail "cancel over stdio"

MAGPIE_WARM_RUNNERS=0 "$MAGPIE" mcp --transport streamable-http --port 0 --port-file "$t/port" \
    2>"$t/http.log" &
pids+=($!)
for _ in $(seq 1200); do [ -s "$t/port" ] && break; sleep 0.1; done
P=$(cat "$t/port" 2>/dev/null)
[ -n "$P" ] || { fail "HTTP server did not start"; cat "$t/http.log"; exit 1; }
URL=http://127.0.0.1:$P/mcp
grep -q "http://127.0.0.1:$P/mcp" "$t/http.log" || fail "loopback by default"
grep -q "warning" "$t/http.log" && fail "warning on loopback"
[ "$(curl -s "http://127.0.0.1:$P/health")" = '{"status":"ok"}' ] || fail "/health"
code=$(curl -s -o "$t/403" -w '%{http_code}' -H 'Origin: http://evil.example' -H 'Content-Type: application/json' \
    -X POST "$URL" -d '{"jsonrpc":"2.0","id":1,"method":"ping"}')
[ "$code" = 403 ] || fail "foreign Origin -> $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Origin: http://localhost:3000' -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -X POST "$URL" \
    -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}')
[ "$code" = 200 ] || fail "localhost Origin -> $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL" -d '{"jsonrpc":"2.0","id":1,"method":"ping"}')
[ "$code" = 400 ] || fail "no session -> $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Mcp-Session-Id: nope' -X POST "$URL" -d '{"jsonrpc":"2.0","id":1,"method":"ping"}')
[ "$code" = 404 ] || fail "unknown session -> $code"
for mode in legacy auto; do
    mkdir -p "$t/http-$mode"
    client tools --url "$URL" --mode $mode --work "$t/http-$mode" || fail "SDK HTTP $mode"
done
client cancel --url "$URL" --mode auto --work "$t/cancel-http" || fail "cancel over HTTP (stream closed)"
client cancel --url "$URL" --mode legacy --work "$t/cancel-http2" || fail "cancel over HTTP (notifications/cancelled)"
client sessions --url "$URL" -n 16 --work "$t" || fail "16 sessions"

# bearer token, and a warning when bound beyond loopback
MAGPIE_MCP_TOKEN=s3cret "$MAGPIE" mcp --transport streamable-http --host 0.0.0.0 --port 0 \
    --port-file "$t/port2" 2>"$t/http2.log" &
pids+=($!)
for _ in $(seq 1200); do [ -s "$t/port2" ] && break; sleep 0.1; done
P2=$(cat "$t/port2" 2>/dev/null)
grep -q "warning: MCP server bound to 0.0.0.0" "$t/http2.log" || fail "no warning for 0.0.0.0"
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$P2/mcp" -d '{}')
[ "$code" = 401 ] || fail "no token -> $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer s3cret' -H 'Accept: application/json' \
    -X POST "http://127.0.0.1:$P2/mcp" -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}')
[ "$code" = 200 ] || fail "token -> $code"

[ $fails = 0 ] && echo "test_mcp: all checks passed"
[ $fails = 0 ]
