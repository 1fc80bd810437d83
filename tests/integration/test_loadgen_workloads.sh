#!/bin/bash
# The realistic workloads of `magpie benchmark --base-url` (docs/workloads.md)
# against tests/calib/calib_server, each checked against the server's own
# record of what it received (its per-request log: prompt tokens, the tokens
# a prompt shares with an earlier one, messages, receive and end times) and
# its /metrics counters:
#   - prefix_repetition (completions, token ids) and generated-shared-prefix
#     (chat, words): every prompt after the first of its group shares at
#     least the prefix with an earlier one, token for token;
#   - mooncake trace: the tokens each request shares with earlier ones are
#     exactly what its hash_ids say; --fixed-schedule arrivals are the trace's
#     times x the slowdown factor, no request leaves before its time, and the
#     requests leave in trace order (the lateness is printed, not asserted);
#     session turns never leave before the previous turn ended plus its delay;
#   - burstgpt CSV: the filtered rows, their lengths and times;
#   - multi_turn chat: each turn carries the history (2k+1 messages, prompt
#     tokens = earlier prompts + answers + its own), waits for the think time,
#     and the result's per-turn figures agree with the server; ShareGPT
#     conversations (--sharegpt-multi-turn) the same way;
#   - --server-tokenize: every prompt length exact and equal to usage;
#   - --engine-metrics-interval: the scraped deltas equal the server's truth;
#   - bad trace files and flags: exit 2 naming the file, line and field.
# Nothing asserted depends on the machine's speed (orderings and causality,
# not durations). Loopback only, bounded request counts.
export CALIB_TAG=mp_loadgen_wl CALIB_EXIT_AFTER=300
# shellcheck source=tests/integration/calib_lib.sh
. "$(dirname "$0")/calib_lib.sh"

# run LABEL [magpie flags...]: a fresh server, magpie, $W/LABEL.{json,requests.jsonl,srv.jsonl};
# SCHED: the server's schedule (default: TTFT 2 ms, 1 ms between tokens)
run() {
    local label=$1
    shift
    local sched=${SCHED:-}
    [ -n "$sched" ] || sched='{"seed": 3, "default": {"ttft_ms": 2, "itl_ms": 1}}'
    echo "$sched" >"$W/sched.json"
    start_server "$W/sched.json"
    timeout 120 "$MAGPIE" benchmark --base-url "http://127.0.0.1:$PORT" --model calib-model \
        --save-result --result-dir "$W" --result-filename "$label.json" \
        --save-requests "$W/$label.requests.jsonl" --html "$W/$label.html" -q "$@" \
        >"$W/$label.out" 2>"$W/$label.err"
    RC=$?
    stop_server
    cp "$W/srv.jsonl" "$W/$label.srv.jsonl"
}

# py LABEL 'python checking $W/LABEL.*; prints "ok" or what is wrong'
py() {
    local label=$1 code=$2 got
    got=$(python3 - "$W" "$label" <<EOF 2>&1
import json, sys
W, L = sys.argv[1], sys.argv[2]
srv = [json.loads(l) for l in open(f"{W}/{L}.srv.jsonl")]
req = [json.loads(l) for l in open(f"{W}/{L}.requests.jsonl")]
res = json.load(open(f"{W}/{L}.json"))
by_rid = {s["rid"]: s for s in srv}
# times: the server's receive time of a request and the time just before
# each of its writes (srv "writes" [pre, post]); a client cannot see bytes
# before their write started, nor the server read a request before it is sent
$code
EOF
)
    [ "$got" = ok ] && ok "$label: $3" || { ko "$label: $3: $got"; tail -3 "$W/$label.err"; }
}

# --- prefix_repetition: 3 prefixes of 40 tokens, 12 prompts, one at a time
run prefix --dataset-name prefix_repetition --prefix-repetition-prefix-len 40 \
    --prefix-repetition-suffix-len 8 --prefix-repetition-num-prefixes 3 \
    --prefix-repetition-output-len 4 --num-prompts 12 --max-concurrency 1 \
    --engine-metrics-interval 0.05
[ $RC -eq 0 ] && ok "prefix: exit 0" || ko "prefix: exit $RC"
py prefix '
hits = sorted(s["cached_tokens"] for s in srv)
bad = [h for h in hits if not (h < 40 or 40 <= h < 48)]
print("ok" if hits[:3] == [0, 0, 0] and all(h >= 40 for h in hits[3:]) and not bad
      and all(s["prompt_tokens"] == 48 for s in srv) else f"cached tokens {hits}")' \
    "9 of 12 prompts share their 40-token prefix with an earlier one"
py prefix '
em = res["magpie"]["engine_metrics"]["delta"]
truth = (sum(s["cached_tokens"] for s in srv), sum(s["prompt_tokens"] for s in srv),
         sum(s["completion_tokens"] for s in srv))
got = (em["prefix_cache_hits"], em["prefix_cache_queries"], em["generation_tokens"])
rate = em["prefix_cache_hit_rate"]
print("ok" if got == truth and abs(rate - truth[0] / truth[1]) < 1e-12
      and res["magpie"]["engine_metrics"]["scrapes"] >= 2 else f"{got} vs {truth}")' \
    "scraped /metrics deltas equal the server's counts"
grep -q "Engine metrics" "$W/prefix.html" && grep -q "prefix-cache hit rate" "$W/prefix.out" &&
    ok "prefix: engine metrics in the HTML page and the summary" || ko "prefix: html/summary"

# --- the control of a prefix-cache study: the same prompts with every prefix
# unique (--prefix-repetition-num-prefixes = --num-prompts). The server charges
# 0.5 ms of TTFT per uncached prompt token, so the shared run's TTFT falls
# where its prefix-cache hit rate rises; asserted on the server's own figures
# (nominal TTFT, hits) and on causality (no client TTFT below the server's);
# the client means are printed
PFX="--dataset-name prefix_repetition --prefix-repetition-prefix-len 40 \
    --prefix-repetition-suffix-len 8 --prefix-repetition-output-len 2 --num-prompts 12 \
    --max-concurrency 1 --engine-metrics-interval 0.05"
SCHED_PREFILL='{"seed": 3, "default": {"ttft_ms": 2, "itl_ms": 1, "prefill_ms_per_token": 0.5}}'
# shellcheck disable=SC2086
SCHED=$SCHED_PREFILL run shared $PFX --prefix-repetition-num-prefixes 3
# shellcheck disable=SC2086
SCHED=$SCHED_PREFILL run unique $PFX --prefix-repetition-num-prefixes 12
for label in shared unique; do
    py $label '
nom = sorted(round(s["ttft_nominal_ms"], 6) for s in srv)
early = [r["index"] for r in req if r["ttft_ms"] < by_rid[r["request_id"]]["ttft_nominal_ms"]]
rate = res["magpie"]["engine_metrics"]["delta"]["prefix_cache_hit_rate"]
want = ([6.0] * 9 + [26.0] * 3) if L == "shared" else [26.0] * 12
mean = sum(r["ttft_ms"] for r in req) / len(req)
open(f"{W}/{L}.ttft", "w").write(f"{mean:.2f}")
print("ok" if nom == want and not early and abs(rate - (360 / 576 if L == "shared" else 0)) < 1e-12
      else f"nominal {nom} early {early} rate {rate}")' "prefill charged on uncached tokens only; hit rate"
done
# benchmark compare shows the engine's view of each side beside latency
"$MAGPIE" benchmark compare "$W/unique.json" "$W/shared.json" --allow-different \
    --json >"$W/cmp.json" 2>"$W/cmp.err"
"$MAGPIE" benchmark compare "$W/unique.json" "$W/shared.json" --allow-different \
    >"$W/cmp.out" 2>>"$W/cmp.err"
python3 - "$W/cmp.json" "$W/cmp.out" <<'PY' && ok "compare: the engine's prefix hits side by side" || ko "compare: engine view $(cat "$W/cmp.err")"
import json, sys
p = json.load(open(sys.argv[1]))["candidates"][0]
b, c = p["engine_baseline"], p["engine_candidate"]
assert b["prefix_hit_rate_pct"] == 0 and abs(c["prefix_hit_rate_pct"] - 100 * 360 / 576) < 1e-9, (b, c)
assert b["running_peak"] == 1 and c["running_peak"] == 1, (b, c)
t = open(sys.argv[2]).read()
assert "engine (its /metrics" in t and "prefix hits %" in t, t
PY
echo "     (mean TTFT, not asserted: shared prefixes $(cat "$W/shared.ttft") ms," \
    "unique $(cat "$W/unique.ttft") ms)"

# --- generated-shared-prefix on chat: words, 2 groups of 3, ordered
run gsp --backend openai-chat --dataset-name generated-shared-prefix --gsp-num-groups 2 \
    --gsp-prompts-per-group 3 --gsp-system-prompt-len 30 --gsp-question-len 6 \
    --gsp-output-len 3 --gsp-ordered --max-concurrency 1 --server-tokenize
py gsp '
hits = [by_rid[r["request_id"]]["cached_tokens"] for r in req]
ok_hits = hits[0] == 0 and hits[3] < 30 and all(hits[i] >= 30 for i in (1, 2, 4, 5))
print("ok" if ok_hits else f"cached tokens {hits}")' "groups share the system prompt word for word"
py gsp '
pl = res["magpie"]["prompt_lengths"]
same = all(r["prompt_len"] == r["expected_prompt_len"] == by_rid[r["request_id"]]["prompt_tokens"]
           for r in req)
print("ok" if pl["exact"] == 6 and pl["tokenized_by_server"] == 6 and pl["estimated"] == 0
      and same and res["magpie"]["prompt_len_mismatches"] == 0 else f"{pl}")' \
    "--server-tokenize: every length exact and equal to usage"

# --- mooncake trace: shared blocks, fixed schedule with slowdown, a session.
# Blocks are random tokens, so two different blocks may start with the same
# token by chance (1 in 31000 per pair); the trace and seed here have none,
# so the shared counts are exactly the blocks'. The check is deterministic.
python3 - "$W/trace.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    t = 5000
    for i in range(24):
        t += 7 + (i * 13) % 11
        rec = {"timestamp": t, "input_length": 20 + (i * 5) % 17, "output_length": 2 + i % 3,
               "hash_ids": [0, 1 + i % 2] + [100 + i, 200 + i]}
        if i % 6 == 0:
            rec["session_id"] = "chat-a"
            rec["delay"] = 15
        f.write(json.dumps(rec) + "\n")
EOF
TRACE_CHECK='
trace = [json.loads(l) for l in open(f"{W}/trace.jsonl")]
t0 = trace[0]["timestamp"]
'
run trace --dataset-name mooncake --dataset-path "$W/trace.jsonl" --trace-block-size 8 \
    --fixed-schedule --slowdown-factor 0.5
[ $RC -eq 0 ] && ok "trace: exit 0" || ko "trace: exit $RC"
py trace "$TRACE_CHECK"'
# non-session requests: arrival = recorded offset x 0.5 (ns, rounded)
bad = [(r["index"], r["arrival_ns"]) for r, x in zip(req, trace) if "session_id" not in x
       and abs(r["arrival_ns"] - (x["timestamp"] - t0) * 0.5e6) > 1]
early = [r["index"] for r in req if r["start_ns"] < r["arrival_ns"]]
order = [r["index"] for r in sorted(req, key=lambda r: r["start_ns"]) if "session_id" not in trace[r["index"]]]
late = sorted((r["start_ns"] - r["arrival_ns"]) / 1e6 for r in req)
open(f"{W}/lateness", "w").write(f"median {late[len(late) // 2]:.3f} ms, max {late[-1]:.3f} ms")
print("ok" if not bad and not early and order == sorted(order) else f"bad {bad} early {early} order {order}")' \
    "--fixed-schedule: recorded times x slowdown, never early, in trace order"
echo "     (dispatch lateness, not asserted: $(cat "$W/lateness" 2>/dev/null))"
py trace "$TRACE_CHECK"'
sess = [r for r in req if "session_id" in trace[r["index"]]]
gaps = []
for a, b in zip(sess, sess[1:]):
    sa, sb = by_rid[a["request_id"]], by_rid[b["request_id"]]
    # the last write of the previous turn started before the client could have
    # its end; the next turn was read after the client sent it
    gaps.append(sb["recv_ns"] - max(w[0] for w in sa["writes"]))
rec_ok = all(b["arrival_ns"] >= (trace[b["index"]]["timestamp"] - t0) * 0.5e6 - 1 for b in sess)
print("ok" if len(sess) == 4 and min(gaps) >= 15e6 and rec_ok and all(r["turn"] == k for k, r in enumerate(sess))
      else f"turn gaps {gaps}")' "session turns wait for the previous end + delay"
run trace1 --seed 1 --dataset-name mooncake --dataset-path "$W/trace.jsonl" --trace-block-size 8 \
    --max-concurrency 1
py trace1 "$TRACE_CHECK"'
def toks(x):  # block ids of each token position
    return [x["hash_ids"][k // 8] if k // 8 < len(x["hash_ids"]) else None
            for k in range(x["input_length"])]
def common(a, b):
    n = 0
    for p, q in zip(toks(a), toks(b)):
        if p is None or p != q:
            break
        n += 1
    return n
seen, bad = [], []
for r in sorted(req, key=lambda r: r["start_ns"]):
    x = trace[r["index"]]
    want = max([common(x, y) for y in seen] or [0])
    got = by_rid[r["request_id"]]["cached_tokens"]
    if got != want:
        bad.append((r["index"], got, want))
    seen.append(x)
print("ok" if not bad else f"(index, cached, from hash_ids) {bad}")' \
    "shared tokens are exactly what hash_ids say"

# --- burstgpt
printf 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,GPT-4,12,3,15,x\n0.2,ChatGPT,9,9,18,x\n0.5,GPT-4,7,0,7,x\n0.9,GPT-4,30,5,35,x\n1.0,GPT-4,4,2,6,x\n' \
    >"$W/bg.csv"
run bg --dataset-name burstgpt --dataset-path "$W/bg.csv" --fixed-schedule --slowdown-factor 0.1
py bg '
got = [(r["prompt_len"], r["max_tokens"], round(r["arrival_ns"] / 1e6, 3)) for r in req]
print("ok" if got == [(12, 3, 0.0), (30, 5, 90.0), (4, 2, 100.0)] else f"{got}")' \
    "GPT-4 rows with a response, their lengths and times"

# --- multi_turn chat: 3 sessions x 3 turns, 20 ms think time
run mt --backend openai-chat --dataset-name multi_turn --conversation-num 3 \
    --conversation-turn-mean 3 --conversation-turn-delay-mean 20 --random-input-len 6 \
    --random-output-len 4 --max-concurrency 2
[ $RC -eq 0 ] && ok "multi_turn: exit 0" || ko "multi_turn: exit $RC"
py mt '
bad = []
for r in req:
    s, k = by_rid[r["request_id"]], r["turn"]
    if s["n_messages"] != 2 * k + 1 or s["prompt_tokens"] != 6 * (k + 1) + 4 * k or r["prompt_len"] != s["prompt_tokens"]:
        bad.append((r["index"], k, s["n_messages"], s["prompt_tokens"]))
    if k:
        p = [q for q in req if q["session"] == r["session"] and q["turn"] == k - 1][0]
        if s["recv_ns"] - max(w[0] for w in by_rid[p["request_id"]]["writes"]) < 20e6:
            bad.append(("think", r["index"]))
print("ok" if not bad and len(req) == 9 else f"{bad}")' \
    "each turn has the history, the previous answer and the think time"
py mt '
ses = res["magpie"]["sessions"]
turns = [(t["turn"], t["requests"], t["mean_prompt_len"]) for t in ses["turns"]]
print("ok" if ses["sessions"] == 3 and ses["sessions_completed"] == 3
      and turns == [(0, 3, 6.0), (1, 3, 16.0), (2, 3, 26.0)] else f"{ses}")' \
    "per-turn and per-session figures in the result"
grep -q "<h2>Sessions</h2>" "$W/mt.html" && grep -q "^Sessions: 3" "$W/mt.out" &&
    ok "multi_turn: sessions in the HTML page and the summary" || ko "multi_turn: html/summary"

# --- ShareGPT conversations as sessions: every answered human turn, with history
python3 - "$W/sg.json" <<'EOF'
import json, sys
conv = lambda turns: {"conversations": [{"from": "human" if i % 2 == 0 else "gpt", "value": t}
                                        for i, t in enumerate(turns)]}
json.dump([conv(["what is a cat", "a small animal", "and a dog", "a bigger one", "thanks"]),
           conv(["hello", "hi there you", "bye", "see you"])], open(sys.argv[1], "w"))
EOF
run sgmt --backend openai-chat --dataset-name sharegpt --dataset-path "$W/sg.json" \
    --sharegpt-multi-turn --num-prompts 2 --disable-shuffle --max-concurrency 1
py sgmt '
own = {"what is a cat": 4, "and a dog": 3, "hello": 1, "bye": 1}
bad = []
for r in req:
    s, k = by_rid[r["request_id"]], r["turn"]
    prev = [q for q in req if q["session"] == r["session"] and q["turn"] == k - 1]
    want = sum(by_rid[q["request_id"]]["prompt_tokens"] + by_rid[q["request_id"]]["completion_tokens"]
               for q in prev)
    if s["n_messages"] != 2 * k + 1 or s["prompt_tokens"] - want not in own.values():
        bad.append((r["index"], k, s["n_messages"], s["prompt_tokens"], want))
print("ok" if not bad and len(req) == 4 and res["magpie"]["sessions"]["sessions"] == 2
      else f"{bad} {len(req)}")' "sharegpt conversations replayed turn by turn with their history"

# --- bad input: exit 2, file:line and field
printf '{"timestamp": 1, "input_length": 4, "output_length": 1}\n{"timestamp": 2, "input_length": 0, "output_length": 1}\n' >"$W/bad.jsonl"
"$MAGPIE" benchmark --base-url http://127.0.0.1:9 --model m --dataset-name mooncake \
    --dataset-path "$W/bad.jsonl" >/dev/null 2>"$W/e1"
[ $? -eq 2 ] && grep -q "bad.jsonl:2:1" "$W/e1" && grep -q "input_length" "$W/e1" &&
    ok "bad trace line: exit 2 with file:line and field" || { ko "bad trace line"; cat "$W/e1"; }
printf 'Time,Model\n' >"$W/bad.csv"
"$MAGPIE" benchmark --base-url http://127.0.0.1:9 --model m --dataset-name burstgpt \
    --dataset-path "$W/bad.csv" >/dev/null 2>"$W/e2"
[ $? -eq 2 ] && grep -q "bad.csv:1:1" "$W/e2" && grep -q "Timestamp" "$W/e2" &&
    ok "bad burstgpt header: exit 2" || { ko "bad burstgpt header"; cat "$W/e2"; }
"$MAGPIE" benchmark --base-url http://127.0.0.1:9 --model m --fixed-schedule --num-prompts 2 \
    >/dev/null 2>"$W/e3"
[ $? -eq 2 ] && grep -q "fixed-schedule needs a dataset with recorded arrival times" "$W/e3" &&
    ok "--fixed-schedule without times: exit 2" || { ko "--fixed-schedule without times"; cat "$W/e3"; }
"$MAGPIE" benchmark --base-url http://127.0.0.1:9 --model m --dataset-name mooncake \
    >/dev/null 2>"$W/e4"
[ $? -eq 2 ] && grep -q "needs --dataset-path" "$W/e4" && ok "mooncake without a path: exit 2" ||
    ko "mooncake without a path"

echo "loadgen workloads: $pass passed, $fail failed"
[ $fail -eq 0 ]
