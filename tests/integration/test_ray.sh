#!/bin/bash
# magpie on a real Ray cluster (ray[default] from PyPI in /work/venvs/ray, or
# MAGPIE_RAY_VENV): a head and a second worker node on loopback inside a
# user + network + PID namespace of the test's own (unshare -rnpf), so Ray
# binds nothing outside and every process it starts ends with the test.
# Real jobs through the Jobs API: a trace report, a benchmark against the
# stand-in engine (run_mode: ray), a testcase-free OpenCL kernel analyze
# (-e ray); a job that fails (FAILED + its log tail), cancel mid-run (the
# engine on the worker is gone), the worker node lost mid-job (FAILED, the
# message naming the dead node), an unreachable head (exit 2 at once, the
# address named), bad addresses, picking a task up by id from a fresh
# process, a parallel batch over the two nodes, and the MCP ray_task_* /
# benchmark_batch tools. Exits 77 (skipped) without the venv or unshare.
set -u
MAGPIE=${MAGPIE:?} MP_SRC=${MP_SRC:?}
# Ray from MAGPIE_RAY_VENV, else a venv made once in the user's cache from
# PyPI (ray[default] 2.60.0: ~200 s and ~380 MiB the first time)
VENV=${MAGPIE_RAY_VENV:-}
if [ -z "$VENV" ]; then
    for v in /work/venvs/ray "${XDG_CACHE_HOME:-$HOME/.cache}/magpie/ray-venv"; do
        [ -x "$v/bin/ray" ] && { VENV=$v; break; }
    done
fi
if [ -z "${MP_RAY_IN_NS:-}" ]; then
    if [ -z "$VENV" ] && unshare -rnpf --mount-proc true 2>/dev/null; then
        VENV="${XDG_CACHE_HOME:-$HOME/.cache}/magpie/ray-venv"
        echo "installing ray[default]==2.60.0 into $VENV"
        if ! { python3 -m venv "$VENV" && timeout 900 "$VENV/bin/pip" install -q 'ray[default]==2.60.0'; } \
            >"${TMPDIR:-/tmp}/magpie-ray-pip.log" 2>&1; then
            tail -3 "${TMPDIR:-/tmp}/magpie-ray-pip.log"
            rm -rf "$VENV"
            VENV=
        fi
    fi
    if [ -z "$VENV" ] || [ ! -x "$VENV/bin/ray" ]; then
        echo "SKIPPED: no Ray (MAGPIE_RAY_VENV, or python3 -m venv V && V/bin/pip install 'ray[default]'; see docs/ray.md)"
        exit 77
    fi
    export MAGPIE_RAY_VENV=$VENV
    if ! unshare -rnpf --mount-proc true 2>/dev/null; then
        echo "SKIPPED: unshare -rnpf (user, network and PID namespaces) is not permitted here"
        exit 77
    fi
    MP_RAY_IN_NS=1 exec unshare -rnpf --mount-proc bash "$0" "$@"
fi

# ---- inside the namespaces ----
ip link set lo up
export RAY_USAGE_STATS_ENABLED=0 RAY_DISABLE_USAGE_STATS=1
W=$(mktemp -d /tmp/mp_ray_it.XXXXXX)
S=$W/shared
mkdir -p "$S" "$W/bin"
export MAGPIE_RAY_STATE_DIR=$W/state
RAY=$VENV/bin/ray
pass=0 fail=0
cleanup() {
    "$RAY" stop --force >/dev/null 2>&1
    rm -rf "$W"
}
trap cleanup EXIT
ok() { pass=$((pass + 1)); echo "ok   $1"; }
ko() { fail=$((fail + 1)); echo "FAIL $1"; }
# check NAME CONDITION [FILE shown on failure]
check() { if eval "$2"; then ok "$1"; else ko "$1"; [ -n "${3:-}" ] && tail -20 "$3"; fi; }
jq_() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"; }
secs() { python3 -c "import time; print(time.time())"; }

# the head (1 CPU, a small object store) and a worker node (1 CPU); jobs
# inherit the nodes' PATH, which has the stand-in engine as `vllm`
printf '#!/bin/sh\nexec python3 %s "$@"\n' "$MP_SRC/tests/tools/fake_engine.py" >"$W/bin/vllm"
chmod +x "$W/bin/vllm"
ln -s "$MAGPIE" "$W/bin/magpie" # magpie on the workers' PATH (the MCP tools rely on it)
export PATH="$W/bin:$PATH"
t0=$(secs)
# Under load (a loaded 2-core CI machine) Ray's own start-up waits can run out:
# the GCS port and connect windows are ~20-30 s by default. Widen them, and
# print the log tail when a start fails so that a failure says why.
export RAY_gcs_server_port_wait_time_s=180
ray_start() { # LOG ARGS...
    local log=$1
    shift
    "$RAY" start "$@" >"$log" 2>&1 && return 0
    echo "# ray start failed:" && tail -n 15 "$log" | sed 's/^/#   /'
    return 1
}
ray_start "$W/head.log" --head --num-cpus 1 --node-ip-address 127.0.0.1 --port 6379 \
    --include-dashboard true --dashboard-host 127.0.0.1 --dashboard-port 8265 \
    --object-store-memory 80000000 --temp-dir "$W/r" --disable-usage-stats
check "ray head starts" '[ $? = 0 ]'
ray_start "$W/worker.log" --address 127.0.0.1:6379 --num-cpus 1 --node-ip-address 127.0.0.1 \
    --object-store-memory 80000000 --resources '{"node2": 1}'
check "ray worker node joins" '[ $? = 0 ]'
echo "# cluster up in $(python3 -c "print(round($(secs) - $t0, 1))") s"
A=127.0.0.1:6379 # Magpie's form: mapped to the dashboard at :8265
R=(-a "$A" -s "$S" --magpie "$MAGPIE")
cd "$MP_SRC" || exit 1

# --- a trace report as a task (generic submit, input staged) ---
TR=examples/traces/serving/mixtral_shape_l8_bs16_p256_d12.json.gz
timeout 300 "$MAGPIE" ray submit "${R[@]}" --wait -- trace report "$TR" -o rep >"$W/rep.out" 2>"$W/rep.err"
check "trace report task: exit 0" '[ $? = 0 ]'
ID=$(sed -n 's/^magpie: submitted task \([0-9a-f]*\).*/\1/p' "$W/rep.err")
check "trace report task: id printed" '[ ${#ID} = 8 ]'
check "trace report task: report printed" 'grep -q "GPU time" "$W/rep.out"'
check "trace report task: CSVs in the task dir" '[ -f "$S/results/$ID/inputs/rep/ops_summary.csv" ]'
check "trace report task: record kept" '[ -f "$S/tasks/$ID.json" ] && [ -f "$W/state/tasks/$ID.json" ]'
"$MAGPIE" ray status "$ID" --json >"$W/st.json"
check "status: SUCCEEDED (record gives the address)" '[ "$(jq_ "$W/st.json" "r[\"status\"]")" = SUCCEEDED ]'
"$MAGPIE" ray result "$ID" >"$W/res.json"
check "result: output and _task_id" '[ "$(jq_ "$W/res.json" "r[\"_task_id\"], \"GPU time\" in r[\"output\"]")" = "$ID True" ]'
"$MAGPIE" ray list -a "$A" --json >"$W/list.json"
check "list: the task is there" '[ "$(jq_ "$W/list.json" "[t[\"status\"] for t in r[\"tasks\"] if t[\"task_id\"]==\"$ID\"][0]")" = SUCCEEDED ]'
"$MAGPIE" ray logs "$ID" >"$W/logs.txt"
check "logs: the job log" 'grep -q "GPU time" "$W/logs.txt"'

# --- a job that fails on the worker ---
timeout 120 "$MAGPIE" ray submit "${R[@]}" --wait -- trace report /nonexistent/trace.json -o x >"$W/bad.out" 2>"$W/bad.err"
check "failing job: exit 1" '[ $? = 1 ]'
BID=$(sed -n 's/^magpie: submitted task \([0-9a-f]*\).*/\1/p' "$W/bad.err")
check "failing job: FAILED with the log tail" 'grep -q "FAILED; last lines" "$W/bad.err" && grep -q "nonexistent" "$W/bad.err"'
"$MAGPIE" ray result "$BID" >"$W/badres.json"
check "failing job: result says failed, error_tail" '[ $? = 1 ] && [ "$(jq_ "$W/badres.json" "r[\"status\"], \"nonexistent\" in r[\"error_tail\"]")" = "FAILED True" ]'

# --- benchmark, run_mode: ray, against the stand-in engine ---
bench_yaml() { # NAME PORT PROMPTS [extra ray_config lines]
    cat >"$W/$1.yaml" <<EOF
benchmark:
  framework: vllm
  model: fake-model
  run_mode: ray
  envs: {TP: 1, CONC: 2, ISL: 32, OSL: 16, NUM_PROMPTS: $3, PORT: $2, NUM_WARMUPS: 0}
  profiler: {torch_profiler: {enabled: false}}
  timeout_seconds: 120
  ray_config:
    cluster_address: "$A"
    shared_storage_path: "$S"
    magpie_install_path: "$MAGPIE"
    entrypoint_num_cpus: 1
    env_vars: {FAKE_ENGINE_TAG: "$1-$$", FAKE_ENGINE_MAX_S: "150", FAKE_ENGINE_ITL_MS: "${ITL:-1}"}
    metadata: {owner: magpie-test}
${4:-}
EOF
}
bench_yaml b1 21001 8
timeout 300 "$MAGPIE" benchmark -b "$W/b1.yaml" >"$W/b1.out" 2>"$W/b1.err"
check "benchmark run_mode ray: exit 0" '[ $? = 0 ]' "$W/b1.err"
BID1=$(sed -n 's/^magpie: submitted task \([0-9a-f]*\).*/\1/p' "$W/b1.err")
REP=$(ls "$S/results/$BID1"/benchmark_vllm_*/benchmark_report.json 2>/dev/null | head -1)
check "benchmark: report under <shared>/results/<task_id>/" '[ -f "$REP" ]'
check "benchmark: success, 8 requests" '[ "$(jq_ "$REP" "r[\"success\"], r[\"throughput\"][\"completed_requests\"]")" = "True 8" ]'
check "benchmark: summary printed" 'grep -qi "throughput" "$W/b1.out"'
python3 -c "import json,urllib.request as u; print(json.dumps(json.load(u.urlopen('http://127.0.0.1:8265/api/jobs/magpie-$BID1'))))" >"$W/job1.json"
check "benchmark: TP fits a node -> mp backend, RAY_ADDRESS dropped" 'grep -q "distributed-executor-backend mp" "$W/job1.json" && grep -q "env -u RAY_ADDRESS" "$W/job1.json"'
check "benchmark: HF cache under shared storage, metadata kept" '[ "$(jq_ "$W/job1.json" "r[\"runtime_env\"][\"env_vars\"][\"HF_HOME\"] == \"$S/hf_cache\", r[\"metadata\"][\"owner\"]")" = "True magpie-test" ]'
"$MAGPIE" ray result "$BID1" >"$W/b1res.json"
check "benchmark: ray result is the report + _task_id" '[ "$(jq_ "$W/b1res.json" "r[\"success\"], r[\"_task_id\"]")" = "True $BID1" ]'

# --- a task picked up later by a fresh process that knows only the id ---
env -u RAY_ADDRESS -u MAGPIE_RAY_SHARED_STORAGE "$MAGPIE" ray status "$BID1" >"$W/later.txt"
check "pick up by id: SUCCEEDED" '[ "$(cat "$W/later.txt")" = SUCCEEDED ]'
rm -rf "$W/state"
"$MAGPIE" ray status "$BID1" -s "$S" >"$W/later2.txt"
check "pick up by id from the shared record alone" '[ "$(cat "$W/later2.txt")" = SUCCEEDED ]'
"$MAGPIE" ray status 0badbeef -a http://127.0.0.1:8265 >"$W/unk.txt"
check "unknown id: UNKNOWN" '[ "$(cat "$W/unk.txt")" = UNKNOWN ]'

# --- cancel mid-run: the engine on the worker is gone ---
ITL=400 bench_yaml long 21002 400
"$MAGPIE" ray submit -b "$W/long.yaml" >"$W/long.id" 2>"$W/long.err"
LID=$(cat "$W/long.id")
up=0
for _ in $(seq 1 120); do
    pgrep -f "fake-engine-core-long-$$" >/dev/null && [ -d "$S/results/$LID" ] && { up=1; break; }
    sleep 0.5
done
check "cancel: the engine runs on the worker" '[ $up = 1 ]'
"$MAGPIE" ray status "$LID" >"$W/long.st"
check "cancel: RUNNING before" '[ "$(cat "$W/long.st")" = RUNNING ]'
"$MAGPIE" ray cancel "$LID" >"$W/cancel.json"
check "cancel: cancelled true" '[ "$(jq_ "$W/cancel.json" "r[\"cancelled\"]")" = True ]'
gone=0
for _ in $(seq 1 60); do
    pgrep -f "fake-engine-core-long-$$" >/dev/null || { gone=1; break; }
    sleep 0.5
done
check "cancel: no engine process left" '[ $gone = 1 ]'
"$MAGPIE" ray wait "$LID" --timeout 60 >/dev/null 2>&1
"$MAGPIE" ray status "$LID" --json >"$W/long2.json"
check "cancel: FAILED (Ray STOPPED)" '[ "$(jq_ "$W/long2.json" "r[\"status\"], r[\"ray_status\"]")" = "FAILED STOPPED" ]'

# --- the head unreachable, bad addresses ---
t0=$(secs)
"$MAGPIE" ray status "$BID1" -a http://127.0.0.1:9 >/dev/null 2>"$W/unreach.err"
rc=$?
dt=$(python3 -c "print($(secs) - $t0)")
check "unreachable head: exit 2" '[ $rc = 2 ]'
check "unreachable head: names the address" 'grep -q "not reachable at http://127.0.0.1:9" "$W/unreach.err"'
check "unreachable head: at once (< 10 s)" 'python3 -c "import sys; sys.exit(not $dt < 10)"'
sed -e "s|cluster_address: \"$A\"|cluster_address: \"127.0.0.1:9\"|" "$W/b1.yaml" >"$W/b9.yaml"
MAGPIE_RAY_DASHBOARD_PORT=9 "$MAGPIE" benchmark -b "$W/b9.yaml" >/dev/null 2>"$W/b9.err"
check "benchmark, head unreachable: exit 2 naming the address" '[ $? = 2 ] && grep -q "127.0.0.1:9" "$W/b9.err"'
"$MAGPIE" ray list -a "foo://bar" >/dev/null 2>"$W/badaddr.err"
check "bad address: exit 2 naming it" '[ $? = 2 ] && grep -q "foo://bar" "$W/badaddr.err"'
"$MAGPIE" ray list -a "host:notaport" >/dev/null 2>"$W/badaddr2.err"
check "bad port: exit 2 naming it" '[ $? = 2 ] && grep -q "host:notaport" "$W/badaddr2.err"'

# --- kernel analyze with -e ray (OpenCL, reference mode) ---
if python3 -c "import ctypes.util,sys; sys.exit(ctypes.util.find_library('OpenCL') is None)"; then
    RAY_ADDRESS=http://127.0.0.1:8265 MAGPIE_RAY_SHARED_STORAGE=$S MAGPIE_RAY_MAGPIE=$MAGPIE \
        timeout 300 "$MAGPIE" -e ray analyze -k examples/kernels/opencl/analyze.yaml --no-perf \
        --max-time 2 >"$W/k.out" 2>"$W/k.err"
    check "analyze -e ray: exit 0" '[ $? = 0 ]' "$W/k.err"
    KID=$(sed -n 's/^magpie: submitted task \([0-9a-f]*\).*/\1/p' "$W/k.err")
    KREP=$(ls "$S/results/$KID"/*/analyze_report.json 2>/dev/null | head -1)
    check "analyze -e ray: report in the task dir" '[ -f "$KREP" ]'
    check "analyze -e ray: kernel staged at its relative path" '[ -f "$S/results/$KID/inputs/examples/kernels/opencl/vadd.cl" ]'
    check "analyze -e ray: not the local warning" '! grep -q "running locally" "$W/k.err"'
else
    echo "# no OpenCL ICD loader: analyze -e ray not run"
fi

# --- a parallel batch over the two nodes ---
bench_yaml p1 21011 6
bench_yaml p2 21012 6
ITL=1 timeout 300 "$MAGPIE" ray batch --parallel "$W/p1.yaml" "$W/p2.yaml" >"$W/batch.json" 2>"$W/batch.err"
check "batch: submitted 2" '[ "$(jq_ "$W/batch.json" "r[\"submitted\"], r[\"parallel\"]")" = "2 True" ]'
for id in $(jq_ "$W/batch.json" "' '.join(j['task_id'] for j in r['jobs'])"); do
    "$MAGPIE" ray wait "$id" --timeout 240 >/dev/null 2>&1
    check "batch: task $id SUCCEEDED" '[ $? = 0 ]'
done
python3 - "$W/batch.json" >"$W/overlap.txt" <<'PY'
import json, sys, urllib.request as u
b = json.load(open(sys.argv[1]))
j = [json.load(u.urlopen("http://127.0.0.1:8265/api/jobs/" + x["ray_job_id"])) for x in b["jobs"]]
nodes = {x["driver_node_id"] for x in j}
overlap = j[0]["start_time"] < j[1]["end_time"] and j[1]["start_time"] < j[0]["end_time"]
print(len(nodes), overlap)
PY
check "batch: the two jobs ran at once on the two nodes" '[ "$(cat "$W/overlap.txt")" = "2 True" ]'

# --- MCP tools ---
# The MCP calls go through the official Python SDK client when a venv with it
# is there (the one test_mcp.sh makes or finds), else over raw stdio JSON-RPC.
SDKPY=${MCP_PYTHON:-}
if [ -z "$SDKPY" ]; then
    # test_mcp.sh's cache venv only once its install is complete (it may be
    # running beside this test); a venv made by hand when it imports mcp
    C="${XDG_CACHE_HOME:-$HOME/.cache}/magpie/mcp-venv"
    for v in /work/venvs/mcp "$C"; do
        [ "$v" = "$C" ] && [ ! -f "$v/.magpie-ready" ] && continue
        [ -x "$v/bin/python" ] && "$v/bin/python" -c 'import mcp' 2>/dev/null && { SDKPY=$v/bin/python; break; }
    done
fi
if [ -n "$SDKPY" ]; then echo "# MCP client: the official SDK ($SDKPY)"; else echo "# MCP client: raw stdio JSON-RPC (no SDK venv)"; fi
mcp() { # TOOL ARGS-JSON -> the tool's result text
    if [ -n "$SDKPY" ]; then
        timeout 300 "$SDKPY" "$MP_SRC/tests/tools/mcp_client.py" call --sdk --stdio "$MAGPIE" "$1" "$2"
    else
        timeout 300 python3 "$MP_SRC/tests/tools/mcp_client.py" call --stdio "$MAGPIE" "$1" "$2"
    fi
}
SA="\"ray_cluster_address\":\"$A\",\"ray_shared_storage_path\":\"$S\""
mcp ray_task_status "{\"task_id\":\"$BID1\",$SA}" >"$W/m1.json"
check "mcp ray_task_status" '[ "$(jq_ "$W/m1.json" "r[\"task_id\"], r[\"status\"]")" = "$BID1 SUCCEEDED" ]'
mcp ray_task_result "{\"task_id\":\"$BID1\",$SA}" >"$W/m2.json"
check "mcp ray_task_result" '[ "$(jq_ "$W/m2.json" "r[\"_task_id\"], r[\"success\"]")" = "$BID1 True" ]'
mcp ray_task_list "{$SA}" >"$W/m3.json"
check "mcp ray_task_list" '[ "$(jq_ "$W/m3.json" "r[\"total\"] >= 5")" = True ]'
mcp ray_task_cancel "{\"task_id\":\"$BID1\",$SA}" >"$W/m4.json"
check "mcp ray_task_cancel of a finished task" '[ "$(jq_ "$W/m4.json" "r[\"task_id\"], r[\"cancelled\"]")" = "$BID1 False" ]'
mcp benchmark_batch "{\"configs\":[{\"framework\":\"vllm\",\"model\":\"fake-model\",\"concurrency\":2,\"input_len\":32,\"output_len\":16,\"num_prompts\":4,\"extra_envs\":{\"PORT\":\"21021\",\"NUM_WARMUPS\":\"0\"}}],\"parallel\":false,$SA}" >"$W/m5.json"
check "mcp benchmark_batch (sequential)" '[ "$(jq_ "$W/m5.json" "r[\"submitted\"], r[\"jobs\"][0][\"status\"]")" = "1 SUCCEEDED" ]' "$W/m5.json"
mcp benchmark "{\"framework\":\"vllm\",\"model\":\"fake-model\",\"run_mode\":\"local\",\"concurrency\":2,\"input_len\":32,\"output_len\":16,\"num_prompts\":4,\"torch_profiler\":false,\"extra_envs\":{\"PORT\":\"21022\",\"NUM_WARMUPS\":\"0\"},$SA}" >"$W/m6.json"
check "mcp benchmark with ray_cluster_address: a Ray job, its report" '[ "$(jq_ "$W/m6.json" "r[\"run_mode\"], r[\"status\"], r[\"report\"][\"success\"]")" = "ray SUCCEEDED True" ]' "$W/m6.json"

# --- worker node lost mid-job (last: the cluster has one node after it) ---
# the job pinned to the worker node by its resource; its raylet killed. Ray
# fails the job once the node misses its health checks.
ITL=400 bench_yaml lost 21031 400 "    entrypoint_resources: {node2: 1}"
"$MAGPIE" ray submit -b "$W/lost.yaml" >"$W/lost.id" 2>"$W/lost.err"
NID=$(cat "$W/lost.id")
up=0
for _ in $(seq 1 120); do
    pgrep -f "fake-engine-core-lost-$$" >/dev/null && { up=1; break; }
    sleep 0.5
done
check "node lost: the job runs on the worker node" '[ $up = 1 ]' "$W/lost.err"
RL=$(pgrep -f 'raylet.*node2' | head -1)
[ -n "$RL" ] && kill -9 "$RL"
"$MAGPIE" ray wait "$NID" --timeout 150 >/dev/null 2>"$W/lost.wait"
check "node lost: exit 1" '[ $? = 1 ]' "$W/lost.wait"
"$MAGPIE" ray status "$NID" --json >"$W/lost.json"
check "node lost: FAILED, the message says the node died" \
    '[ "$(jq_ "$W/lost.json" "r[\"status\"], \"node has died\" in r[\"message\"]")" = "FAILED True" ]' "$W/lost.json"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
