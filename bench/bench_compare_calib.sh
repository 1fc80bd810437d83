#!/bin/bash
# Calibration of `magpie benchmark compare` (issue 15's check): how often a
# known change is found and how often an identical setting is called
# different.
#
#  1. bench_compare_calib: 100 seeded trials on synthetic runs drawn from the
#     calibration server's timing model (seconds; src/loadgen/compare_sim.c);
#  2. N trials against the real tests/calib/calib_server (default 3; each
#     is three real benchmark runs of 1000 requests at 40 req/s, ~25 s each):
#     a baseline, the same schedule with other server noise (--seed), and the
#     known change (--scale-ttft 1.05 --scale-itl 1.03), compared in one call.
#
# usage: bench/bench_compare_calib.sh [BUILD_DIR] [REAL_TRIALS]
#        (BUILD_DIR default build/release; its magpie, bench/bench_compare_calib
#        and tests/calib/calib_server are used)
set -u
B=${1:-build/release}
REAL=${2:-3}
MAGPIE=$B/magpie
CALIB=$B/tests/calib/calib_server
SIM=${SIM:-$B/bench/bench_compare_calib}
W=$(mktemp -d /tmp/mp_bcmp_bench.XXXXXX)
SRV=
trap '[ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$W"' EXIT

echo "== synthetic: 100 seeded trials =="
"$SIM" --trials 100
echo
echo "== real calib_server: $REAL trials =="
cat >"$W/sched.json" <<'EOS'
{"seed": 1, "default": {"ttft_ms": [40, 60], "itl_ms": [8, 12]}}
EOS
run() { # label server-seed scale-ttft scale-itl
    rm -f "$W/port"
    "$CALIB" --schedule "$W/sched.json" --port-file "$W/port" --seed "$2" --scale-ttft "$3" \
        --scale-itl "$4" --exit-after-s 300 >/dev/null 2>&1 &
    SRV=$!
    for _ in $(seq 200); do [ -s "$W/port" ] && break; sleep 0.05; done
    "$MAGPIE" benchmark --base-url "http://127.0.0.1:$(cat "$W/port")" --model calib-model \
        --num-prompts 1000 --random-input-len 32 --random-output-len 32 --request-rate 40 \
        --seed 11 --save-result --result-dir "$W" --result-filename "$1.json" -q >/dev/null 2>&1
    kill "$SRV" 2>/dev/null
    wait "$SRV" 2>/dev/null
    SRV=
}
for t in $(seq "$REAL"); do
    run "base$t" $((3 * t)) 1 1
    run "same$t" $((3 * t + 1)) 1 1
    run "chg$t" $((3 * t + 2)) 1.05 1.03
    # the within-run statistics (the floor for single runs is measured by
    # bench/sweep_drift.sh)
    "$MAGPIE" benchmark compare "$W/base$t.json" "$W/same$t.json" "$W/chg$t.json" --seed "$t" \
        --single-run-effect 0 --json >"$W/cmp$t.json"
done
python3 - "$W" "$REAL" <<'EOP'
import json, sys
w, n = sys.argv[1], int(sys.argv[2])
det = clean = 0
per = {}
for t in range(1, n + 1):
    j = json.load(open(f"{w}/cmp{t}.json"))
    same, chg = j["candidates"]
    ok_same = all(m["verdict"] == "WITHIN NOISE" for m in same["metrics"])
    ok_chg = True
    for m in chg["metrics"]:
        want = "WITHIN NOISE" if m["higher_is_better"] else "SLOWER"
        right = m["verdict"] == want
        ok_chg &= right
        s = per.setdefault(m["name"], [0, 0, []])
        s[0] += right
        s[2].append(round(m["change_pct"], 2))
    for m in same["metrics"]:
        per[m["name"]][1] += m["verdict"] == "WITHIN NOISE"
    det += ok_chg
    clean += ok_same
print(f"known change: every metric right in {det} of {n} trials; identical: every metric "
      f"WITHIN NOISE in {clean} of {n} (false-positive rate {100 * (n - clean) / n:.0f} %)")
print(f"  {'metric':18} {'change right':>12} {'same in noise':>14}  measured change %")
for k, (a, b, c) in per.items():
    print(f"  {k:18} {a:>8}/{n:<3} {b:>10}/{n:<3}  {c}")
EOP
