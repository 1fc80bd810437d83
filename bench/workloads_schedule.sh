#!/bin/bash
# bench/workloads_schedule.sh: how closely `magpie benchmark --fixed-schedule`
# keeps a trace's recorded arrival times (docs/workloads.md), measured on
# the client's own log against the trace, and on the calibration server's
# receive times. See bench/README.md, "workloads".
#
# A mooncake-format trace of N requests (Poisson arrivals at RATE req/s, ms
# timestamps as real traces have, shared hash_id blocks) is replayed against
# tests/calib/calib_server in zero-delay mode (answer at once: the schedule,
# not the server, is what is measured), the client pinned to one CPU and the
# server to another. Reported over R runs, as median and spread:
#   - schedule error: arrival_ns (client) - trace offset x slowdown: the
#     precomputed schedule itself (expected 0);
#   - dispatch lateness: start_ns - arrival_ns, the time from the recorded
#     arrival to the request being handed to the HTTP engine (p50, p99, max);
#   - server lateness: server receive time - (t0 + trace offset): what the
#     server saw, including the loopback send and its own read;
#   - order: requests started in trace order (count of inversions).
#
# usage: bench/workloads_schedule.sh [BUILD_DIR]   (default build/release, built if missing)
# env:   MP_BENCH_N=2000 MP_BENCH_RATE=200 MP_BENCH_RUNS=5 MP_BENCH_SLOWDOWN=1
#        MP_BENCH_CLIENT_CPU=0 MP_BENCH_SERVER_CPU=1
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build/release}
if [ ! -x "$BUILD/magpie" ]; then
    (cd "$ROOT" && cmake --preset release >/dev/null && cmake --build --preset release --target magpie) ||
        exit 1
fi
N=${MP_BENCH_N:-2000}
RATE=${MP_BENCH_RATE:-200}
RUNS=${MP_BENCH_RUNS:-5}
SLOW=${MP_BENCH_SLOWDOWN:-1}
CC=${MP_BENCH_CLIENT_CPU:-0}
SC=${MP_BENCH_SERVER_CPU:-1}
W=$(mktemp -d /tmp/mp_bench_sched.XXXXXX)
SRV=
cleanup() {
    [ -n "$SRV" ] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
# the calibration server: optimised, no sanitizers (the release preset has no tests)
CALIB=$BUILD/tests/calib/calib_server
if [ ! -x "$CALIB" ]; then
    CALIB=$W/calib_server
    gcc -std=c17 -O2 -D_GNU_SOURCE -o "$CALIB" "$ROOT/tests/calib/calib_server.c" \
        $(pkg-config --cflags --libs jansson) -lm || exit 1
fi

python3 - "$W/trace.jsonl" "$N" "$RATE" <<'EOF'
import json, random, sys
path, n, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
rnd = random.Random(1)
t = 0.0
with open(path, "w") as f:
    for i in range(n):
        t += rnd.expovariate(rate) * 1000
        f.write(json.dumps({"timestamp": int(t), "input_length": 64, "output_length": 4,
                            "hash_ids": [i % 8, 1000 + i]}) + "\n")
EOF
echo '{"seed": 1, "default": {"ttft_ms": 0, "itl_ms": 0, "tokens": 4}}' >"$W/sched.json"

for run in $(seq "$RUNS"); do
    rm -f "$W/port" "$W/srv.jsonl"
    taskset -c "$SC" "$CALIB" --schedule "$W/sched.json" \
        --port-file "$W/port" --log "$W/srv.jsonl" --exit-after-s 600 >/dev/null 2>&1 &
    SRV=$!
    for _ in $(seq 2400); do [ -s "$W/port" ] && break; sleep 0.05; done
    taskset -c "$CC" "$BUILD/magpie" benchmark --base-url "http://127.0.0.1:$(cat "$W/port")" \
        --model calib-model --dataset-name mooncake --dataset-path "$W/trace.jsonl" \
        --trace-block-size 32 --fixed-schedule --slowdown-factor "$SLOW" -q \
        --save-requests "$W/req.$run.jsonl" >/dev/null 2>"$W/err" || { cat "$W/err"; exit 1; }
    kill "$SRV" && wait "$SRV" 2>/dev/null
    SRV=
    cp "$W/srv.jsonl" "$W/srv.$run.jsonl"
done

python3 - "$W" "$RUNS" "$SLOW" <<'EOF'
import json, statistics, sys
W, runs, slow = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
trace = [json.loads(l) for l in open(f"{W}/trace.jsonl")]
t0 = trace[0]["timestamp"]
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p / 100 * (len(v) - 1) + 0.5))]
rows = []
for r in range(1, runs + 1):
    req = [json.loads(l) for l in open(f"{W}/req.{r}.jsonl")]
    srv = {s["rid"]: s for s in map(json.loads, open(f"{W}/srv.{r}.jsonl"))}
    sched = max(abs(q["arrival_ns"] - (trace[q["index"]]["timestamp"] - t0) * slow * 1e6) for q in req)
    late = [(q["start_ns"] - q["arrival_ns"]) / 1e3 for q in req]
    t0ns = req[0]["t0_monotonic_ns"]
    slate = [(srv[q["request_id"]]["recv_ns"] - t0ns - q["arrival_ns"]) / 1e3 for q in req]
    order = [q["index"] for q in sorted(req, key=lambda q: q["start_ns"])]
    inv = sum(1 for a, b in zip(order, order[1:]) if b < a)
    rows.append((sched, pct(late, 50), pct(late, 99), max(late), pct(slate, 50), pct(slate, 99), max(slate), inv))
print(f"{len(trace)} requests, {runs} runs, slowdown {slow}; us unless noted")
print("run  sched_err_ns  late_p50  late_p99  late_max  srv_p50  srv_p99  srv_max  inversions")
for i, r in enumerate(rows, 1):
    print(f"{i:3d}  {r[0]:12.0f}  {r[1]:8.1f}  {r[2]:8.1f}  {r[3]:8.1f}  {r[4]:7.1f}  {r[5]:7.1f}  {r[6]:7.1f}  {r[7]:10d}")
med = [statistics.median(c) for c in zip(*rows)]
print(f"med  {med[0]:12.0f}  {med[1]:8.1f}  {med[2]:8.1f}  {med[3]:8.1f}  {med[4]:7.1f}  {med[5]:7.1f}  {med[6]:7.1f}  {med[7]:10.0f}")
EOF
