#!/bin/bash
# Magpie's AgentX keys and scheduled profiler captures (docs/workloads.md,
# "Agentic workloads and profiler captures"), against the stand-in engine
# (tests/tools/fake_engine.py as `vllm`, a real streaming server on
# loopback that writes a small torch trace when a capture ends): an agentic
# trace (mooncake JSONL with sessions) replayed on its recorded schedule
# while three captures are taken through /start_profile and /stop_profile,
# each ended by the engine's own step bound (vLLM's max_iterations, which
# the stand-in honours) or the capture duration; each capture's traces in
# torch_trace/profile_NNN/, its kernel summary and TraceLens reports in the
# report and under captures/profile_NNN/ (pytorch mode, and inference mode:
# the stand-in's trace then carries vLLM's step annotations, so every
# capture gets its own stage split and three stage reports); SGLang's start
# body through a declared engine. Asserted: counts and order
# (start/stop calls, capture indices, each capture after start_seconds and
# after the previous one's flush plus interval_seconds), never durations.
# Bad keys exit 2 naming file:line:col and the field.
set -u
MAGPIE=${MAGPIE:?} MP_SRC=${MP_SRC:?}
W=$(mktemp -d /tmp/mp_captures.XXXXXX)
TAG="cap$$"
pass=0 fail=0
cleanup() { [ -n "${KEEP:-}" ] || rm -rf "$W"; }
trap cleanup EXIT

ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }
check() { if eval "$2"; then ok "$1"; else ko "$1"; fi; }

if ! command -v python3 >/dev/null; then
    echo "SKIPPED: python3 not found (the stand-in engine needs it)"
    echo "0 passed, 0 failed"
    exit 0
fi
mkdir -p "$W/bin"
printf '#!/bin/sh\nexec python3 %s "$@"\n' "$MP_SRC/tests/tools/fake_engine.py" >"$W/bin/vllm"
chmod +x "$W/bin/vllm"
export PATH="$W/bin:$PATH" FAKE_ENGINE_TAG="$TAG" FAKE_ENGINE_MAX_S=150
free_port() { python3 "$MP_SRC/tests/tools/free_port.py"; }
orphans() { pgrep -f "fake-engine-core-$TAG" | wc -l; }
jq_() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
# capq EXPR: EXPR over c, the report's magpie.captures
capq() { python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['magpie']['captures']; print($1)" "$R"; }

# run LABEL YAML: leaves RC, WS (workspace)
run() {
    PORT=$(free_port) timeout 200 "$MAGPIE" benchmark -b "$2" -o "$W/$1" -q \
        >"$W/$1.out" 2>"$W/$1.err"
    RC=$?
    WS=$(ls -d "$W/$1"/benchmark_vllm_* 2>/dev/null | tail -1)
}

# the agentic trace: 80 requests 250 ms apart (20 s), every 4 consecutive
# ones a session of 4 turns sharing their first block
python3 - "$W/agent.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(80):
        s = i // 4
        f.write(json.dumps({"timestamp": 250 * i, "input_length": 96, "output_length": 8,
                            "hash_ids": [1000 + s, 5000 + i], "session_id": "s%d" % s}) + "\n")
EOF

cat >"$W/agentx.yaml" <<EOF
benchmark:
  framework: vllm
  model: fake-model
  run_mode: local
  envs: {CONC: 4, NUM_WARMUPS: 1}
  agentx:
    enabled: true
    mode: fast
    trace_file: $W/agent.jsonl
  profiler:
    torch_profiler:
      enabled: true
      num_steps: 5
      num_profiles: 3
      start_seconds: 0.5
      interval_seconds: 0.2
      duration_seconds: 3
    tracelens: {enabled: true, analysis_mode: pytorch}
EOF
FAKE_ENGINE_PROFLOG=$W/prof.log FAKE_ENGINE_STEP_MS=100 run agentx "$W/agentx.yaml"
R=$WS/benchmark_report.json
check "agentx: exit 0" '[ "$RC" = 0 ]'
check "agentx: success" '[ "$(jq_ "$R" "r[\"success\"]")" = True ]'
check "agentx: every trace request completed" \
    '[ "$(jq_ "$R" "r[\"throughput\"][\"completed_requests\"]")" = 80 ]'
check "agentx: replayed on the recorded schedule" \
    '[ "$(jq_ "$WS/inferencex_result.json" "r[\"magpie\"][\"fixed_schedule\"]")" = True ]'
check "agentx: fast mode is diagnostic" \
    '[ "$(jq_ "$R" "r[\"run_kind\"], r[\"reward_eligible\"]")" = "diagnostic False" ]'
check "agentx: the engine bounds a capture to num_steps" \
    'jq_ "$R" "r[\"magpie\"][\"engine\"][\"command\"]" | grep -q -- "--profiler-config.max_iterations 5"'
check "captures: 3 planned, 3 taken" '[ "$(capq "c[\"planned\"], c[\"taken\"]")" = "3 3" ]'
check "captures: indices in order" '[ "$(capq "[p[\"index\"] for p in c[\"profiles\"]]")" = "[1, 2, 3]" ]'
check "captures: 3 profiler starts and 3 stops, no other call" '[ "$(wc -l <"$W/prof.log")" = 6 ]'
check "captures: start and stop strictly alternate (stop-idle: the engine ended it first)" \
    '[ "$(grep -o "^st[a-z]*" "$W/prof.log" | tr "\n" " ")" = "start stop start stop start stop " ]'
check "captures: the first after start_seconds" '[ "$(capq "c[\"profiles\"][0][\"start_s\"] >= 0.5")" = True ]'
check "captures: each after the previous flush plus interval_seconds" \
    '[ "$(capq "all(b[\"start_s\"] >= a[\"stop_s\"] + 0.2 and b[\"stop_s\"] > b[\"start_s\"] for a, b in zip(c[\"profiles\"], c[\"profiles\"][1:]))")" = True ]'
for k in 1 2 3; do
    d=$(printf 'profile_%03d' $k)
    check "capture $k: traces in torch_trace/$d" 'ls "$WS/torch_trace/$d"/*.pt.trace.json.gz >/dev/null 2>&1'
    check "capture $k: its kernel summary" \
        '[ "$(capq "c[\"profiles\"][$k - 1][\"kernel_summary\"][\"top_bottlenecks\"][0]")" = ampere_bf16_gemm_128x64 ]'
    check "capture $k: its TraceLens report" 'ls "$WS/captures/$d/tracelens_rank0_csvs/"*.csv >/dev/null 2>&1'
    check "capture $k: its tracelens_analysis" \
        '[ "$(capq "c[\"profiles\"][$k - 1][\"tracelens_analysis\"][\"enabled\"]")" = True ]'
    # its manifest: what it took, each file's size as on disk, and what each
    # trace holds (the stand-in's trace: 20 steps of 3 kernels and 3 CPU ops)
    check "capture $k: capture.json names it, its times and steps, and its trace" "python3 - '$WS' $k <<'PY'
import json, os, sys
ws, k = sys.argv[1], int(sys.argv[2])
d = 'profile_%03d' % k
m = json.load(open(os.path.join(ws, 'captures', d, 'capture.json')))
p = json.load(open(os.path.join(ws, 'benchmark_report.json')))['magpie']['captures']['profiles'][k - 1]
assert p['manifest'] == 'captures/%s/capture.json' % d, p['manifest']
assert (m['index'], m['trace_dir'], m['num_steps'], m['framework']) == (k, 'torch_trace/' + d, 5, 'vllm'), m
assert m['start_s'] == p['start_s'] and m['stop_s'] == p['stop_s'] and m['start_unix'] > 1.7e9, m
on_disk = sorted(os.listdir(os.path.join(ws, 'torch_trace', d)))
assert sorted(f['path'] for f in m['files']) == on_disk and m['n_files'] == len(on_disk), (m, on_disk)
for f in m['files']:
    assert f['bytes'] == os.path.getsize(os.path.join(ws, 'torch_trace', d, f['path'])), f
tr = [f for f in m['files'] if f['trace']]
assert len(tr) == 1 == m['traces'], m
t = tr[0]
assert (t['gpu_kernels'], t['cpu_ops'], t['holds_gpu_kernels'], t['holds_cpu_ops']) == (60, 60, True, True), t
assert m['all_traces_hold_gpu_kernels'] is True and m['error'] is None, m
PY"
done
check "captures: no trace left outside the captures" '! ls "$WS"/torch_trace/*.json.gz >/dev/null 2>&1'
check "captures: top-level analyses from capture 1" \
    '[ "$(jq_ "$R" "r[\"top_bottlenecks\"][0], r[\"gap_analysis\"][\"top_kernels\"][0][\"calls\"]")" = "ampere_bf16_gemm_128x64 20" ]'
check "captures: no errors" '[ "$(jq_ "$R" "r[\"errors\"]")" = "[]" ]'
check "captures: config.yaml keeps the schedule and agentx" \
    'grep -q "num_profiles: 3" "$WS/config.yaml" && grep -q "trace_file: " "$WS/config.yaml"'
check "captures: summary lists them" 'grep -q "Profiler captures: 3 of 3" "$WS/summary.txt"'
check "captures: no engine process left" '[ "$(orphans)" = 0 ]'

# a declared engine whose profiler start takes SGLang's JSON body: the
# capture asks for num_steps and the engine ends it by itself
head -40 "$W/agent.jsonl" >"$W/agent40.jsonl"
cat >"$W/body.yaml" <<EOF
benchmark:
  model: fake-model
  run_mode: local
  envs: {CONC: 4, NUM_WARMUPS: 0}
  agentx: {enabled: true, trace_file: $W/agent40.jsonl}
  profiler:
    torch_profiler: {enabled: true, num_steps: 3, num_profiles: 2, start_seconds: 0.2,
                     interval_seconds: 0, duration_seconds: 60}
  engine:
    name: fakesrv
    command: "python3 $MP_SRC/tests/tools/fake_engine.py serve {model} --host {host} --port {port}"
    health_path: /health
    profiler:
      start: /start_profile
      stop: /stop_profile
      args: "--profiler-config.torch_profiler_dir {trace_dir}"
      start_body: '{"num_steps": {num_steps}, "activities": ["CPU", "GPU"]}'
EOF
PORT=$(free_port) FAKE_ENGINE_PROFLOG=$W/body.log FAKE_ENGINE_STEP_MS=100 timeout 200 \
    "$MAGPIE" benchmark -b "$W/body.yaml" -o "$W/body" -q >"$W/body.out" 2>"$W/body.err"
RC=$?
R=$(ls -d "$W/body"/benchmark_fakesrv_*/benchmark_report.json 2>/dev/null | tail -1)
check "body: exit 0" '[ "$RC" = 0 ]'
check "body: the start requests carried num_steps" \
    '[ "$(grep -c "^start steps=3$" "$W/body.log")" = 2 ]'
check "body: 2 of 2 taken, both ended by the engine" \
    '[ "$(capq "c[\"taken\"], [p[\"ended_by_engine\"] for p in c[\"profiles\"]]")" = "2 [True, True]" ]'
check "body: config.yaml keeps start_body" 'grep -q "start_body: " "$(dirname "$R")/config.yaml"'

# TraceLens inference mode: every capture gets its own stage split and
# per-stage reports (the stand-in's trace carries vLLM's step annotations)
cat >"$W/stages.yaml" <<EOF
benchmark:
  framework: vllm
  model: fake-model
  run_mode: local
  envs: {CONC: 4, OSL: 8, NUM_WARMUPS: 0}
  agentx: {enabled: true, trace_file: $W/agent40.jsonl}
  profiler:
    torch_profiler: {enabled: true, num_steps: 5, num_profiles: 2, start_seconds: 0.2,
                     interval_seconds: 0}
    tracelens: {enabled: true, num_steps: 4}
EOF
FAKE_ENGINE_STEPPED=1 FAKE_ENGINE_STEP_MS=100 run stages "$W/stages.yaml"
R=$WS/benchmark_report.json
check "stages: exit 0" '[ "$RC" = 0 ]'
check "stages: 2 of 2 taken" '[ "$(capq "c[\"taken\"]")" = 2 ]'
check "stages: no TraceLens window flags beside the capture bound" \
    '! jq_ "$R" "r[\"magpie\"][\"engine\"][\"command\"]" | grep -q delay_iterations'
for k in 1 2; do
    d=$(printf 'profile_%03d' $k)
    check "stages capture $k: three stages picked" \
        '[ "$(capq "\",\".join(sorted(c[\"profiles\"][$k - 1][\"tracelens_analysis\"][\"stage_results\"]))")" = \
           decode,prefill,prefilldecode ]'
    for s in prefilldecode decode_only prefill_only; do
        check "stages capture $k: $s report" '[ -d "$WS/captures/$d/tracelens/$s" ]'
    done
    check "stages capture $k: its own split" '[ -d "$WS/torch_trace/$d/trace_split" ]'
done
check "stages: the top-level tracelens_analysis is capture 1's" \
    '[ "$(jq_ "$R" "len(r[\"tracelens_analysis\"][\"stage_results\"])")" = 3 ]'
check "stages: no errors" '[ "$(jq_ "$R" "r[\"errors\"]")" = "[]" ]'

# the engine exits in the middle of a capture: the run ends (exit 1) with
# the capture's error, instead of waiting out the flush timeout
cat >"$W/die.yaml" <<EOF
benchmark:
  framework: vllm
  model: fake-model
  run_mode: local
  envs: {CONC: 4, NUM_WARMUPS: 0}
  agentx: {enabled: true, trace_file: $W/agent.jsonl}
  profiler:
    torch_profiler: {enabled: true, num_profiles: 2, start_seconds: 0.2, duration_seconds: 600}
EOF
FAKE_ENGINE_MAX_S=6 run die "$W/die.yaml"
R=$WS/benchmark_report.json
check "die: exit 1 (not the 200 s guard)" '[ "$RC" = 1 ]'
check "die: the engine's exit reported" 'jq_ "$R" "r[\"errors\"]" | grep -q "engine exited"'
check "die: the capture's stop failed, said so" 'jq_ "$R" "r[\"errors\"]" | grep -q "POST /stop_profile failed"'
check "die: 1 of 2 taken" '[ "$(capq "c[\"taken\"]")" = 1 ]'
check "die: no engine process left" '[ "$(orphans)" = 0 ]'

# a first capture due after the load has ended: none taken, the run fails
sed -e 's/start_seconds: 0.5/start_seconds: 600/' -e 's/num_profiles: 3/num_profiles: 2/' \
    -e "s|agent.jsonl|short.jsonl|" "$W/agentx.yaml" >"$W/late.yaml"
head -4 "$W/agent.jsonl" >"$W/short.jsonl"
FAKE_ENGINE_PROFLOG=$W/late.log run late "$W/late.yaml"
R=$WS/benchmark_report.json
check "late: exit 1" '[ "$RC" = 1 ]'
check "late: 0 of 2 taken, said so" 'jq_ "$R" "r[\"errors\"]" | grep -q "0 of 2 taken"'
check "late: the profiler never started" '[ ! -s "$W/late.log" ]'
check "late: the load itself measured" '[ "$(jq_ "$R" "r[\"throughput\"][\"completed_requests\"]")" = 4 ]'

# the CLI flags --agentx, --agentx-mode, --agentx-trace-file (the YAML's
# agentx keys): an ad-hoc run replays the trace on its schedule, unprofiled
# (Magpie's AgentX default), fast mode diagnostic
head -8 "$W/agent.jsonl" >"$W/cli.jsonl"
FAKE_ENGINE_PROFLOG=$W/cli.log PORT=$(free_port) timeout 200 "$MAGPIE" benchmark vllm \
    --model fake-model --run-mode local --agentx --agentx-mode fast \
    --agentx-trace-file "$W/cli.jsonl" --concurrency 2 --env NUM_WARMUPS=0 -o "$W/cli" -q \
    >"$W/cli.out" 2>"$W/cli.err"
RC=$?
WS=$(ls -d "$W/cli"/benchmark_vllm_* 2>/dev/null | tail -1)
R=$WS/benchmark_report.json
check "cli --agentx: exit 0" '[ "$RC" = 0 ]'
check "cli --agentx: the trace's 8 requests, on its schedule, as mooncake" \
    '[ "$(jq_ "$WS/inferencex_result.json" "r[\"completed\"], r[\"magpie\"][\"fixed_schedule\"], r[\"magpie\"][\"dataset\"]")" = "8 True mooncake" ]'
check "cli --agentx-mode fast: diagnostic" '[ "$(jq_ "$R" "r[\"run_kind\"]")" = diagnostic ]'
check "cli --agentx: unprofiled (no profiler call)" '[ ! -s "$W/cli.log" ]'
check "cli --agentx: config.yaml records agentx" 'grep -q "trace_file: " "$WS/config.yaml"'
# over a YAML that says nothing of the profiler (vLLM's default: on): the
# flag makes it an AgentX run, so unprofiled as Magpie's
printf 'benchmark:\n  framework: vllm\n  model: fake-model\n  run_mode: local\n  envs: {CONC: 2, NUM_WARMUPS: 0}\n' \
    >"$W/plain.yaml"
FAKE_ENGINE_PROFLOG=$W/cli2.log PORT=$(free_port) timeout 200 "$MAGPIE" benchmark -b "$W/plain.yaml" \
    --agentx --agentx-trace-file "$W/cli.jsonl" -o "$W/cli2" -q >"$W/cli2.out" 2>"$W/cli2.err"
RC=$?
WS=$(ls -d "$W/cli2"/benchmark_vllm_* 2>/dev/null | tail -1)
check "cli -b + --agentx: exit 0, 8 completed, as mooncake" \
    '[ "$RC" = 0 ] && [ "$(jq_ "$WS/inferencex_result.json" "r[\"completed\"], r[\"magpie\"][\"dataset\"]")" = "8 mooncake" ]'
check "cli -b + --agentx: the YAML's profiler default gives way (no profiler call)" '[ ! -s "$W/cli2.log" ]'
# the MCP benchmark tool: agentx: true with its mode and trace, and the flat
# torch_profiler_* schedule (Magpie's tool arguments)
FAKE_ENGINE_PROFLOG=$W/mcp.log timeout 200 python3 - "$MAGPIE" "$W" "$(free_port)" <<'PY' >"$W/mcp.out" 2>&1
import json, subprocess, sys
magpie, w, port = sys.argv[1:4]
p = subprocess.Popen([magpie, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
def send(m):
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()
send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
      "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
p.stdout.readline()
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "benchmark", "arguments": {
    "framework": "vllm", "model": "fake-model", "run_mode": "local", "concurrency": 2,
    "agentx": True, "agentx_mode": "fast", "agentx_trace_file": w + "/cli.jsonl",
    "torch_profiler": True, "torch_profiler_count": 1, "torch_profiler_steps": 5,
    "torch_profiler_start_seconds": 0, "output_dir": w + "/mcp",
    "extra_envs": {"NUM_WARMUPS": 0, "PORT": int(port)}}}})
while True:
    m = json.loads(p.stdout.readline())
    if m.get("id") == 1:
        break
p.stdin.close()
p.wait(timeout=60)
r = m["result"]
r = r.get("structuredContent") or json.loads(r["content"][0]["text"])
print(json.dumps({"success": r.get("success"), "workspace_dir": r.get("workspace_dir"), "errors": r.get("errors")}))
PY
MWS=$(python3 -c "import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])['workspace_dir'])" "$W/mcp.out" 2>/dev/null)
check "mcp agentx: true: success" 'grep -q "\"success\": true" "$W/mcp.out"'
check "mcp agentx: the trace replayed (8 requests, mooncake, on its schedule)" \
    '[ "$(jq_ "$MWS/inferencex_result.json" "r[\"completed\"], r[\"magpie\"][\"dataset\"], r[\"magpie\"][\"fixed_schedule\"]")" = "8 mooncake True" ]'
check "mcp agentx_mode fast: diagnostic" '[ "$(jq_ "$MWS/benchmark_report.json" "r[\"run_kind\"]")" = diagnostic ]'
check "mcp torch_profiler_count 1: 1 capture taken, its capture.json" \
    '[ "$(jq_ "$MWS/benchmark_report.json" "r[\"magpie\"][\"captures\"][\"taken\"]")" = 1 ] && [ -s "$MWS/captures/profile_001/capture.json" ]'
badflag() { # LABEL FIELD ARGS...
    local label=$1 field=$2
    shift 2
    "$MAGPIE" benchmark vllm --model fake-model --run-mode local "$@" -o "$W/bad" -q \
        >/dev/null 2>"$W/flag_$label.err"
    local rc=$?
    check "bad flag $label: exit 2, names $field" '[ "$rc" = 2 ] && grep -q -- "$field" "$W/flag_$label.err"'
}
badflag mode agentx-mode --agentx --agentx-mode slow --agentx-trace-file "$W/cli.jsonl"
badflag missing agentx-trace-file --agentx --agentx-trace-file "$W/missing.jsonl"
badflag notrace agentx.trace_file --agentx
badflag without "add --agentx" --agentx-mode fast

# bad keys: exit 2, file:line:col and the field
bad() { # LABEL FIELD YAML-LINES...
    local label=$1 field=$2
    shift 2
    printf 'benchmark:\n  framework: vllm\n  model: fake-model\n  run_mode: local\n' >"$W/$label.yaml"
    printf '%s\n' "$@" >>"$W/$label.yaml"
    "$MAGPIE" benchmark -b "$W/$label.yaml" -o "$W/bad" -q >/dev/null 2>"$W/$label.err"
    local rc=$?
    check "bad $label: exit 2" '[ "$rc" = 2 ]'
    check "bad $label: names $field at file:line:col" \
        'grep -q "$label.yaml:[0-9]*:[0-9]*" "$W/$label.err" && grep -q -- "$field" "$W/$label.err"'
}
bad profiles num_profiles '  profiler:' '    torch_profiler: {enabled: true, num_profiles: 0}'
bad interval interval_seconds '  profiler:' '    torch_profiler: {interval_seconds: -1}'
bad steps torch_profiler_steps '  torch_profiler_steps: many'
bad twice torch_profiler_count '  torch_profiler_count: 2' '  profiler:' \
    '    torch_profiler: {num_profiles: 3}'
bad mode agentx.mode '  agentx: {enabled: true, mode: slow, trace_file: /dev/null}'
bad notrace agentx.trace_file '  agentx: {enabled: true}'
bad nofile agentx.trace_file "  agentx: {enabled: true, trace_file: $W/missing.jsonl}"
bad duration duration_seconds '  profiler:' '    torch_profiler: {duration_seconds: 0}'
check "bad: nothing was run" '[ ! -d "$W/bad" ] || [ -z "$(ls "$W/bad")" ]'

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
