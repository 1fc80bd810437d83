#!/bin/bash
# `make check-engines` (second part): magpie's realistic-workload features
# (docs/workloads.md) against real serving engines on this CPU machine, each
# serving the tiny random-weight Llama of make_tiny_llama.py (word-level
# vocabulary, a chat template). One server per engine on loopback; magpie
# runs against it with --base-url, bounded request counts:
#   1. prefix cache: a shared-prefix workload (prefix_repetition, one prefix
#      of PREFIX_LEN tokens, SUFFIX_LEN tokens of each prompt's own) and its
#      control (the same shape, every prefix unique: --prefix-repetition-
#      num-prefixes = --num-prompts), alternated ROUNDS times against the
#      same server (a new --seed each run, the order swapped every round, so
#      the cache of an earlier run and the machine's load drift cancel); the
#      engine's own prefix-cache hits from /metrics (--engine-metrics-
#      interval) must be the expected count in every round (vLLM: every
#      later prompt hits the whole block-aligned prefix; SGLang: at least
#      that) against 0 unique, and the TTFT median lower with the shared
#      prefix over the rounds and in most of them (a burst of load from
#      other work can slow one run); prints the medians and their spread;
#   2. --server-tokenize: text prompts (a JSONL of odd texts on completions,
#      word prompts on chat) counted by the server's /tokenize: every count
#      exact and equal to the server's usage.prompt_tokens;
#   3. multi-turn sessions on the chat endpoint (multi_turn): turn 0's
#      usage.prompt_tokens is the chat template's count of its prompt, and
#      each later turn's is the previous turn's plus its answer and its own
#      prompt with the template's tokens around them (the history was sent
#      whole, as the engine tokenizes it);
#   4. timed replay: a mooncake trace (20 requests 100 ms apart) with
#      --fixed-schedule: every request's arrival is the trace's offset to
#      the nanosecond, none leaves before it; the dispatch lateness (start -
#      arrival) printed, its median under 1 ms (no concurrency cap: a
#      request that waits for a free slot is late by design);
#   5. SGLang only: --engine-metrics-interval parsed sglang:* metrics;
#   6. an agentx run magpie starts with 2 scheduled captures of 3 steps
#      (vLLM: --profiler-config.max_iterations; SGLang: its profiler start
#      body {num_steps, activities}): each capture ended by the engine, its
#      traces and capture.json manifest.
# Not part of `make check` (the venvs are 6-8 GB; check_engines.sh installs
# them). Every engine started here is stopped (its group) and checked gone.
#
# env: MAGPIE (build/release/magpie), ENGINES ("vllm sglang"), ROUNDS (5),
#      NUM_PROMPTS (16), PREFIX_LEN (1536), SUFFIX_LEN (32), OUT_LEN (8),
#      PARTS ("prefix tokenize multiturn schedule sglang captures"),
#      VLLM_VENV (~/.cache/magpie/vllm-cpu), SGLANG_VENV
#      (~/.cache/magpie/sglang-cpu), KEEP=1 keeps the work dir.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
MAGPIE=${MAGPIE:-$ROOT/build/release/magpie}
MAGPIE=$(cd "$(dirname "$MAGPIE")" 2>/dev/null && pwd)/$(basename "$MAGPIE")
ENGINES=${ENGINES:-vllm sglang}
VENV=${VLLM_VENV:-$HOME/.cache/magpie/vllm-cpu}
SG_VENV=${SGLANG_VENV:-$HOME/.cache/magpie/sglang-cpu}
ROUNDS=${ROUNDS:-5} NP=${NUM_PROMPTS:-16}
PARTS=${PARTS:-prefix tokenize multiturn schedule sglang captures}
PL=${PREFIX_LEN:-1536} SL=${SUFFIX_LEN:-32} OL=${OUT_LEN:-8}
W=$(mktemp -d /tmp/mp_workloads.XXXXXX)
SRV=
RES=$W/results
. "$HERE/common.sh"
cleanup() {
    stop_server
    [ "${KEEP:-0}" = 1 ] && echo "work dir kept: $W" || rm -rf "$W"
}
trap cleanup EXIT
[ -x "$MAGPIE" ] || { echo "magpie binary not found at $MAGPIE (make build)"; exit 2; }
echo "load before: $(uptime)"

# wait_ready URL LOG: up to 10 min
wait_ready() {
    for _ in $(seq 1200); do
        curl -sf "$1/v1/models" >/dev/null && return 0
        kill -0 "$SRV" 2>/dev/null || { tail -5 "$2"; return 1; }
        sleep 0.5
    done
    return 1
}

# bench LABEL ARGS...: magpie against the server, result JSON + requests
bench() {
    local label=$1
    shift
    timeout 900 "$MAGPIE" benchmark --base-url "$U" --model "$M" --save-result --result-dir "$D" \
        --result-filename "$label.json" -q "$@" >"$D/$label.out" 2>&1
}

# --- 1. shared prefix against unique prefixes, interleaved ---
prefix_part() {
    local e=$1 i order mode
    # a fresh engine's first requests are slow (seen: SGLang's first shared
    # run at twice its later medians): a throwaway run first
    bench warm --dataset-name random --random-input-len 512 --random-output-len 4 \
        --num-prompts 4 --max-concurrency 1 --seed 7
    for i in $(seq "$ROUNDS"); do
        order="shared unique"
        [ $((i % 2)) = 0 ] && order="unique shared"
        for mode in $order; do
            local np=1 seed=$((1000 + i))
            [ "$mode" = unique ] && np=$NP seed=$((2000 + i))
            bench "pfx_${mode}_$i" --dataset-name prefix_repetition \
                --prefix-repetition-prefix-len "$PL" --prefix-repetition-suffix-len "$SL" \
                --prefix-repetition-num-prefixes "$np" --prefix-repetition-output-len "$OL" \
                --num-prompts "$NP" --max-concurrency 1 --seed "$seed" --engine-metrics-interval 2 ||
                ko "$e prefix $mode round $i: magpie exit $?"
        done
    done
    python3 - "$D" "$ROUNDS" "$NP" "$PL" "$SL" "$e" >"$D/prefix.txt" <<'PY'
import json, statistics as st, sys
d, rounds, n, pl, sl, e = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
rows, bad = [], []
# vLLM hits whole 16-token blocks of the prefix in every prompt after the
# first; SGLang's radix cache token by token, so at least as many
want = (n - 1) * (pl // 16 * 16)
for i in range(1, rounds + 1):
    r = {}
    for m in ("shared", "unique"):
        j = json.load(open("%s/pfx_%s_%d.json" % (d, m, i)))
        dl = j["magpie"]["engine_metrics"]["delta"]
        r[m] = (j["median_ttft_ms"], dl.get("prefix_cache_hits"), dl.get("prefix_cache_queries"),
                dl.get("prefix_cache_hit_rate"), j["completed"])
    rows.append(r)
    s, u = r["shared"], r["unique"]
    if s[4] != n or u[4] != n:
        bad.append("round %d: completed %s/%s of %d" % (i, s[4], u[4], n))
    if s[1] is None or u[1] is None:
        bad.append("round %d: no prefix-cache counters in the engine's metrics" % i)
        continue
    if e == "vllm" and (s[1] != want or s[2] != n * (pl + sl)):
        bad.append("round %d: shared hits %s / queries %s, expected %d / %d" % (i, s[1], s[2], want, n * (pl + sl)))
    if e != "vllm" and s[1] < want:
        bad.append("round %d: shared hits %s < %d" % (i, s[1], want))
    if u[1] != 0:
        bad.append("round %d: unique prefixes hit %s tokens" % (i, u[1]))
    if not s[0] < u[0]:
        print("note: round %d: TTFT median shared %.1f ms not below unique %.1f ms" % (i, s[0], u[0]))
for i, r in enumerate(rows, 1):
    print("round %d: shared TTFT median %.1f ms, hit rate %s | unique %.1f ms, hit rate %s" % (
        i, r["shared"][0], r["shared"][3], r["unique"][0], r["unique"][3]))
ts = [r["shared"][0] for r in rows]
tu = [r["unique"][0] for r in rows]
print("TTFT median over %d rounds: shared %.1f ms (%.1f-%.1f), unique %.1f ms (%.1f-%.1f), "
      "ratio %.2f (per-round %.2f-%.2f)" % (
          rounds, st.median(ts), min(ts), max(ts), st.median(tu), min(tu), max(tu),
          st.median(ts) / st.median(tu), min(a / b for a, b in zip(ts, tu)),
          max(a / b for a, b in zip(ts, tu))))
# TTFT: a load burst from other work on the machine can slow one run of a
# round (seen: 10 requests of a run at 4-15x), so the rounds vote: the
# shared prefix must give the lower median over the rounds and the lower
# median in most rounds
lower = sum(a < b for a, b in zip(ts, tu))
if not (st.median(ts) < st.median(tu) and 2 * lower > rounds):
    bad.append("TTFT with the shared prefix lower in %d of %d rounds, median %.1f vs %.1f ms" % (
        lower, rounds, st.median(ts), st.median(tu)))
for b in bad:
    print("BAD " + b)
PY
    cat "$D/prefix.txt"
    check "$e prefix: engine's hits as expected in every round (shared: every later prompt's prefix, unique: 0); TTFT lower shared over the rounds and in most" \
        '! grep -q "^BAD" "$D/prefix.txt"'
}

# --- 2. --server-tokenize: every text prompt's count is the server's usage ---
tokenize_part() {
    local e=$1
    python3 - "$D/texts.jsonl" <<'PY'
import json, sys
texts = ["w100 w200 w300", "hello,world  w5\tw6\nw7", "  leading and trailing  ",
         "w1000-w2000 w3000.w4000 \u00fcn\u00efc\u00f6d\u00e9 text", "a" * 50 + " b c",
         "The quick brown fox jumps over the lazy dog. It was the best of times."]
with open(sys.argv[1], "w") as f:
    for t in texts:
        f.write(json.dumps({"prompt": t, "output_tokens": 4}) + "\n")
PY
    bench tok_jsonl --dataset-name jsonl --dataset-path "$D/texts.jsonl" --num-prompts 6 \
        --server-tokenize --max-concurrency 2
    local rc=$?
    bench tok_chat --backend openai-chat --dataset-name random --random-input-len 40 \
        --random-output-len 4 --num-prompts 6 --server-tokenize --max-concurrency 2
    local rc2=$?
    check "$e --server-tokenize: exit 0 (completions $rc, chat $rc2)" '[ "$rc$rc2" = 00 ]'
    for k in jsonl chat; do
        check "$e --server-tokenize $k: 6 of 6 counted by /tokenize, exact, none off usage" \
            '[ "$(jq_ "$D/tok_$k.json" "r[\"magpie\"][\"prompt_lengths\"][\"tokenized_by_server\"], r[\"magpie\"][\"prompt_lengths\"][\"exact\"], r[\"magpie\"][\"prompt_len_mismatches\"]")" = "6 6 0" ]'
        check "$e --server-tokenize $k: every prompt_len equals usage.prompt_tokens" "python3 - '$D/tok_$k.requests.jsonl' <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
assert len(rs) == 6 and all(r['success'] and r['usage'] for r in rs), rs
assert all(r['prompt_len'] == r['expected_prompt_len'] for r in rs), [(r['prompt_len'], r['expected_prompt_len']) for r in rs]
print('   lengths:', [r['prompt_len'] for r in rs])
PY"
    done
}

# --- 3. multi-turn sessions on chat: the history as the engine counts it ---
multiturn_part() {
    local e=$1
    bench mt --backend openai-chat --dataset-name multi_turn --conversation-num 4 \
        --conversation-turn-mean 4 --random-input-len 24 --random-output-len 8 \
        --max-concurrency 2 --server-tokenize
    local rc=$?
    check "$e multi-turn: exit 0" '[ "$rc" = 0 ]'
    check "$e multi-turn: 4 sessions of 4 turns, all completed" \
        '[ "$(jq_ "$D/mt.json" "r[\"magpie\"][\"sessions\"][\"sessions\"], r[\"magpie\"][\"sessions\"][\"sessions_completed\"], r[\"completed\"]")" = "4 4 16" ]'
    # the template: <s>, then " ROLE : TEXT </s>" per message (3 + words
    # tokens), then " assistant :" (2); the word prompts are 24 words, each
    # answer as many words as tokens (a special token the model may emit is
    # dropped from the text: then the turn is 1 shorter, said so)
    check "$e multi-turn: turn k's usage.prompt_tokens = turn k-1's + its answer + its prompt, in the template" "python3 - '$D/mt.requests.jsonl' <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rs:
    by.setdefault(r['session'], {})[r['turn']] = r
bad = []
for s, t in sorted(by.items()):
    assert sorted(t) == [0, 1, 2, 3], t.keys()
    if t[0]['prompt_len'] != 1 + 3 + 24 + 2:
        bad.append('session %d turn 0: %d' % (s, t[0]['prompt_len']))
    if t[0]['expected_prompt_len'] != t[0]['prompt_len']:
        bad.append('session %d turn 0: /tokenize said %d' % (s, t[0]['expected_prompt_len']))
    for k in (1, 2, 3):
        want = t[k - 1]['prompt_len'] - 2 + (3 + t[k - 1]['output_tokens']) + (3 + 24) + 2
        if t[k]['prompt_len'] != want:
            bad.append('session %d turn %d: %d, expected %d' % (s, k, t[k]['prompt_len'], want))
print('   turn prompt lengths:', [[t[k]['prompt_len'] for k in range(4)] for _, t in sorted(by.items())])
assert not bad, bad
PY"
}

# --- 4. timed replay on the recorded schedule ---
schedule_part() {
    local e=$1
    python3 - "$D/sched.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(20):
        f.write(json.dumps({"timestamp": 5000 + 100 * i + (7 if i % 3 else 0), "input_length": 64,
                            "output_length": 4, "hash_ids": [i]}) + "\n")
PY
    bench sched --dataset-name mooncake --dataset-path "$D/sched.jsonl" --fixed-schedule \
        --trace-block-size 64
    local rc=$?
    check "$e fixed schedule: exit 0" '[ "$rc" = 0 ]'
    check "$e fixed schedule: each arrival the trace's offset exactly, no request before it, lateness median < 1 ms" "python3 - '$D/sched.jsonl' '$D/sched.requests.jsonl' <<'PY'
import json, statistics as st, sys
ts = [json.loads(l)['timestamp'] for l in open(sys.argv[1])]
rs = sorted((json.loads(l) for l in open(sys.argv[2])), key=lambda r: r['index'])
assert len(rs) == 20 and all(r['success'] for r in rs), len(rs)
assert [r['arrival_ns'] for r in rs] == [(t - ts[0]) * 1000000 for t in ts], [r['arrival_ns'] for r in rs]
late = [(r['start_ns'] - r['arrival_ns']) / 1e6 for r in rs]
assert min(late) >= 0, late
print('   dispatch lateness ms: median %.3f, max %.3f' % (st.median(late), max(late)))
assert st.median(late) < 1, late
PY"
}

# --- 5. SGLang: its metrics, and scheduled captures through its profiler ---
sglang_extra() {
    # a fresh SGLang has no sglang:* sample before its first request (its
    # own start-up warm-up included), and its counters none before its
    # first request finished: the gauges in every scrape after the first,
    # the counters in the last
    [ -f "$D/pfx_shared_1.json" ] &&
        check "sglang metrics: sglang:* parsed (gauges running, queue, token usage in every scrape after the first; prompt and cached tokens in the last)" \
            '[ "$(jq_ "$D/pfx_shared_1.json" "(lambda e: e[\"error\"] is None and e[\"scrapes\"] >= 2 and all(all(k in s for k in (\"num_requests_running\", \"num_requests_waiting\", \"kv_cache_usage\")) for s in e[\"series\"][1:]) and all(k in e[\"series\"][-1] for k in (\"prompt_tokens\", \"prefix_cache_queries\", \"prefix_cache_hits\")))(r[\"magpie\"][\"engine_metrics\"])")" = True ]'
    [ -f "$D/pfx_unique_1.json" ] &&
    check "sglang metrics: prompt-token delta = the prompts sent" \
        '[ "$(jq_ "$D/pfx_unique_1.json" "int(r[\"magpie\"][\"engine_metrics\"][\"delta\"][\"prompt_tokens\"]) == r[\"total_input_tokens\"]")" = True ]'
}

# --- 6. an agentx run magpie starts, with scheduled captures ---
captures_part() {
    local e=$1 envs
    stop_server
    case "$e" in
    vllm) envs="MAX_MODEL_LEN: 1024, GPU_MEMORY_UTILIZATION: 0.1, EXTRA_VLLM_ARGS: \"--dtype bfloat16\"" ;;
    sglang) envs="EXTRA_SGLANG_ARGS: \"$SG_ARGS\"" ;;
    esac
    # an agentic trace: 24 requests 0.5 s apart, sessions of 3 turns sharing
    # their first block; 2 captures of 3 steps each
    python3 - "$D/agent.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(24):
        f.write(json.dumps({"timestamp": 500 * i, "input_length": 96, "output_length": 8,
                            "hash_ids": [100 + i // 3, 900 + i], "session_id": "s%d" % (i // 3)}) + "\n")
PY
    cat >"$D/agentx.yaml" <<EOF
benchmark:
  framework: $e
  model: $M
  run_mode: local
  envs: {CONC: 2, NUM_WARMUPS: 1, PORT: $(port), $envs}
  agentx: {enabled: true, mode: fast, trace_file: $D/agent.jsonl, block_size: 64}
  profiler:
    torch_profiler: {enabled: true, num_steps: 3, num_profiles: 2, start_seconds: 2,
                     interval_seconds: 2, duration_seconds: 20, flush_timeout_seconds: 300}
EOF
    local t0 rc
    t0=$(date +%s)
    local pre=
    [ "$e" = vllm ] && pre=$VENV/bin: # vLLM's venv first (SGLang's is in PATH already)
    PATH="$pre$PATH" VLLM_CPU_KVCACHE_SPACE=1 timeout 1500 "$MAGPIE" benchmark -b "$D/agentx.yaml" \
        -o "$D/agentx" -q >"$D/agentx.out" 2>&1
    rc=$?
    local WS R
    WS=$(ls -d "$D/agentx/benchmark_${e}_"* 2>/dev/null | tail -1)
    R=$WS/benchmark_report.json
    check "$e agentx captures: exit 0 ($(($(date +%s) - t0)) s)" '[ "$rc" = 0 ]'
    check "$e agentx captures: 24 of 24 completed" '[ "$(jq_ "$R" "r[\"throughput\"][\"completed_requests\"]")" = 24 ]'
    python3 - "$R" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["magpie"]["captures"]
print("   captures: %d of %d, stop: %s" % (c["taken"], c["planned"], c["stop_reason"]))
for p in c["profiles"]:
    print("   capture %d: %.1f-%.1f s, ended by engine %s, %d file(s), error %s" % (
        p["index"], p["start_s"], p["stop_s"] or -1, p["ended_by_engine"], p["files"], p["error"]))
PY
    check "$e agentx captures: at least 1 taken, each ended by the engine's own step bound" \
        '[ "$(jq_ "$R" "r[\"magpie\"][\"captures\"][\"taken\"] >= 1 and all(p[\"ended_by_engine\"] and p[\"files\"] >= 1 for p in r[\"magpie\"][\"captures\"][\"profiles\"])")" = True ]'
    check "$e agentx captures: each capture.json lists its traces (CPU ops, no GPU kernels on a CPU)" \
        '[ "$(jq_ "$R" "all((lambda m: m[\"traces\"] >= 1 and all(f[\"holds_cpu_ops\"] and not f[\"holds_gpu_kernels\"] for f in m[\"files\"] if f[\"trace\"]))(json.load(open(sys.argv[1].rsplit(\"/\", 1)[0] + \"/\" + p[\"manifest\"]))) for p in r[\"magpie\"][\"captures\"][\"profiles\"])")" = True ]'
    # SGLang logs "Stop profiling..." itself when num_steps are done, before
    # magpie's /stop_profile (which it then refuses: the capture is over)
    [ "$e" = sglang ] && check "$e agentx captures: SGLang stopped each capture itself (its log)" \
        '[ "$(grep -c "Stop profiling" "$WS/server.log")" -ge "$(jq_ "$R" "r[\"magpie\"][\"captures\"][\"taken\"]")" ]'
    check "$e agentx captures: stopped main process first, no SIGKILL" \
        '[ "$(jq_ "$R" "r[\"magpie\"][\"engine\"][\"stop\"][\"main_signalled\"], r[\"magpie\"][\"engine\"][\"stop\"][\"killed\"]")" = "True False" ]'
}

engine_part() {
    local e=$1 PY
    case "$e" in
    vllm) PY=$VENV/bin/python ;;
    sglang) PY=$SG_VENV/bin/python ;;
    esac
    [ -x "$PY" ] || { echo "$e: no venv at $(dirname "$(dirname "$PY")") (make check-engines installs it)"; return 1; }
    D=$W/$e
    mkdir -p "$D"
    "$PY" "$HERE/make_tiny_llama.py" "$D/tinyllama" >/dev/null 2>&1 || { echo "cannot build the tiny model"; return 1; }
    M=$D/tinyllama
    local P srv=1
    P=$(port)
    U=http://127.0.0.1:$P
    # the agentx captures start their own engine: no server for them alone
    [ -z "$(echo " $PARTS " | grep -E ' (prefix|tokenize|multiturn|schedule|sglang) ')" ] && srv=0
    case "$e" in
    vllm)
        echo "vLLM $("$PY" -c "import vllm; print(vllm.__version__)" 2>/dev/null) from $VENV"
        if [ "$srv" = 1 ]; then
            PATH="$VENV/bin:$PATH" VLLM_CPU_KVCACHE_SPACE=1 setsid vllm serve "$M" --host 127.0.0.1 \
                --port "$P" --max-model-len 2048 --dtype bfloat16 --gpu-memory-utilization 0.1 \
                >"$D/server.log" 2>&1 &
            SRV=$!
        fi
        ;;
    sglang)
        echo "SGLang $("$PY" -c "import importlib.metadata as m; print(m.version('sglang'))") from $SG_VENV"
        SG_ARGS="--device cpu --attention-backend torch_native --sampling-backend pytorch \
--disable-overlap-schedule --max-total-tokens 8192 --dtype bfloat16"
        export PATH="$SG_VENV/bin:$PATH" LD_LIBRARY_PATH="$SG_VENV/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            SGLANG_USE_CPU_ENGINE=1 EXTRA_SGLANG_ARGS="$SG_ARGS"
        if [ "$srv" = 1 ]; then
            # shellcheck disable=SC2086
            setsid python3 -m sglang.launch_server --model-path "$M" --host 127.0.0.1 --port "$P" \
                --enable-metrics $SG_ARGS >"$D/server.log" 2>&1 &
            SRV=$!
        fi
        ;;
    esac
    local t0
    if [ "$srv" = 1 ]; then
        t0=$(date +%s)
        wait_ready "$U" "$D/server.log" || { ko "$e: server not ready"; return 1; }
        echo "$e ready after $(($(date +%s) - t0)) s"
    fi
    case " $PARTS " in *" prefix "*) prefix_part "$e" ;; esac
    case " $PARTS " in *" tokenize "*) tokenize_part "$e" ;; esac
    case " $PARTS " in *" multiturn "*) multiturn_part "$e" ;; esac
    case " $PARTS " in *" schedule "*) schedule_part "$e" ;; esac
    case " $PARTS " in *" sglang "*) [ "$e" = sglang ] && sglang_extra ;; esac
    case " $PARTS " in *" captures "*) captures_part "$e" ;; esac
    stop_server
    case "$e" in
    vllm) check "vllm: no vLLM process left" '! pgrep -f "vllm serve $M" >/dev/null' ;;
    sglang) check "sglang: no SGLang process left" '! pgrep -f "sglang.launch_server --model-path $M" >/dev/null' ;;
    esac
}

for e in $ENGINES; do
    case "$e" in
    vllm | sglang) engine_part "$e" || ko "$e: could not be set up" ;;
    *) echo "unknown engine '$e' in ENGINES (vllm, sglang)"; exit 2 ;;
    esac
done
finish
