#!/bin/bash
# `magpie benchmark vllm ... --run-mode local` end to end against a real
# server process on loopback: tests/tools/fake_engine.py, put on PATH as
# `vllm`, so magpie launches it with the command line it builds for vLLM.
# Checks the workspace and report, the profiled path (start/stop_profile,
# traces -> kernel summary + gap analysis), the benchmark YAML, client-only
# mode, and the faults: the engine exits at start, never gets ready, is
# killed mid-run (partial report, exit 1 in time, no process left behind),
# stalls, and a port already taken; a docker image that docker would read as
# an option refused. Bounded counts; each run under 60 s.
set -u
MAGPIE=${MAGPIE:?} MP_SRC=${MP_SRC:?}
W=$(mktemp -d /tmp/mp_serve_it.XXXXXX)
TAG="t$$"
EXTRA_PIDS=()
pass=0 fail=0
cleanup() {
    for p in "${EXTRA_PIDS[@]}"; do kill -- "$p" 2>/dev/null; done
    # a persistent server a failed reuse check left behind: its recorded group
    for f in "$W"/state/*.json; do
        [ -f "$f" ] && kill -- "-$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['server_pgid'])" "$f")" 2>/dev/null
    done
    rm -rf "$W"
}
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
export PATH="$W/bin:$PATH" FAKE_ENGINE_TAG="$TAG" FAKE_ENGINE_MAX_S=90
free_port() { python3 "$MP_SRC/tests/tools/free_port.py"; } # outside the ephemeral range, claimed
orphans() { pgrep -f "fake-engine-core-$TAG" | wc -l; }
report() { ls -d "$1"/benchmark_vllm_* 2>/dev/null | tail -1; }
# GET a URL, true on HTTP 200 (python3 rather than curl: one tool fewer for CI)
healthy() {
    python3 -c "import sys,urllib.request as u; sys.exit(u.urlopen(sys.argv[1], timeout=2).status != 200)" \
        "$1" 2>/dev/null
}
jq_() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }

# run LABEL [magpie args...]: leaves RC, ELAPSED, WS (workspace)
run() {
    local label=$1
    shift
    local t0 t1
    t0=$(date +%s.%N)
    PORT=$(free_port) timeout 120 "$MAGPIE" benchmark "$@" -o "$W/$label" -q \
        >"$W/$label.out" 2>"$W/$label.err"
    RC=$?
    t1=$(date +%s.%N)
    ELAPSED=$(python3 -c "print(round($t1 - $t0, 1))")
    WS=$(report "$W/$label")
}

ADHOC=(vllm --model fake-model --run-mode local --concurrency 4 --input-len 32 --output-len 16)

# --- a normal run ---
run basic "${ADHOC[@]}" --num-prompts 20
check "basic: exit 0" '[ "$RC" = 0 ]'
for f in benchmark_report.json summary.txt config.yaml server.log inferencex_result.json \
    inferencex_result.requests.jsonl torch_trace system_profile; do
    check "basic: workspace has $f" '[ -e "$WS/$f" ]'
done
check "basic: workspace name" '[[ "$(basename "$WS")" =~ ^benchmark_vllm_[0-9]{8}_[0-9]{6}$ ]]'
R=$WS/benchmark_report.json
check "basic: success" '[ "$(jq_ "$R" "r[\"success\"]")" = True ]'
check "basic: 20 completed" '[ "$(jq_ "$R" "r[\"throughput\"][\"completed_requests\"]")" = 20 ]'
check "basic: Magpie keys in order" '[ "$(jq_ "$R" "\",\".join(list(r)[:6])")" = \
    "success,framework,model,throughput,latency,kernel_summary" ]'
check "basic: measurement run" '[ "$(jq_ "$R" "r[\"run_kind\"], r[\"reward_eligible\"]")" = \
    "measurement True" ]'
check "basic: latency has 4 metrics" '[ "$(jq_ "$R" "\",\".join(sorted(r[\"latency\"]))")" = \
    "e2el,itl,tpot,ttft" ]'
check "basic: engine version recorded" \
    '[ "$(jq_ "$R" "r[\"magpie\"][\"engine\"][\"version\"]")" = 0.0.1-fake ]'
check "basic: engine argv is vLLM's" \
    'jq_ "$R" "r[\"magpie\"][\"engine\"][\"command\"]" | grep -q "^vllm serve fake-model --host 127.0.0.1 --port [0-9]* --tensor-parallel-size=1 --gpu-memory-utilization 0.95 --max-model-len 4096 --trust-remote-code$"'
check "basic: summary printed" 'grep -q "Status: SUCCESS" "$W/basic.out"'
check "basic: no engine process left" '[ "$(orphans)" = 0 ]'
check "basic: config.yaml has envs" 'grep -q "CONC: \"4\"" "$WS/config.yaml"'
check "basic: engine bound to loopback only" 'grep -q "^fake-engine: listening on 127.0.0.1:" "$WS/server.log"'
check "basic: torch version key" 'jq_ "$R" "\"torch_version\" in r[\"magpie\"][\"engine\"]" | grep -q True'

# --- stopping: SIGTERM to the engine's main process alone, which stops its
# own child (as vLLM and SGLang do); the group only when something is left
# after engine_stop_drain_seconds, SIGKILL after engine_stop_grace_seconds.
# The stand-in records who sent each SIGTERM (by the sender's pid). ---
# The waits are generous where the expected path does not run into them (a
# stand-in that exits at once is not held up by a long drain or grace), and
# short only where the test waits for them to expire, so that the order of
# signals checked below does not depend on how loaded the machine is.
stop_yaml() { # FILE DRAIN GRACE
    cat >"$1" <<EOF
benchmark:
  framework: vllm
  model: fake-model
  run_mode: local
  envs: {CONC: 2, ISL: 16, OSL: 8, NUM_PROMPTS: 4, NUM_WARMUPS: 0}
  profiler: {torch_profiler: {enabled: false}}
  engine_stop_drain_seconds: $2
  engine_stop_grace_seconds: $3
EOF
}
stop_yaml "$W/stop.yaml" 120 120  # the engine stops itself: neither wait expires
stop_yaml "$W/leave.yaml" 2 120   # the drain expires; the left child obeys the group's SIGTERM
stop_yaml "$W/ignore.yaml" 2 20   # both expire; 20 s for the child to log its SIGTERM first
stop_() { jq_ "$R" "r[\"magpie\"][\"engine\"][\"stop\"]$1"; }
FAKE_ENGINE_SIGLOG=$W/sig.stop run stop -b "$W/stop.yaml"
R=$WS/benchmark_report.json
check "stop: exit 0" '[ "$RC" = 0 ]'
check "stop: main process signalled by magpie, its child by the main process, not by magpie" \
    '[ "$(tr "\n" , <"$W/sig.stop")" = "main TERM from magpie,core TERM from main," ]'
check "stop: recorded, no group signal, no SIGKILL" \
    '[ "$(stop_ "[\"main_signalled\"]") $(stop_ "[\"group_signalled\"]") $(stop_ "[\"killed\"]")" = "True False False" ]'
check "stop: engine exited by itself" '[ "$(jq_ "$R" "r[\"magpie\"][\"engine\"][\"exit\"]")" = "exited with status 0" ]'
check "stop: nothing left" '[ "$(orphans)" = 0 ]'
# the main process exits and leaves its child: the group gets SIGTERM after the drain
FAKE_ENGINE_STOP=leave_child FAKE_ENGINE_SIGLOG=$W/sig.leave run leave -b "$W/leave.yaml"
R=$WS/benchmark_report.json
check "stop, child left: main first, then the group" \
    '[ "$(tr "\n" , <"$W/sig.leave")" = "main TERM from magpie,core TERM from magpie," ]'
check "stop, child left: group signalled, no SIGKILL" \
    '[ "$(stop_ "[\"group_signalled\"]") $(stop_ "[\"killed\"]")" = "True False" ]'
check "stop, child left: nothing left" '[ "$(orphans)" = 0 ]'
# the main process ignores SIGTERM: the group's SIGTERM after the drain, SIGKILL after the grace
FAKE_ENGINE_STOP=ignore FAKE_ENGINE_SIGLOG=$W/sig.ignore run ignore -b "$W/ignore.yaml"
R=$WS/benchmark_report.json
check "stop, main hangs: exit 0 (the measurement stands)" '[ "$RC" = 0 ]'
check "stop, main hangs: main, then the group (main again and its child), then SIGKILL" \
    '[ "$(sort "$W/sig.ignore" | tr "\n" ,)" = "core TERM from magpie,main TERM from magpie,main TERM from magpie," ] &&
     [ "$(stop_ "[\"group_signalled\"]") $(stop_ "[\"killed\"]")" = "True True" ]'
check "stop, main hangs: exit recorded as SIGKILL" \
    'jq_ "$R" "r[\"magpie\"][\"engine\"][\"exit\"]" | grep -q "killed by signal 9"'
check "stop, main hangs: nothing left" '[ "$(orphans)" = 0 ]'

# --- profiled: /start_profile + /stop_profile, traces post-processed ---
run prof "${ADHOC[@]}" --num-prompts 8 --torch-profiler
R=$WS/benchmark_report.json
check "prof: exit 0" '[ "$RC" = 0 ]'
check "prof: diagnostic run" '[ "$(jq_ "$R" "r[\"run_kind\"], r[\"reward_eligible\"]")" = \
    "diagnostic False" ]'
check "prof: trace collected" 'ls "$WS"/torch_trace/*.pt.trace.json.gz >/dev/null 2>&1'
check "prof: kernel summary" '[ "$(jq_ "$R" "r[\"top_bottlenecks\"][0]")" = ampere_bf16_gemm_128x64 ]'
check "prof: gap analysis json" '[ "$(jq_ "$R" "r[\"gap_analysis\"][\"top_kernels\"][0][\"calls\"]")" = 20 ]'
check "prof: gap_analysis.csv" 'head -1 "$WS/gap_analysis/gap_analysis.csv" | grep -q "^Name,Calls"'
check "prof: profiler flags passed" \
    'jq_ "$R" "r[\"magpie\"][\"engine\"][\"command\"]" | grep -q -- "--profiler-config.torch_profiler_dir $WS/torch_trace"'
check "prof: no engine process left" '[ "$(orphans)" = 0 ]'

# --- TraceLens inference mode on a recorded H200 vLLM trace (shared data):
# the engine writes it on /stop_profile, magpie splits it into stages ---
H200=${MP_SHARED:-}/data/traces/h200/mixtral_shape_l8_bs16_p256_d12.json.gz
if [ -f "$H200" ]; then
    cat >"$W/tl.yaml" <<EOF
benchmark:
  framework: vllm
  model: fake-model
  run_mode: local
  envs: {CONC: 4, ISL: 32, OSL: 16, NUM_PROMPTS: 8, NUM_WARMUPS: 0}
  profiler:
    tracelens: {enabled: true, num_steps: 8}
EOF
    FAKE_ENGINE_TRACE=$H200 run tracelens -b "$W/tl.yaml"
    R=$WS/benchmark_report.json
    check "tracelens: exit 0" '[ "$RC" = 0 ]'
    check "tracelens: step annotations asked of vLLM" \
        'jq_ "$R" "r[\"magpie\"][\"engine\"][\"command\"]" | grep -q -- "--profiler-config.detailed_trace_annotation True --profiler-config.delay_iterations 0 --profiler-config.max_iterations 256"'
    check "tracelens: stages analysed" \
        '[ "$(jq_ "$R" "sorted(r[\"tracelens_analysis\"][\"stage_results\"])")" != "[]" ]'
    check "tracelens: stage reports written" 'ls "$WS"/tracelens/*_kernel_roofline_simple.csv >/dev/null 2>&1'
    check "tracelens: kernel summary of the H200 trace" '[ "$(jq_ "$R" "len(r[\"kernel_summary\"]) > 0")" = True ]'
    check "tracelens: errors" '[ "$(jq_ "$R" "r[\"errors\"]")" = "[]" ]'
    check "tracelens: summary lists the outputs" 'grep -q "TraceLens (inference): [1-9][0-9]* output file" "$W/tracelens.out"'
else
    echo "SKIPPED tracelens: shared H200 trace not found"
fi

# --- TraceLens pytorch mode on two real H200 TP2 rank traces (NCCL
# all-reduces; shared data): the engine writes both on /stop_profile, magpie
# writes the rank-0 standard report and the multi-rank collective report
# where Magpie does, each compared with TraceLens's own CSVs of those traces ---
TP2=${MP_SHARED:-}/data/traces/h200-tp2
if [ -d "$TP2/torch_trace" ] && [ -d "$TP2/tracelens_rank0" ] && [ -d "$TP2/tracelens_collective" ]; then
    cat >"$W/tlpt.yaml" <<EOF
benchmark:
  framework: vllm
  model: fake-model
  run_mode: local
  envs: {TP: 2, CONC: 4, ISL: 32, OSL: 16, NUM_PROMPTS: 8, NUM_WARMUPS: 0}
  profiler:
    tracelens: {enabled: true, analysis_mode: pytorch}
EOF
    TP2_TRACES="$TP2/torch_trace/tp2-rank-0.1796011317.pt.trace.json.gz:$TP2/torch_trace/tp2-rank-1.1796011317.pt.trace.json.gz"
    FAKE_ENGINE_TRACE=$TP2_TRACES run tlpt -b "$W/tlpt.yaml"
    R=$WS/benchmark_report.json
    tl_() { jq_ "$R" "r[\"tracelens_analysis\"]$1"; }
    check "tl pytorch: exit 0" '[ "$RC" = 0 ]'
    check "tl pytorch: no inference preprocessing asked of vLLM" \
        '! jq_ "$R" "r[\"magpie\"][\"engine\"][\"command\"]" | grep -q -- "detailed_trace_annotation"'
    check "tl pytorch: keys" '[ "$(jq_ "$R" "\",\".join(r[\"tracelens_analysis\"])")" = \
        "enabled,analysis_mode,trace_dir,num_ranks,export_format,rank0_trace,output_files,errors,warnings" ]'
    check "tl pytorch: mode, ranks, format" \
        '[ "$(tl_ "[\"analysis_mode\"]") $(tl_ "[\"num_ranks\"]") $(tl_ "[\"export_format\"]")" = "pytorch 2 csv" ]'
    check "tl pytorch: no errors" '[ "$(tl_ "[\"errors\"]") $(jq_ "$R" "r[\"errors\"]")" = "[] []" ]'
    check "tl pytorch: rank 0 reported" 'tl_ "[\"rank0_trace\"]" | grep -q -- "-rank-0\.[0-9]*\.pt\.trace\.json\.gz$"'
    check "tl pytorch: output_files are the CSVs written" '[ "$(tl_ "[\"output_files\"].__len__()")" = \
        "$(ls "$WS"/tracelens_rank0_csvs/*.csv "$WS"/tracelens_collective_csvs/*.csv | wc -l)" ]'
    # TraceLens's rank-0 report was made with --short_kernel_study, which Magpie does not pass
    check "tl pytorch: rank-0 CSVs are TraceLens's without the short-kernel study" \
        '[ "$(cd "$TP2/tracelens_rank0" && ls ./*.csv | grep -v short_kernel)" = "$(cd "$WS/tracelens_rank0_csvs" && ls ./*.csv)" ]'
    check "tl pytorch: rank-0 sheets match TraceLens" \
        'python3 "$MP_SRC/tests/tools/tl_compare.py" "$TP2/tracelens_rank0" "$WS/tracelens_rank0_csvs" \
            gpu_timeline ops_summary_by_category ops_summary ops_unique_args unified_perf_summary \
            GEMM SDPA_fwd UnaryElementwise BinaryElementwise Reduce_fwd kernel_summary coll_analysis \
            >"$W/tlpt.rank0.cmp" 2>&1 || { cat "$W/tlpt.rank0.cmp"; false; }'
    check "tl pytorch: collective CSVs are TraceLens's" \
        '[ "$(cd "$TP2/tracelens_collective" && ls ./*.csv)" = "$(cd "$WS/tracelens_collective_csvs" && ls ./*.csv)" ]'
    check "tl pytorch: collective sheets match TraceLens" \
        'python3 "$MP_SRC/tests/tools/tl_compare.py" "$TP2/tracelens_collective" "$WS/tracelens_collective_csvs" \
            nccl_long nccl_summary_long nccl_implicit_sync nccl_summary_implicit_sync straggler_summary \
            >"$W/tlpt.coll.cmp" 2>&1 || { cat "$W/tlpt.coll.cmp"; false; }'
    check "tl pytorch: summary lists the outputs" 'grep -q "TraceLens (pytorch): [1-9][0-9]* output file" "$W/tlpt.out"'
    check "tl pytorch: config.yaml keeps the mode" 'grep -q "analysis_mode: pytorch" "$WS/config.yaml"'

    # excel export ("classic", Magpie's alias), TP=4 with two traces: the
    # rank-0 workbook; the collective report skipped with a warning (Magpie
    # runs it only with at least TP trace files)
    sed -e 's/TP: 2/TP: 4/' -e 's/analysis_mode: pytorch}/analysis_mode: classic, export_format: excel}/' \
        "$W/tlpt.yaml" >"$W/tlxl.yaml"
    FAKE_ENGINE_TRACE=$TP2_TRACES run tlxl -b "$W/tlxl.yaml"
    R=$WS/benchmark_report.json
    check "tl excel: exit 0" '[ "$RC" = 0 ]'
    check "tl excel: rank-0 workbook only" '[ -s "$WS/tracelens_rank0_report.xlsx" ] && [ ! -e "$WS/tracelens_rank0_csvs" ]'
    check "tl excel: collective skipped with a warning" '[ ! -e "$WS/tracelens_collective_report.xlsx" ] &&
        tl_ "[\"warnings\"][0]" | grep -q "2 trace file(s) for TP=4"'
    check "tl excel: output_files" '[ "$(tl_ "[\"output_files\"][0].rsplit(\"/\", 1)[1]") $(tl_ "[\"export_format\"]")" = \
        "tracelens_rank0_report.xlsx excel" ]'
else
    echo "SKIPPED tracelens pytorch: shared H200 TP2 traces not found"
fi

# --- on an "NVIDIA" machine (nvidia-smi stand-in): GPU picked, monitor sampled ---
mkdir -p "$W/gpubin"
ln -s "$MP_SRC/tests/tools/nvidia-smi-sim" "$W/gpubin/nvidia-smi"
PATH="$W/gpubin:$PATH" MAGPIE_NO_NVML=1 run gpu "${ADHOC[@]}" --num-prompts 8 --env NUM_WARMUPS=0 \
    --env FAKE_DUMMY=1
R=$WS/benchmark_report.json
check "gpu: exit 0" '[ "$RC" = 0 ]'
check "gpu: idle GPU 0 picked" '[ "$(jq_ "$R" "r[\"magpie\"][\"gpu\"][\"vendor\"], r[\"magpie\"][\"gpu\"][\"visible_devices\"]")" = "NVIDIA 0" ]'
check "gpu: monitor sampled" '[ "$(jq_ "$R" "r[\"gpu_monitor\"][\"sample_count\"] >= 1, r[\"gpu_monitor\"][\"power_watts\"][\"max\"]")" = "True 109.02" ]'
check "gpu: summary has the monitor" 'grep -q "GPU monitor" "$W/gpu.out"'

# --- run mode docker, against a docker stand-in (no docker engine here):
# image resolved to its id, the engine runs "in" it, docker stop ends it ---
mkdir -p "$W/dockbin"
ln -s "$MP_SRC/tests/tools/docker-sim" "$W/dockbin/docker"
PATH="$W/dockbin:$PATH" DOCKER_SIM_LOG=$W/docker.argv DOCKER_SIM_STATE=$W/dockstate \
    run docker "${ADHOC[@]/local/docker}" --num-prompts 6 --torch-profiler \
    --docker-image vllm/vllm-openai:v0.19.1
R=$WS/benchmark_report.json
check "docker: exit 0" '[ "$RC" = 0 ]'
check "docker: image resolved to its id" \
    '[ "$(jq_ "$R" "r[\"magpie\"][\"engine\"][\"image_id\"][:7], r[\"magpie\"][\"engine\"][\"image\"]")" = "sha256: vllm/vllm-openai:v0.19.1" ]'
check "docker: run by id, port published on loopback only, workspace mounted, no --privileged" \
    'grep -q -- "-p 127.0.0.1:\([0-9]*\):\1 " "$W/docker.argv" && ! grep -q -- "--network=host" "$W/docker.argv" && grep -q -- "-v $WS:/workspace" "$W/docker.argv" &&
     grep -q -- " sha256:" "$W/docker.argv" && ! grep -q -- "--privileged" "$W/docker.argv"'
check "docker: profiler dir inside the container" 'grep -q -- "--profiler-config.torch_profiler_dir /workspace/torch_trace" "$W/docker.argv"'
check "docker: traces reached the host workspace" '[ "$(jq_ "$R" "r[\"top_bottlenecks\"][0]")" = ampere_bf16_gemm_128x64 ]'
check "docker: nothing left" '[ "$(orphans)" = 0 ]'

# --- issue 27: an image docker would read as an option is refused (exit 2,
# the field named, with file:line from a YAML) before docker is called ---
mkdir -p "$W/nodock"
printf '#!/bin/sh\ntouch "%s/docker.called"\nexit 1\n' "$W" >"$W/nodock/docker"
chmod +x "$W/nodock/docker"
PATH="$W/nodock:$PATH" run dockopt "${ADHOC[@]/local/docker}" --num-prompts 2 \
    --docker-image=--privileged
check "docker image -x: exit 2, field named" '[ "$RC" = 2 ] &&
    grep -q "field .docker_image.: an image name cannot start with .-." "$W/dockopt.err"'
cat >"$W/badimg.yaml" <<EOF
benchmark:
  framework: vllm
  model: fake-model
  run_mode: docker
  docker_image: "-v/:/host"
EOF
PATH="$W/nodock:$PATH" run badimg -b "$W/badimg.yaml"
check "yaml docker_image -x: exit 2 at its line" '[ "$RC" = 2 ] &&
    grep -q "badimg.yaml:5:17: field .docker_image.: an image name cannot start" "$W/badimg.err"'
check "docker image -x: docker never called" '[ ! -e "$W/docker.called" ]'

# --- the benchmark YAML ---
cat >"$W/bench.yaml" <<EOF
benchmark:
  framework: vllm
  model: yaml-model
  run_mode: local
  envs:
    CONC: 2
    ISL: 16
    OSL: 8
    NUM_PROMPTS: 6
    NUM_WARMUPS: 1
    EXTRA_VLLM_ARGS: "--dtype bfloat16"
  profiler:
    torch_profiler:
      enabled: false
EOF
run yaml -b "$W/bench.yaml"
R=$WS/benchmark_report.json
check "yaml: exit 0" '[ "$RC" = 0 ]'
check "yaml: model and count" '[ "$(jq_ "$R" "r[\"model\"], r[\"throughput\"][\"completed_requests\"]")" = "yaml-model 6" ]'
check "yaml: EXTRA_VLLM_ARGS reach the engine" \
    'jq_ "$R" "r[\"magpie\"][\"engine\"][\"command\"]" | grep -q -- "--dtype bfloat16$"'
printf 'benchmark:\n  framework: vllm\n  model: m\n  timeout_seconds: [1]\n' >"$W/badcfg.yaml"
run badcfg -b "$W/badcfg.yaml"
check "yaml: bad value -> exit 2" '[ "$RC" = 2 ]'
check "yaml: error names file:line:col" 'grep -q "badcfg.yaml:4:20" "$W/badcfg.err"'
check "yaml: nothing created" '[ -z "$WS" ]'

# --- server_lifecycle: the server stays, the next run attaches, a changed
# config replaces it, cleanup: true stops it ---
RP=$(free_port)
reuse_yaml() { # model cleanup
    cat <<EOF
benchmark:
  framework: vllm
  model: $1
  run_mode: local
  envs: {CONC: 2, ISL: 16, OSL: 8, NUM_PROMPTS: 4, NUM_WARMUPS: 0, PORT: $RP}
  profiler: {torch_profiler: {enabled: false}}
  server_lifecycle: {enabled: true, cleanup: $2, pid_dir: $W/state}
EOF
}
reuse_yaml m1 false >"$W/r1.yaml"
reuse_yaml m2 false >"$W/r2.yaml"
reuse_yaml m2 true >"$W/r3.yaml"
# reuse_run LABEL YAML: sets OK REUSED PID of the run's engine
reuse_run() {
    PORT=$RP timeout 60 "$MAGPIE" benchmark -b "$2" -o "$W/$1" -q >/dev/null 2>&1
    WS=$(report "$W/$1")
    read -r OK REUSED PID <<<"$(jq_ "$WS/benchmark_report.json" \
        "r[\"success\"], r[\"magpie\"][\"engine\"][\"reused\"], r[\"magpie\"][\"engine\"][\"pid\"]")"
}
reuse_run reuse1 "$W/r1.yaml"
pid1=$PID
check "reuse: first run launches" '[ "$OK $REUSED" = "True False" ]'
check "reuse: server left running, state recorded" '[ "$(orphans)" = 1 ] && [ -s "$W/state/vllm_$RP.pid" ]'
reuse_run reuse2 "$W/r1.yaml"
check "reuse: second run attaches to the same server" '[ "$OK $REUSED $PID" = "True True $pid1" ]'
reuse_run reuse3 "$W/r2.yaml"
pid3=$PID
check "reuse: changed model replaces the server" '[ "$OK $REUSED" = "True False" ] && [ "$pid3" != "$pid1" ]'
check "reuse: the old one was stopped" '! kill -0 "$pid1" 2>/dev/null && [ "$(orphans)" = 1 ]'
check "reuse: warning says why" 'jq_ "$WS/benchmark_report.json" "r[\"magpie\"][\"warnings\"]" | grep -q "model differs"'
reuse_run reuse4 "$W/r3.yaml"
check "reuse: cleanup run attaches then stops it" '[ "$OK $REUSED $PID" = "True True $pid3" ]'
check "reuse: nothing left, state removed" '[ "$(orphans)" = 0 ] && [ ! -e "$W/state/vllm_$RP.pid" ]'

# --- usage errors ---
run nomodel vllm --run-mode local
check "usage: no model -> exit 2" '[ "$RC" = 2 ]'
run badfw tgi --model m
check "usage: unknown framework -> exit 2" '[ "$RC" = 2 ] && [ -z "$WS" ]'

# --- faults ---
FAKE_ENGINE_FAULT=exit_at_start run exit_at_start "${ADHOC[@]}"
R=$WS/benchmark_report.json
check "exit-at-start: exit 1" '[ "$RC" = 1 ]'
check "exit-at-start: report says so" 'jq_ "$R" "r[\"errors\"][0]" | grep -q "engine exited before it was ready (exited with status 3)"'
check "exit-at-start: server.log lines in the error" 'jq_ "$R" "r[\"errors\"][0]" | grep -q "RuntimeError: fake engine failed to start"'
check "exit-at-start: success false" '[ "$(jq_ "$R" "r[\"success\"], r[\"throughput\"]")" = "False None" ]'

FAKE_ENGINE_FAULT=never_ready run never_ready "${ADHOC[@]}" --ready-timeout 3
R=$WS/benchmark_report.json
check "never-ready: exit 1" '[ "$RC" = 1 ]'
check "never-ready: within the limit ($ELAPSED s)" 'python3 -c "import sys; sys.exit(not $ELAPSED < 30)"'
check "never-ready: error" 'jq_ "$R" "r[\"errors\"][0]" | grep -q "engine not ready after 3 s"'
check "never-ready: no engine process left" '[ "$(orphans)" = 0 ]'

# libcurl cannot be loaded (an empty file found first by LD_LIBRARY_PATH): no
# probe could ever answer, so the run ends at once, before an engine starts
mkdir -p "$W/nocurl"
: >"$W/nocurl/libcurl.so.4"
LD_LIBRARY_PATH=$W/nocurl${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} run nocurl "${ADHOC[@]}" --ready-timeout 60
check "no libcurl: exit 1 within seconds ($ELAPSED s)" '[ "$RC" = 1 ] && python3 -c "import sys; sys.exit(not $ELAPSED < 30)"'
check "no libcurl: says what to install" 'grep -q "cannot load libcurl.so.4: .*file too short; install libcurl4" "$W/nocurl.err" &&
    grep -q "error: the HTTP client library libcurl.so.4 cannot be used.*install libcurl4 (nothing was started)" "$W/nocurl.err"'
check "no libcurl: no workspace, no engine" '[ -z "$WS" ] && [ "$(orphans)" = 0 ]'

# killed mid-run: ~12 s of load; the engine leader gets SIGKILL once it has
# completed two requests (not after a fixed time: on a loaded machine the
# client may not have finished one by then)
P=$(free_port)
t0=$(date +%s.%N)
: >"$W/killed.done"
FAKE_ENGINE_DONE_LOG=$W/killed.done FAKE_ENGINE_ITL_MS=20 PORT=$P timeout 300 "$MAGPIE" benchmark "${ADHOC[@]}" --output-len 64 \
    --num-prompts 40 --env NUM_WARMUPS=0 -o "$W/killed" -q >"$W/killed.out" 2>"$W/killed.err" &
MP=$!
for _ in $(seq 600); do
    WS=$(report "$W/killed")
    [ -n "$WS" ] && [ -s "$WS/server.pid" ] && healthy "http://127.0.0.1:$P/health" &&
        break
    sleep 0.1
done
for _ in $(seq 1200); do
    [ "$(wc -l <"$W/killed.done")" -ge 2 ] && break
    sleep 0.1
done
kill -9 "$(cat "$WS/server.pid")"
tk=$(date +%s.%N)
wait $MP
RC=$?
t1=$(date +%s.%N)
AFTER_KILL=$(python3 -c "print(round($t1 - $tk, 2))")
R=$WS/benchmark_report.json
check "killed: exit 1" '[ "$RC" = 1 ]'
check "killed: exited ${AFTER_KILL}s after the kill" 'python3 -c "import sys; sys.exit(not $AFTER_KILL < 30)"'
check "killed: error says the engine died" 'jq_ "$R" "r[\"errors\"]" | grep -q "engine exited during the benchmark (killed by signal 9"'
check "killed: partial measurement kept" '[ "$(jq_ "$R" "r[\"magpie\"][\"requests\"][\"completed\"] > 0")" = True ]'
check "killed: report is partial, not success" '[ "$(jq_ "$R" "r[\"success\"]")" = False ]'
check "killed: no engine process left (engine core child reaped)" '[ "$(orphans)" = 0 ]'
echo "     killed: magpie exit $RC, ${AFTER_KILL} s after SIGKILL of the engine"

# stalls after 2 requests: requests fail at --stall-timeout, run fails
FAKE_ENGINE_FAULT=stall FAKE_ENGINE_FAULT_AFTER=2 run stall "${ADHOC[@]}" --num-prompts 6 \
    --env NUM_WARMUPS=0 --stall-timeout 2
R=$WS/benchmark_report.json
check "stall: exit 1" '[ "$RC" = 1 ]'
check "stall: within the limit ($ELAPSED s)" 'python3 -c "import sys; sys.exit(not $ELAPSED < 40)"'
check "stall: error names the stall" 'jq_ "$R" "r[\"errors\"][0]" | grep -q "4 of 6 requests failed (66.67%), more than max_failed_requests 0 allows; first: stalled"'
check "stall: no engine process left" '[ "$(orphans)" = 0 ]'

# whole-run timeout while the load runs: the engine is stopped, the run ends
FAKE_ENGINE_ITL_MS=50 run timeout "${ADHOC[@]}" --output-len 200 --num-prompts 40 \
    --env NUM_WARMUPS=0 --timeout 6
R=$WS/benchmark_report.json
check "timeout: exit 1" '[ "$RC" = 1 ]'
check "timeout: ended near the limit ($ELAPSED s)" 'python3 -c "import sys; sys.exit(not $ELAPSED < 40)"'
check "timeout: error" 'jq_ "$R" "r[\"errors\"]" | grep -q "timeout_seconds (6 s) reached"'
check "timeout: no engine process left" '[ "$(orphans)" = 0 ]'

# --- a server magpie did not start ---
P=$(free_port)
# in a session of its own, so the test can end it and its child as one group
FAKE_ENGINE_TAG="ext-$TAG" setsid python3 "$MP_SRC/tests/tools/fake_engine.py" serve ext-model \
    --port "$P" >"$W/ext.log" 2>&1 &
EXT=$!
EXTRA_PIDS+=("-$EXT")
for _ in $(seq 1200); do healthy "http://127.0.0.1:$P/health" && break; sleep 0.1; done
PORT=$P timeout 60 "$MAGPIE" benchmark "${ADHOC[@]}" -o "$W/taken" -q >"$W/taken.out" 2>&1
RC=$?
WS=$(report "$W/taken")
check "port taken: exit 1" '[ "$RC" = 1 ]'
check "port taken: refuses a foreign server" 'jq_ "$WS/benchmark_report.json" "r[\"errors\"][0]" | grep -q "already has a server"'
BENCHMARK_BASE_URL=http://127.0.0.1:$P timeout 60 "$MAGPIE" benchmark "${ADHOC[@]}" \
    --num-prompts 5 -o "$W/client" -q >"$W/client.out" 2>&1
RC=$?
WS=$(report "$W/client")
check "client-only: exit 0" '[ "$RC" = 0 ]'
check "client-only: served model from /v1/models" \
    '[ "$(jq_ "$WS/benchmark_report.json" "r[\"magpie\"][\"engine\"][\"served_model\"], r[\"magpie\"][\"client_only\"]")" = "ext-model True" ]'
kill -- "-$EXT" 2>/dev/null
wait "$EXT" 2>/dev/null

# --- failed requests against the calibration server (client-only mode): one
# HTTP 500 in 20 requests. The default limit (0) fails the run; a count, a
# percentage or the YAML key lets it be judged; the failures are always
# reported, grouped by reason ---
CALIB=${MP_BIN:-}/calib/calib_server
if [ -x "$CALIB" ]; then
    echo '{"match": "request-id", "default": {"ttft_ms": 1, "itl_ms": 1, "tokens": 4},
        "requests": [{}, {}, {}, {"fail": "http500"}]}' >"$W/calib.json"
    "$CALIB" --schedule "$W/calib.json" --port-file "$W/calib.port" --exit-after-s 200 \
        >"$W/calib.out" 2>&1 &
    EXTRA_PIDS+=("$!")
    for _ in $(seq 2400); do [ -s "$W/calib.port" ] && break; sleep 0.05; done # <= 120 s
    export BENCHMARK_BASE_URL=http://127.0.0.1:$(cat "$W/calib.port")
    ONE=(vllm --model calib-model --run-mode local --concurrency 4 --input-len 8 --output-len 4
        --num-prompts 20 --env NUM_WARMUPS=0)
    run fail0 "${ONE[@]}"
    R=$WS/benchmark_report.json
    fl_() { jq_ "$R" "r[\"magpie\"][\"requests\"][\"failures\"]$1"; }
    check "failed 1/20, limit 0: exit 1" '[ "$RC" = 1 ] && [ "$(jq_ "$R" "r[\"success\"]")" = False ]'
    check "failed 1/20, limit 0: error says why" 'jq_ "$R" "r[\"errors\"][0]" | grep -q \
        "^1 of 20 requests failed (5.00%), more than max_failed_requests 0 allows; first: HTTP 500"'
    check "failed 1/20, limit 0: grouped in the report" \
        '[ "$(fl_ "[\"by_reason\"][0][\"reason\"]") $(fl_ "[\"by_reason\"][0][\"count\"]") $(fl_ "[\"by_reason\"][0][\"first_request\"]") $(fl_ "[\"within_limit\"]")" = "HTTP 500 1 3 False" ]'
    check "failed 1/20, limit 0: summary" 'grep -q "Failed requests: 1 of 20 (5.00%), limit 0: over it" "$WS/summary.txt" &&
        grep -q "^  HTTP 500         1  first #3$" "$WS/summary.txt"'
    check "failed 1/20, limit 0: html" 'grep -q "<td>HTTP 500</td><td>1</td><td>3</td>" "$WS/inferencex_result.html"'
    run fail5pct "${ONE[@]}" --max-failed-requests 5%
    R=$WS/benchmark_report.json
    check "failed 1/20, limit 5%: exit 0, judged on 19" '[ "$RC" = 0 ] && \
        [ "$(jq_ "$R" "r[\"success\"], r[\"throughput\"][\"completed_requests\"], r[\"errors\"]")" = "True 19 []" ]'
    check "failed 1/20, limit 5%: warned and reported" 'jq_ "$R" "r[\"magpie\"][\"warnings\"]" | grep -q \
        "1 of 20 requests failed (5.00%), within max_failed_requests 5%: the metrics cover the 19 successful ones" &&
        [ "$(fl_ "[\"max_failed_requests\"]") $(fl_ "[\"within_limit\"]")" = "5% True" ] &&
        grep -q "limit 5%: within it" "$WS/summary.txt"'
    run fail4pct "${ONE[@]}" --max-failed-requests 4%
    check "failed 1/20, limit 4%: exit 1" '[ "$RC" = 1 ]'
    cat >"$W/fail.yaml" <<EOF
benchmark:
  framework: vllm
  model: calib-model
  run_mode: local
  max_failed_requests: 1
  envs: {CONC: 4, ISL: 8, OSL: 4, NUM_PROMPTS: 20, NUM_WARMUPS: 0}
  profiler: {torch_profiler: {enabled: false}}
EOF
    run failyaml -b "$W/fail.yaml"
    check "failed 1/20, YAML limit 1: exit 0" '[ "$RC" = 0 ] && grep -q "max_failed_requests: \"1\"" "$WS/config.yaml"'
    "$MAGPIE" benchmark "${ONE[@]}" --max-failed-requests 2.5 -o "$W/badlim" >/dev/null 2>"$W/badlim.err"
    BADRC=$?
    check "bad --max-failed-requests: exit 2" '[ "$BADRC" = 2 ] && grep -q "whole number" "$W/badlim.err"'
    unset BENCHMARK_BASE_URL
else
    echo "SKIPPED failed-request limits: calib_server not built (MP_BIN)"
fi

# --- SIGINT to magpie mid-run: the engine group goes, a report is written ---
P=$(free_port)
# (no `timeout` wrapper here: it would take the SIGINT itself)
FAKE_ENGINE_ITL_MS=20 PORT=$P "$MAGPIE" benchmark "${ADHOC[@]}" --output-len 64 \
    --num-prompts 40 --env NUM_WARMUPS=0 --timeout 60 -o "$W/sigint" -q >"$W/sigint.out" 2>&1 &
MP=$!
for _ in $(seq 1200); do
    healthy "http://127.0.0.1:$P/health" && break
    sleep 0.1
done
sleep 1.5
kill -INT $MP
wait $MP
RC=$?
WS=$(report "$W/sigint")
check "sigint: exit 1" '[ "$RC" = 1 ]'
check "sigint: report written" '[ -s "$WS/benchmark_report.json" ]'
check "sigint: no engine process left" '[ "$(orphans)" = 0 ]'

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
