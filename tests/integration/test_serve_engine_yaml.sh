#!/bin/bash
# An engine magpie does not know, declared in the benchmark YAML's
# `engine:` section only (command template, health path, version command,
# profiler endpoints and args, env, stop signal): a real server process on
# loopback (tests/tools/fake_engine.py, an OpenAI-compatible streaming
# server) started from the template, waited for on the declared health
# path, driven, profiled through the declared endpoints, stopped with the
# declared signal, and reported (workspace, report, gap analysis of its
# traces, config.yaml that reads back). Bad sections exit 2 naming
# file:line:col and the field. Bounded counts; each run under 60 s.
set -u
MAGPIE=${MAGPIE:?} MP_SRC=${MP_SRC:?}
W=$(mktemp -d /tmp/mp_engine_yaml.XXXXXX)
TAG="ey$$"
pass=0 fail=0
cleanup() { rm -rf "$W"; }
trap cleanup EXIT

ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }
check() { if eval "$2"; then ok "$1"; else ko "$1"; fi; }

if ! command -v python3 >/dev/null; then
    echo "SKIPPED: python3 not found (the stand-in engine needs it)"
    echo "0 passed, 0 failed"
    exit 0
fi
export FAKE_ENGINE_TAG="$TAG" FAKE_ENGINE_MAX_S=90 FAKE_ENGINE_SIGLOG="$W/siglog"
free_port() { python3 "$MP_SRC/tests/tools/free_port.py"; }
orphans() { pgrep -f "fake-engine-core-$TAG" | wc -l; }
jq_() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# run LABEL YAML: leaves RC, WS (workspace)
run() {
    PORT=$(free_port) timeout 120 "$MAGPIE" benchmark -b "$2" -o "$W/$1" -q \
        >"$W/$1.out" 2>"$W/$1.err"
    RC=$?
    WS=$(ls -d "$W/$1"/benchmark_fakesrv_* 2>/dev/null | tail -1)
}

# yaml PROFILED: the benchmark YAML with the engine section
yaml() {
    cat <<EOF
benchmark:
  model: fake-model
  run_mode: local
  envs:
    CONC: 2
    ISL: 16
    OSL: 8
    NUM_PROMPTS: 6
    NUM_WARMUPS: 1
  profiler:
    torch_profiler:
      enabled: $1
  engine:
    name: fakesrv
    label: Fake server
    command: "python3 $MP_SRC/tests/tools/fake_engine.py serve {model} --host {host} --port {port}"
    health_path: /health
    models_path: /v1/models
    version_command: "echo 9.9.9-yaml"
    stop_signal: SIGTERM
    extra_args_env: EXTRA_FAKE_ARGS
    env:
      FAKE_ENGINE_TTFT_MS: 2
    profiler:
      start: /start_profile
      stop: /stop_profile
      args: "--torch-profiler-dir {trace_dir}"
EOF
}

# --- unprofiled: lifecycle and report ---
yaml false >"$W/plain.yaml"
run plain "$W/plain.yaml"
R=$WS/benchmark_report.json
check "plain: exit 0" '[ "$RC" = 0 ]'
check "plain: workspace named after the engine" '[ -n "$WS" ] && [ -s "$R" ]'
check "plain: all requests completed" \
    '[ "$(jq_ "$R" "r[\"throughput\"][\"completed_requests\"]")" = 6 ]'
check "plain: engine named in the report" \
    '[ "$(jq_ "$R" "r[\"magpie\"][\"engine\"][\"framework\"]")" = fakesrv ]'
check "plain: argv from the template" \
    'jq_ "$R" "r[\"magpie\"][\"engine\"][\"command\"]" | grep -q "fake_engine.py serve fake-model --host 127.0.0.1 --port [0-9]*$"'
check "plain: engine env applied" 'grep -q "FAKE_ENGINE_TTFT_MS" "$WS/config.yaml"'
check "plain: stopped with its SIGTERM, main process first" 'grep -q "^main TERM from magpie" "$W/siglog"'
check "plain: no engine process left" '[ "$(orphans)" = 0 ]'
check "plain: config.yaml keeps the engine" 'grep -q "^  engine:" "$WS/config.yaml" && grep -q "name: \"\?fakesrv" "$WS/config.yaml"'

# the workspace's config.yaml runs the same engine again
run again "$WS/config.yaml"
check "config.yaml: runs again, exit 0" '[ "$RC" = 0 ] && [ -n "$WS" ]'

# the engine's own EXTRA_*_ARGS from the environment end its argv
EXTRA_FAKE_ARGS="--dtype bfloat16" run extra "$W/plain.yaml"
check "EXTRA_FAKE_ARGS from the environment: exit 0, ends the argv" \
    '[ "$RC" = 0 ] && jq_ "$WS/benchmark_report.json" "r[\"magpie\"][\"engine\"][\"command\"]" | grep -q -- "--port [0-9]* --dtype bfloat16$"'
# a framework word beside a declared engine is a usage error
PORT=$(free_port) timeout 60 "$MAGPIE" benchmark vllm -b "$W/plain.yaml" -o "$W/word" -q \
    >"$W/word.out" 2>"$W/word.err"
RC=$?
check "framework word with a declared engine: exit 2" \
    '[ "$RC" = 2 ] && grep -q "leave out the framework word" "$W/word.err"'

# --- profiled through the declared endpoints and args ---
yaml true >"$W/prof.yaml"
run prof "$W/prof.yaml"
R=$WS/benchmark_report.json
check "prof: exit 0" '[ "$RC" = 0 ]'
check "prof: profiler args from the template" \
    'jq_ "$R" "r[\"magpie\"][\"engine\"][\"command\"]" | grep -q -- "--torch-profiler-dir $WS/torch_trace$"'
check "prof: trace collected" 'ls "$WS"/torch_trace/*.pt.trace.json.gz >/dev/null 2>&1'
check "prof: gap analysis of its trace" 'head -1 "$WS/gap_analysis/gap_analysis.csv" | grep -q "^Name,Calls"'
check "prof: no engine process left" '[ "$(orphans)" = 0 ]'

# --- errors: file:line:col and the field, exit 2, nothing launched ---
yaml false | sed 's/{port}"$/{prot}"/' >"$W/badtpl.yaml"
run badtpl "$W/badtpl.yaml"
check "bad placeholder: exit 2" '[ "$RC" = 2 ]'
check "bad placeholder: file:line:col" 'grep -q "badtpl.yaml:16:14" "$W/badtpl.err"'
check "bad placeholder: names it" 'grep -q "{prot}" "$W/badtpl.err"'
check "bad placeholder: nothing created" '[ -z "$WS" ]'
yaml false | sed 's/health_path: \/health/health_path: health/' >"$W/badpath.yaml"
run badpath "$W/badpath.yaml"
check "bad health path: exit 2 at 17:18" '[ "$RC" = 2 ] && grep -q "badpath.yaml:17:18" "$W/badpath.err"'
yaml false | sed 's/^    name: fakesrv/    name: vllm/' >"$W/builtin.yaml"
run builtin "$W/builtin.yaml"
check "built-in name: exit 2" '[ "$RC" = 2 ] && grep -q "built-in" "$W/builtin.err"'

# --- prefix_cache / --prefix-cache (argv goldens: tests/unit/serve/test_argv.c) ---
check "prefix_cache recorded: default" \
    '[ "$(jq_ "$W"/extra/benchmark_fakesrv_*/benchmark_report.json "r[\"magpie\"][\"engine\"][\"prefix_cache\"]")" = default ]'
pc() { # pc LABEL ARGS...: magpie benchmark ARGS, leaves RC
    local l=$1
    shift
    PORT=$(free_port) timeout 60 "$MAGPIE" benchmark "$@" -o "$W/$l" -q >"$W/$l.out" 2>"$W/$l.err"
    RC=$?
}
pc pcdecl -b "$W/plain.yaml" --prefix-cache on
check "prefix-cache on, declared engine: exit 2, no known flag" \
    '[ "$RC" = 2 ] && grep -q "no prefix-cache flag of Fake server" "$W/pcdecl.err" && [ ! -d "$W/pcdecl" ]'
pc pcsgl sglang -m m --run-mode local --prefix-cache on --env EXTRA_SGLANG_ARGS=--disable-radix-cache
check "prefix-cache on with EXTRA_SGLANG_ARGS --disable-radix-cache: exit 2" \
    '[ "$RC" = 2 ] && grep -q "contradicts --disable-radix-cache" "$W/pcsgl.err" && [ ! -d "$W/pcsgl" ]'
pc pcbad sglang -m m --run-mode local --prefix-cache maybe
check "--prefix-cache maybe: exit 2" '[ "$RC" = 2 ] && grep -q "default, on or off" "$W/pcbad.err"'
printf 'benchmark:\n  framework: sglang\n  model: m\n  run_mode: local\n  prefix_cache: maybe\n' >"$W/pc.yaml"
pc pcyaml -b "$W/pc.yaml"
check "prefix_cache: maybe: exit 2 at file:line:col" \
    '[ "$RC" = 2 ] && grep -q "pc.yaml:5:17" "$W/pcyaml.err" && grep -q "prefix_cache" "$W/pcyaml.err"'

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
