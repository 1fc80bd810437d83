#!/bin/bash
# `magpie benchmark compare` end to end on runs recorded from
# tests/calib/calib_server (tests/fixtures/bench_compare: a baseline, the same
# setting with other server noise, and a known change TTFT x1.05 / ITL x1.03,
# 150 requests each): the verdicts, JSON, HTML, the workload refusal (exit 2
# naming the field) and --allow-different, workspaces and repeats (run_1..N),
# gap-analysis kernels side by side (new and vanished),
# --fail-on-slower, and bad input. Deterministic: recorded data, seeded
# resampling; no timing.
set -u
MAGPIE=${MAGPIE:?} MP_FIXTURES=${MP_FIXTURES:?}
FX=$MP_FIXTURES/bench_compare
W=$(mktemp -d /tmp/mp_bcmp_it.XXXXXX)
trap 'rm -rf "$W"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }
expect() { # name want-rc got-rc
    if [ "$2" = "$3" ]; then ok "$1"; else ko "$1 (exit $3, wanted $2)"; fi
}

# 1. the three recorded runs
"$MAGPIE" benchmark compare "$FX/base.json" "$FX/same.json" "$FX/changed.json" \
    --single-run-effect 0 --html "$W/cmp.html" -o "$W/cmp.json" >"$W/out.txt" 2>"$W/err.txt"
expect "compare exits 0" 0 $?
grep -q "same.json vs" "$W/out.txt" && grep -q "changed.json vs" "$W/out.txt" &&
    ok "table names both candidates" || ko "table: $(cat "$W/out.txt" "$W/err.txt")"
python3 - "$W/cmp.json" <<'EOF' && ok "JSON: same WITHIN NOISE everywhere; changed SLOWER latency, throughput in noise" || ko "JSON verdicts"
import json, sys
j = json.load(open(sys.argv[1]))
same, changed = j["candidates"]
v = {m["name"]: m["verdict"] for m in same["metrics"]}
assert set(v.values()) == {"WITHIN NOISE"}, v
c = {m["name"]: m["verdict"] for m in changed["metrics"]}
assert c["output_throughput"] == "WITHIN NOISE" and c["request_throughput"] == "WITHIN NOISE", c
for k in ("itl_mean_ms", "itl_median_ms", "tpot_mean_ms", "e2el_mean_ms", "ttft_mean_ms"):
    assert c[k] == "SLOWER", (k, c)
assert changed["slower"] >= 6 and changed["faster"] == 0
m = {x["name"]: x for x in changed["metrics"]}["itl_mean_ms"]
assert 2 < m["change_pct"] < 4 and m["ci_lo_pct"] < m["change_pct"] < m["ci_hi_pct"], m
assert j["settings"]["correction"] == "holm" and j["settings"]["bootstrap"] == 2000
assert j["baseline"]["fields"]["model"] == "calib-model"
EOF
grep -q "<polyline" "$W/cmp.html" && grep -q "Inter-token latency" "$W/cmp.html" &&
    grep -q "</html>" "$W/cmp.html" && ! grep -qi "<script" "$W/cmp.html" &&
    ok "HTML: self-contained SVG CDFs" || ko "HTML"

# 1b. by default one run a side leaves run-to-run noise unmeasured: the
# +3 % ITL / +5 % TTFT change is within the 10 % floor, p99 metrics are not
# judged (N/A), and the table says so
"$MAGPIE" benchmark compare "$FX/base.json" "$FX/changed.json" -o "$W/floor.json" >"$W/floor.txt"
expect "compare with the default floor exits 0" 0 $?
grep -q "run-to-run noise UNMEASURED" "$W/floor.txt" && python3 - "$W/floor.json" <<'EOF' &&
import json, sys
c = json.load(open(sys.argv[1]))["candidates"][0]
assert c["run_to_run_noise"] == "unmeasured" and c["noise"] == "within-run", c["noise"]
assert c["effect_floor_pct"] == 10 and c["slower"] == 0, c
assert json.load(open(sys.argv[1]))["settings"]["single_run_effect_pct"] == 10
v = {m["name"]: m["verdict"] for m in c["metrics"]}
assert all(v[k] == "N/A" for k in v if k.endswith("p99_ms")), v
assert all(v[k] == "WITHIN NOISE" for k in v if not k.endswith("p99_ms")), v
EOF
    ok "one run a side: noise unmeasured, 10 % floor, p99 not judged, the small change not called" ||
    ko "default floor: $(cat "$W/floor.txt")"
"$MAGPIE" benchmark compare "$FX/base.json" "$FX/changed.json" --fail-on-slower >/dev/null
expect "--fail-on-slower under the floor exits 0" 0 $?

# 2. determinism: the same result twice, another seed moves only the intervals
"$MAGPIE" benchmark compare "$FX/base.json" "$FX/changed.json" --json >"$W/a.json"
"$MAGPIE" benchmark compare "$FX/base.json" "$FX/changed.json" --json >"$W/b.json"
cmp -s "$W/a.json" "$W/b.json" && ok "same inputs + seed: identical JSON" || ko "not deterministic"

# 3. --fail-on-slower
"$MAGPIE" benchmark compare "$FX/base.json" "$FX/changed.json" --single-run-effect 0 \
    --fail-on-slower >/dev/null
expect "--fail-on-slower with a SLOWER metric exits 1" 1 $?
"$MAGPIE" benchmark compare "$FX/base.json" "$FX/same.json" --fail-on-slower >/dev/null
expect "--fail-on-slower without one exits 0" 0 $?

# 4. different workloads: refused naming the field, or listed
python3 - "$FX/same.json" "$W/conc8.json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1])); j["max_concurrency"] = 8
json.dump(j, open(sys.argv[2], "w"))
EOF
cp "$FX/same.requests.jsonl" "$W/conc8.requests.jsonl"
"$MAGPIE" benchmark compare "$FX/base.json" "$W/conc8.json" >"$W/out.txt" 2>"$W/err.txt"
expect "different max_concurrency: exit 2" 2 $?
grep -q "max_concurrency" "$W/err.txt" && ok "the refusal names the field" ||
    ko "refusal message: $(cat "$W/err.txt")"
"$MAGPIE" benchmark compare "$FX/base.json" "$W/conc8.json" --allow-different >"$W/out.txt" 2>&1
expect "--allow-different: exit 0" 0 $?
grep -q "WORKLOADS DIFFER" "$W/out.txt" && grep -q "max_concurrency .*none .*8" "$W/out.txt" &&
    ok "--allow-different lists the difference" || ko "difference list: $(head -20 "$W/out.txt")"

# 5. workspaces: one run, and repeats run_1..N
mkws() { # dir kernels-json engine-extra
    mkdir -p "$1"
    cat >"$1/benchmark_report.json" <<EOF
{"success": true, "framework": "vllm", "model": "calib-model", "profiling_enabled": false,
 "gap_analysis": {"top_kernels": ${2:-[]}},
 "magpie": {"version": "test", "engine": {"command": "vllm serve calib-model --port 8$RANDOM $3",
 "version": "0.0.test"}, "gpu": {"vendor": "nvidia", "visible_devices": "0"}}}
EOF
    printf 'benchmark:\n  framework: vllm\n  model: "calib-model"\n  envs:\n    ISL: "32"\n    OSL: "24"\n    CONC: "8"\n    PORT: "8%s"\n' "$RANDOM" >"$1/config.yaml"
}
KA='[{"name": "gemm_a", "calls": 10, "self_cuda_total_us": 1000, "pct_total": 50},
     {"name": "attn", "calls": 20, "self_cuda_total_us": 600, "pct_total": 30},
     {"name": "old_norm", "calls": 5, "self_cuda_total_us": 400, "pct_total": 20}]'
KB='[{"name": "gemm_a", "calls": 10, "self_cuda_total_us": 800, "pct_total": 50},
     {"name": "attn", "calls": 20, "self_cuda_total_us": 600, "pct_total": 37.5},
     {"name": "fused_norm", "calls": 5, "self_cuda_total_us": 200, "pct_total": 12.5}]'
mkws "$W/ws_base" "$KA" ""
cp "$FX/base.json" "$W/ws_base/inferencex_result.json"
cp "$FX/base.requests.jsonl" "$W/ws_base/inferencex_result.requests.jsonl"
mkws "$W/ws_rep" "$KB" ""
i=1
for r in base same changed; do
    mkdir -p "$W/ws_rep/run_$i"
    cp "$FX/$r.json" "$W/ws_rep/run_$i/inferencex_result.json"
    cp "$FX/$r.requests.jsonl" "$W/ws_rep/run_$i/inferencex_result.requests.jsonl"
    i=$((i + 1))
done
"$MAGPIE" benchmark compare "$W/ws_base" "$W/ws_rep" --json >"$W/ws.json" 2>"$W/err.txt"
expect "workspace vs repeats workspace: exit 0 (ports ignored)" 0 $?
python3 - "$W/ws.json" <<'EOF' && ok "repeats: 3 runs, spread reported, fields from config.yaml" || ko "repeats JSON"
import json, sys
j = json.load(open(sys.argv[1]))
c = j["candidates"][0]
assert len(c["side"]["runs"]) == 3, c["side"]["runs"]
assert c["side"]["fields"]["isl"] == "32" and c["side"]["fields"]["max_concurrency"] == "8"
m = {x["name"]: x for x in c["metrics"]}["itl_mean_ms"]
assert m["candidate_runs"][0] < m["candidate_runs"][1]
k = {x["name"]: x for x in c["kernels"]}
assert [x["name"] for x in c["kernels"]] == ["gemm_a", "attn", "old_norm", "fused_norm"], c["kernels"]
assert k["gemm_a"]["status"] == "both" and abs(k["gemm_a"]["change_pct"] + 20) < 1e-9
assert k["old_norm"]["status"] == "vanished" and k["fused_norm"]["status"] == "new"
assert k["fused_norm"]["baseline_us"] is None and k["fused_norm"]["candidate_calls"] == 5
EOF
"$MAGPIE" benchmark compare "$W/ws_base" "$W/ws_rep" | grep -q "only in candidate's top k" &&
    ok "kernels side by side in the table (new and vanished marked)" || ko "kernel table"
"$MAGPIE" benchmark compare "$W/ws_base" "$W/ws_rep" | grep -q "spread over runs" &&
    ok "table shows the spread over repeats" || ko "no spread table"
mkws "$W/ws_other" "" "--max-num-seqs 1"
cp "$FX/same.json" "$W/ws_other/inferencex_result.json"
cp "$FX/same.requests.jsonl" "$W/ws_other/inferencex_result.requests.jsonl"
"$MAGPIE" benchmark compare "$W/ws_base" "$W/ws_other" >/dev/null 2>"$W/err.txt"
expect "different engine arguments: exit 2" 2 $?
grep -q "engine.args" "$W/err.txt" && ok "the refusal names engine.args" || ko "$(cat "$W/err.txt")"

# 6. bad input
"$MAGPIE" benchmark compare "$FX/base.json" >/dev/null 2>&1
expect "one path: exit 2" 2 $?
"$MAGPIE" benchmark compare "$FX/base.json" "$W/nope.json" >/dev/null 2>"$W/err.txt"
expect "missing file: exit 2" 2 $?
grep -q "nope.json" "$W/err.txt" && ok "missing file named" || ko "$(cat "$W/err.txt")"
cp "$FX/same.json" "$W/plain.json"
"$MAGPIE" benchmark compare "$FX/base.json" "$W/plain.json" >/dev/null 2>"$W/err.txt"
expect "no per-request data: exit 2" 2 $?
grep -q "save-detailed" "$W/err.txt" && ok "says how to save per-request data" || ko "$(cat "$W/err.txt")"
"$MAGPIE" benchmark compare "$FX/base.json" "$FX/same.json" --bootstrap 200 >/dev/null 2>"$W/err.txt"
expect "too few resamples for Holm: exit 2" 2 $?
"$MAGPIE" benchmark compare --help | grep -q "WITHIN NOISE" && ok "--help" || ko "--help"

# 7. --repeat N on the serving path (client-only against the calibration
#    server): one warm-up, N measured runs kept as run_1..N with their spread,
#    and the repeats workspace compared with itself
CALIB=${MP_BIN:-}/calib/calib_server
if [ -x "$CALIB" ]; then
    echo '{"seed": 1, "default": {"ttft_ms": [4, 6], "itl_ms": [1, 2]}}' >"$W/sched.json"
    "$CALIB" --schedule "$W/sched.json" --port-file "$W/calib.port" --exit-after-s 120 \
        >/dev/null 2>&1 &
    SRV=$!
    for _ in $(seq 2400); do [ -s "$W/calib.port" ] && break; sleep 0.05; done # <= 120 s
    BENCHMARK_BASE_URL=http://127.0.0.1:$(cat "$W/calib.port") timeout 120 "$MAGPIE" benchmark \
        vllm --model calib-model --run-mode local --concurrency 4 --input-len 8 --output-len 8 \
        --num-prompts 40 --env NUM_WARMUPS=4 --repeat 3 -o "$W/rep" -q >"$W/rep.out" 2>&1
    RC=$?
    expect "benchmark --repeat 3: exit 0" 0 $RC
    [ "$RC" = 0 ] || tail -20 "$W/rep.out"
    RW=$(ls -d "$W"/rep/*/ | head -1)
    [ -s "$RW/run_1/inferencex_result.requests.jsonl" ] && [ -s "$RW/run_3/inferencex_result.json" ] &&
        [ ! -e "$RW/run_4" ] && ok "run_1..run_3 kept" || ko "repeat dirs: $(ls "$RW")"
    python3 - "$RW/benchmark_report.json" <<'EOF2' && ok "benchmark_report.json: magpie.repeats with the spread" || ko "repeats in the report"
import json, sys
r = json.load(open(sys.argv[1]))["magpie"]["repeats"]
assert r["n"] == 3 and [x["run"] for x in r["runs"]] == [1, 2, 3], r
s = r["spread"]["output_throughput"]
assert s["min"] <= s["mean"] <= s["max"] and s["cov"] >= 0, s
EOF2
    grep -q "repeat: 3" "$RW/config.yaml" && ok "config.yaml records repeat" || ko "config.yaml"
    grep -q "^Repeats: 3 runs" "$RW/summary.txt" && grep -q "^  output_throughput " "$RW/summary.txt" &&
        ok "summary.txt shows the spread" || ko "summary.txt: $(cat "$RW/summary.txt")"
    "$MAGPIE" benchmark compare "$RW" "$RW" --json >"$W/self.json" 2>"$W/err.txt"
    expect "compare a repeats workspace with itself: exit 0" 0 $?
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); c=j['candidates'][0]; \
assert len(c['side']['runs']) == 3 and c['faster'] == 0 and c['slower'] == 0" \
        "$W/self.json" && ok "itself: 3 runs, nothing FASTER or SLOWER" || ko "self compare"
    printf 'benchmark:\n  framework: vllm\n  model: m\n  run_mode: local\n  repeat: 2\n' >"$W/rp.yaml"
    timeout 60 "$MAGPIE" benchmark -b "$W/rp.yaml" -o "$W/rpy" -q >"$W/rpy.out" 2>&1
    expect "YAML repeat with the profiler on (YAML default): exit 2" 2 $?
    grep -q "repeat" "$W/rpy.out" && ok "the refusal names repeat" || ko "$(cat "$W/rpy.out")"
    kill "$SRV" 2>/dev/null
    wait "$SRV" 2>/dev/null
else
    echo "SKIPPED --repeat: calib_server not built (MP_BIN)"
fi

echo "passed $pass, failed $fail"
[ "$fail" -eq 0 ]
