#!/bin/bash
# `magpie benchmark sweep` end to end against tests/integration/capacity_server.py,
# a streaming server that serves at most 4 requests at once (the rest queue),
# so the knee and the SLA answer are known exactly: throughput doubles up to
# concurrency 4 and is flat after it, and a queued request's TTFT is at least
# one service time (200 + 3 x 100 ms) more than a served one's. The times are
# long against a loaded machine's hiccups (the SLA has 250 ms of slack on
# either side). Checks: the grid stops at the knee (c4, saturated at c8, c16
# never run) with every file in place, the SLA search answers 4 (first
# failing: 5), an interleaved A/B run calls a +25 % server SLOWER with paired
# statistics, `sweep compare` of two sweeps, pareto.html in headless Chromium
# when installed, and bad input (exit 2, nothing overwritten). Loopback only,
# bounded request counts.
set -u
MAGPIE=${MAGPIE:?} SRC=${MP_SRC:?}
command -v python3 >/dev/null || { echo "SKIPPED: no python3"; exit 77; }
W=$(mktemp -d /tmp/mp_sweep_it.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }
expect() { if [ "$2" = "$3" ]; then ok "$1"; else ko "$1 (exit $3, wanted $2)"; fi; }

start_server() { # name, extra args; sets URL
    local name=$1
    shift
    python3 "$SRC/tests/integration/capacity_server.py" --capacity 4 --ttft-ms 200 --itl-ms 100 \
        --tokens 4 --port-file "$W/$name.port" --exit-after-s 900 "$@" >"$W/$name.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 600); do [ -s "$W/$name.port" ] && break; sleep 0.05; done
    URL="http://127.0.0.1:$(cat "$W/$name.port")"
}
start_server a
A=$URL
start_server b --scale 1.25
B=$URL
COMMON=(--num-prompts 12 --random-input-len 8 --random-output-len 4)

# 1. the grid climbs to the knee and stops there
# (--min-gain 20: a rising step here doubles throughput and the flat one adds
# nothing, so a loaded machine's hiccup cannot move the knee)
# (--engine-metrics-interval: each run scrapes the server's /metrics, whose
# queue is empty up to the capacity and not past it)
"$MAGPIE" benchmark sweep --base-url "$A" -o "$W/grid" --max-concurrency 1,2,4,8,16 \
    --min-gain 20 --engine-metrics-interval 0.2 "${COMMON[@]}" >"$W/grid.out" 2>"$W/grid.err"
expect "grid sweep exits 0" 0 $?
python3 - "$W/grid" <<'EOF' && ok "knee at c4 (saturated at c8), c16 not run, intervals around every estimate, the engine's queue only past the capacity" || ko "grid: $(cat "$W/grid.out" "$W/grid.err" | tail -20)"
import json, sys
j = json.load(open(sys.argv[1] + "/sweep.json"))
names = [p["name"] for p in j["points"]]
assert names == ["c1", "c2", "c4", "c8"], names
k = j["knee"]
assert k["found"] and k["point"] == "c4" and k["max_concurrency"] == 4 and k["saturated_at"] == 8, k
tps = {p["name"]: p["metrics"]["output_throughput"] for p in j["points"]}
assert 1.8 < tps["c2"]["value"] / tps["c1"]["value"] < 2.2, tps
assert 0.85 < tps["c8"]["value"] / tps["c4"]["value"] < 1.15, tps
for p in j["points"]:
    for name, m in p["metrics"].items():
        if m["ci_lo"] is not None:
            assert m["ci_lo"] <= m["value"] <= m["ci_hi"], (p["name"], name, m)
    assert p["failed"] == 0 and p["completed"] == 12
e = {p["name"]: p["engine_metrics"] for p in j["points"]}
assert all(e[n]["waiting_peak"] == 0 and e[n]["running_peak"] <= 4 for n in ("c1", "c2", "c4")), e
assert e["c8"]["waiting_peak"] >= 1 and e["c8"]["running_peak"] == 4, e
EOF
for f in sweep.json sweep.csv pareto.html points/c4/run_1.json points/c4/run_1.requests.jsonl \
    points/c4/run_1.log; do
    [ -s "$W/grid/$f" ] || ko "grid: $f missing"
done
head -1 "$W/grid/sweep.csv" | grep -q '^point,max_concurrency,request_rate,runs,completed,failed' &&
    [ "$(wc -l <"$W/grid/sweep.csv")" = 5 ] && ok "sweep.csv: header and 4 points" || ko "sweep.csv"
grep -q "knee: max_concurrency 4" "$W/grid.out" && ok "table names the knee" || ko "table: $(cat "$W/grid.out")"
html=$W/grid/pareto.html
[ "$(grep -c '<svg' "$html")" = 4 ] && [ "$(grep -c '</svg>' "$html")" = 4 ] &&
    ! grep -qE '<script|src=|href=' "$html" && ! grep -qiE '[^a-z_](nan|inf)[^a-z_]' "$html" &&
    grep -q '(knee)' "$html" && ok "pareto.html: 4 self-contained SVG charts, knee marked" ||
    ko "pareto.html"
bash "$SRC/tests/tools/chromium_check.sh" "$html" "$W/shot.png" >"$W/chrome.out" 2>&1
case $? in
0) ok "pareto.html in headless Chromium: screenshot, no console messages" ;;
77) echo "SKIPPED chromium check (chromium not installed)" ;;
*) ko "chromium: $(cat "$W/chrome.out")" ;;
esac

# 2. the SLA search: the highest concurrency whose p99 TTFT stays under 450 ms
# (after a 2-point grid, whose points the search reuses)
"$MAGPIE" benchmark sweep --base-url "$A" -o "$W/sla" --sla 'p99_ttft_ms<=450' \
    --max-concurrency 2,8 --search max_concurrency:1:32 "${COMMON[@]}" --json >"$W/sla.json" \
    2>"$W/sla.err"
expect "SLA search exits 0" 0 $?
python3 - "$W/sla.json" <<'EOF' && ok "grid + SLA search: max_concurrency 4, first failing 5, grid points reused, goodput at the answer" || ko "sla: $(tail -20 "$W/sla.err")"
import json, sys
j = json.load(open(sys.argv[1]))
s = j["sla"]
assert s["max_concurrency"] == 4 and s["first_fail"] == 5, s
assert s["limits"] == ["ttft_p99_ms<=450"] and s["search"]["bounds"] == [1, 32], s
assert s["point"] == "c4" and s["request_goodput"] > 0, s
states = {p["name"]: p["sla"] for p in j["points"]}
assert states["c4"].startswith("pass") and states["c5"].startswith("fail"), states
assert [p["name"] for p in j["points"] if not p["searched"]] == ["c2", "c8"], j["points"]
assert not j["knee"]["found"], j["knee"]  # c2 -> c8 still doubled the throughput
EOF

# 3. interleaved A/B: a server 25 % slower, called SLOWER on paired statistics
"$MAGPIE" benchmark sweep --base-url "$A" --candidate-url "$B" -o "$W/ab" \
    --max-concurrency 2 --repeat 3 "${COMMON[@]}" >"$W/ab.out" 2>"$W/ab.err"
expect "interleaved sweep exits 0" 0 $?
python3 - "$W/ab" <<'EOF' && ok "interleaved: paired, TTFT/TPOT SLOWER by about 25 %, runs alternate A B / B A" || ko "ab: $(tail -30 "$W/ab.err")"
import json, os, sys
d = sys.argv[1]
c = json.load(open(d + "/compare.json"))
assert c["paired"] is True, c
cand = c["points"][0]["compare"]["candidates"][0]
assert cand["noise"] == "paired" and cand["run_to_run_noise"] == "measured", cand["noise"]
m = {x["name"]: x for x in cand["metrics"]}
for k in ("ttft_mean_ms", "tpot_mean_ms", "e2el_mean_ms"):
    assert m[k]["verdict"] == "SLOWER" and 10 < m[k]["change_pct"] < 45, (k, m[k])
a = json.load(open(d + "/baseline/sweep.json"))
b = json.load(open(d + "/candidate/sweep.json"))
assert a["interleave"] == b["interleave"] and a["role"] == "baseline" and b["role"] == "candidate"
# A B, then B A, then A B: the order of the runs' files in time
t = lambda side, k: os.stat(f"{d}/{side}/points/c2/run_{k}.json").st_mtime_ns
assert t("baseline", 1) < t("candidate", 1) < t("candidate", 2) < t("baseline", 2) < t("baseline", 3) < t("candidate", 3)
EOF
[ -s "$W/ab/compare.html" ] && grep -q "Point by point" "$W/ab/compare.html" &&
    ok "compare.html with both frontiers" || ko "compare.html"

# 4. sweep compare: separate sweeps (not paired), and the interleaved pair by directory
"$MAGPIE" benchmark sweep compare "$W/grid" "$W/ab/candidate" --json >"$W/cmp.json" 2>"$W/cmp.err"
expect "sweep compare exits 0" 0 $?
python3 - "$W/cmp.json" <<'EOF' && ok "sweep compare: one shared point, not paired, knee only in the baseline" || ko "sweep compare: $(cat "$W/cmp.err")"
import json, sys
c = json.load(open(sys.argv[1]))
assert c["paired"] is False and len(c["points"]) == 1 and c["points"][0]["point"] == "c2", c
assert c["only_baseline"] == 3 and c["only_candidate"] == 0
assert c["knee"]["baseline"] == [4, 8] and c["knee"]["candidate"][0] is None, c["knee"]
EOF
"$MAGPIE" benchmark sweep compare "$W/ab/baseline" "$W/ab/candidate/sweep.json" --html "$W/c.html" \
    >"$W/cmp2.out" 2>&1 && grep -q "interleaved" "$W/cmp2.out" && grep -q "SLOWER" "$W/cmp2.out" &&
    [ -s "$W/c.html" ] && ok "sweep compare of the interleaved pair: paired, SLOWER, HTML" ||
    ko "sweep compare pair: $(cat "$W/cmp2.out")"

# 5. bad input: exit 2 and nothing overwritten
sum=$(md5sum <"$W/grid/sweep.json")
"$MAGPIE" benchmark sweep --base-url "$A" -o "$W/grid" --max-concurrency 1 "${COMMON[@]}" \
    >/dev/null 2>"$W/e1"
expect "an -o holding a sweep is refused" 2 $?
[ "$(md5sum <"$W/grid/sweep.json")" = "$sum" ] && grep -q "already holds a sweep" "$W/e1" &&
    ok "... and left as it was" || ko "existing sweep touched: $(cat "$W/e1")"
"$MAGPIE" benchmark sweep --base-url "$A" -o "$W/x1" --sla 'bogus_ms<=1' --search \
    max_concurrency:1:4 >/dev/null 2>"$W/e2"
expect "unknown SLA metric" 2 $?
grep -q "unknown metric 'bogus_ms'" "$W/e2" || ko "SLA message: $(cat "$W/e2")"
"$MAGPIE" benchmark sweep --base-url "$A" -o "$W/x2" --search max_concurrency:8:2 --sla \
    'p99_ttft_ms<=1' >/dev/null 2>"$W/e3"
expect "search with LO > HI" 2 $?
"$MAGPIE" benchmark sweep --base-url "$A" -o "$W/x3" --max-concurrency 1 --save-result \
    >/dev/null 2>"$W/e4"
expect "a flag the sweep sets itself" 2 $?
grep -q "sets it on every run itself" "$W/e4" || ko "reserved message: $(cat "$W/e4")"
"$MAGPIE" benchmark sweep --base-url "$A" -o "$W/x4" --max-concurrency 1 --no-such-flag \
    >/dev/null 2>"$W/e5"
expect "an unknown flag" 2 $?
"$MAGPIE" benchmark sweep --base-url "$A" -o "$W/x5" --max-concurrency 1 --dataset-name nope \
    --num-prompts 2 >/dev/null 2>"$W/e6"
expect "a run refusing its arguments stops the sweep" 2 $?
grep -q "nope" "$W/e6" && ok "... with the run's own message" || ko "run message: $(cat "$W/e6")"
"$MAGPIE" benchmark sweep compare "$W/grid" "$W/nothing" >/dev/null 2>"$W/e7"
expect "sweep compare of a missing sweep" 2 $?
grep -q "nothing/sweep.json" "$W/e7" || ko "missing sweep message: $(cat "$W/e7")"
mkdir -p "$W/junk" && echo '{"magpie_sweep": 1, "points": [{"runs": 3}]}' >"$W/junk/sweep.json"
"$MAGPIE" benchmark sweep compare "$W/grid" "$W/junk" >/dev/null 2>"$W/e8"
expect "sweep compare of a malformed sweep" 2 $?
grep -q "points\[0\]" "$W/e8" || ko "malformed message: $(cat "$W/e8")"

# 6. a dead server: without --model the first run cannot list the models and
# the sweep stops (exit 1, the run's message); with it every request fails,
# the point is kept and the climb stops there
"$MAGPIE" benchmark sweep --base-url http://127.0.0.1:9 -o "$W/dead0" --max-concurrency 1,2 \
    --num-prompts 2 >"$W/dead0.out" 2>&1
expect "a dead server without --model" 1 $?
grep -q "cannot list models" "$W/dead0.out" || ko "dead message: $(cat "$W/dead0.out")"
"$MAGPIE" benchmark sweep --base-url http://127.0.0.1:9 -o "$W/dead" --max-concurrency 1,2 \
    --model m --num-prompts 2 --random-input-len 4 --random-output-len 2 >"$W/dead.out" 2>&1
expect "a dead server with --model still gives a sweep" 0 $?
python3 - "$W/dead/sweep.json" <<'EOF2' && ok "dead server: one point, all failed, climb stopped" || ko "dead: $(cat "$W/dead.out")"
import json, sys
j = json.load(open(sys.argv[1]))
assert [p["name"] for p in j["points"]] == ["c1"], j["points"]
assert j["points"][0]["failed"] == 2 and j["points"][0]["completed"] == 0
assert any("failed beyond the limit" in n for n in j["notes"]), j["notes"]
EOF2

# 7. the MCP tools: benchmark_sweep (a 2-point grid) and compare_sweeps
python3 - "$MAGPIE" "$A" "$W" <<'EOF' && ok "MCP benchmark_sweep and compare_sweeps" || ko "MCP tools"
import json, subprocess, sys, time
magpie, url, w = sys.argv[1:4]
p = subprocess.Popen([magpie, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(m):
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
def reply(i):
    end = time.time() + 300
    while time.time() < end:
        line = p.stdout.readline()
        if not line:
            break
        m = json.loads(line)
        if m.get("id") == i:
            return m
    raise SystemExit(f"no reply {i}")
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-03-26",
      "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
reply(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "benchmark_sweep",
      "arguments": {"base_url": url, "output_dir": w + "/mcp", "max_concurrency": [1, 2],
                    "num_prompts": 12, "random_input_len": 8, "random_output_len": 4}}})
r = reply(2)["result"]
assert not r.get("isError"), r
s = r["structuredContent"]["sweep"] if "structuredContent" in r else json.loads(r["content"][0]["text"])["sweep"]
assert [x["name"] for x in s["points"]] == ["c1", "c2"], s["points"]
send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "compare_sweeps",
      "arguments": {"baseline": w + "/mcp", "candidate": w + "/grid"}}})
r = reply(3)["result"]
assert not r.get("isError"), r
c = r["structuredContent"] if "structuredContent" in r else json.loads(r["content"][0]["text"])
assert len(c["points"]) == 2 and c["paired"] is False and "knee" in c["text"], c.keys()
send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "benchmark_sweep",
      "arguments": {"base_url": url, "sla": ["nonsense<=1"], "search": "max_concurrency:1:4"}}})
r = reply(4)["result"]
assert r.get("isError") and "unknown metric" in json.dumps(r), r
p.stdin.close()
p.wait(timeout=60)
EOF

# 8. engines magpie starts: two server sets (tests/tools/fake_engine.py as
# `vllm` on PATH), each started once, swept over two points, stopped
mkdir -p "$W/bin"
printf '#!/bin/sh\nexec python3 %s "$@"\n' "$SRC/tests/tools/fake_engine.py" >"$W/bin/vllm"
chmod +x "$W/bin/vllm"
TAG="sweep$$"
for set in small large; do
    port=$(python3 "$SRC/tests/tools/free_port.py")
    cat >"$W/$set.yaml" <<EOF
benchmark:
  framework: vllm
  model: fake-model
  run_mode: local
  envs: {PORT: $port, CONC: 2, ISL: 16, OSL: 8, NUM_PROMPTS: 4, NUM_WARMUPS: 0}
  profiler: {torch_profiler: {enabled: true}}
EOF
done
PATH="$W/bin:$PATH" FAKE_ENGINE_TAG=$TAG FAKE_ENGINE_MAX_S=300 "$MAGPIE" benchmark sweep \
    -b "$W/small.yaml" -b "big=$W/large.yaml" -o "$W/eng" --max-concurrency 1,2 \
    --num-prompts 4 --random-input-len 8 --random-output-len 4 >"$W/eng.out" 2>&1
expect "sweep over two engines exits 0" 0 $?
python3 - "$W/eng" <<'EOF' && ok "engines: one start per set, each swept (2 points), workspaces with server.log" || ko "engines: $(tail -20 "$W/eng.out")"
import json, os, sys
d = sys.argv[1]
e = json.load(open(d + "/engines.json"))["server_sets"]
assert [s["label"] for s in e] == ["small", "big"] and all(s["success"] for s in e), e
for s in e:
    j = json.load(open(f"{d}/{s['label']}/sweep.json"))
    assert [p["name"] for p in j["points"]] == ["c1", "c2"], j["points"]
    assert j["label"] == s["label"] and j["target"].startswith("http://127.0.0.1:")
    log = open(s["workspace"] + "/server.log").read()
    assert log.count("fake-engine: listening") == 1, log[:300]
    assert not os.path.exists(s["workspace"] + "/torch_trace") or not os.listdir(s["workspace"] + "/torch_trace")
EOF
[ "$(pgrep -f "fake-engine-core-$TAG" | wc -l)" = 0 ] && ok "engines: no engine process left" ||
    ko "engine processes left"
PATH="$W/bin:$PATH" "$MAGPIE" benchmark sweep -b "$W/small.yaml" -o "$W/eng2" >/dev/null 2>"$W/e9"
expect "engines without loads: refused before any start" 2 $?
[ ! -e "$W/eng2/small" ] || ko "an engine was started for a bad sweep"

# 9. a shared-prefix workload against an SGLang magpie starts with Magpie's
# --disable-radix-cache is warned about before any engine starts (an
# engines.json already there then refuses the sweep: nothing is started)
mkdir -p "$W/pc" && echo '{}' >"$W/pc/engines.json"
for pc in default on; do
    cat >"$W/sg_$pc.yaml" <<EOF
benchmark:
  framework: sglang
  model: fake-model
  run_mode: local
  prefix_cache: $pc
EOF
    "$MAGPIE" benchmark sweep -b "$W/sg_$pc.yaml" -o "$W/pc" --max-concurrency 1 \
        --dataset-name prefix_repetition >/dev/null 2>"$W/pc_$pc.err"
    expect "sweep over SGLang, prefix_cache $pc: refused (engines.json there)" 2 $?
done
grep -q "server set sg_default: --dataset-name prefix_repetition replays prompts that share prefixes, but SGLang runs with --disable-radix-cache" "$W/pc_default.err" &&
    ok "SGLang without prefix_cache on: the shared-prefix warning" || ko "no warning: $(cat "$W/pc_default.err")"
! grep -q "disable-radix-cache" "$W/pc_on.err" && ok "SGLang with prefix_cache on: no warning" ||
    ko "warned with prefix_cache on: $(cat "$W/pc_on.err")"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
