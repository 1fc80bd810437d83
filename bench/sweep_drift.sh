#!/bin/bash
# Verdicts under drift: does `benchmark compare` / `benchmark sweep` call an
# unchanged server FASTER or SLOWER when the machine's speed changes between
# runs, and does it still find a real change? Against two identical
# capacity servers (tests/integration/capacity_server.py with --cpu-ms, so
# their speed depends on the CPU left to them) while a background CPU load
# (BURNERS busy processes) is switched on or off at random between runs.
#
#   1. single runs: PAIRS A/A pairs, one run a side, compared with no floor
#      (--single-run-effect 0) and with the default floor; the |change| of
#      the means per metric (what the floor must cover)
#   2. interleaved repeats: PAIRS A/A sweeps with --candidate-url and
#      --repeat REPEAT (paired t): calls over all 14 metrics
#   3. the same against a server whose TTFT is 10 % longer (--ttft-scale
#      1.1): how often TTFT mean is called SLOWER
#
# usage: bash bench/sweep_drift.sh build/release/magpie [PAIRS] [REPEAT]
#        (SECTIONS=1 runs part 1 only; default 123)
set -u
MAGPIE=${1:?magpie binary}
PAIRS=${2:-20}
REPEAT=${3:-5}
BURNERS=${BURNERS:-1}
SECTIONS=${SECTIONS:-123}
SRC=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d /tmp/mp_drift.XXXXXX)
pids=()
burn=()
cleanup() {
    [ "$BASHPID" = "$$" ] || return 0 # a background subshell (a burner) ending
    for p in "${pids[@]}" "${burn[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$W"
}
trap cleanup EXIT
server() { # name args...
    local n=$1
    shift
    python3 "$SRC/tests/integration/capacity_server.py" --capacity 8 --ttft-ms 30 --itl-ms 5 \
        --tokens 16 --cpu-ms "${CPU_MS:-0.1}" --port-file "$W/$n.port" --exit-after-s 7200 "$@" \
        >"$W/$n.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 1 200); do [ -s "$W/$n.port" ] && break; sleep 0.05; done
    URL="http://127.0.0.1:$(cat "$W/$n.port")"
}
server a; A=$URL
server a2; A2=$URL
server b --ttft-scale 1.1; B=$URL
LOAD=(--num-prompts 48 --random-input-len 16 --random-output-len 16 --max-concurrency 4 -q)
toggle() { # background load on or off at random (bounded: killed at exit)
    if [ $((RANDOM % 2)) = 0 ]; then
        for p in "${burn[@]}"; do kill "$p" 2>/dev/null; done
        burn=()
    elif [ ${#burn[@]} = 0 ]; then
        for _ in $(seq 1 "$BURNERS"); do
            timeout 3600 python3 -c 'while True: pass' &
            burn+=($!)
        done
    fi
}
SWEEP_LOAD=(--num-prompts 48 --random-input-len 16 --random-output-len 16 -q)

echo "1. single runs: $PAIRS A/A pairs"
for i in $(seq 1 "$PAIRS"); do
    toggle
    "$MAGPIE" benchmark --base-url "$A" "${LOAD[@]}" --save-result --result-dir "$W/s" \
        --result-filename "a$i.json" >/dev/null 2>>"$W/errors.log" || cat "$W/errors.log" >&2
    toggle
    "$MAGPIE" benchmark --base-url "$A2" "${LOAD[@]}" --save-result --result-dir "$W/s" \
        --result-filename "b$i.json" >/dev/null 2>>"$W/errors.log" || cat "$W/errors.log" >&2
    "$MAGPIE" benchmark compare "$W/s/a$i.json" "$W/s/b$i.json" --single-run-effect 0 --json \
        >"$W/s/nofloor$i.json"
    "$MAGPIE" benchmark compare "$W/s/a$i.json" "$W/s/b$i.json" --json >"$W/s/floor$i.json"
done
echo "2. interleaved: $PAIRS A/A sweeps, --repeat $REPEAT"
for i in $(seq 1 "$PAIRS"); do
    [[ $SECTIONS == *2* ]] || break
    toggle
    "$MAGPIE" benchmark sweep --base-url "$A" --candidate-url "$A2" -o "$W/aa$i" \
        --max-concurrency 4 --repeat "$REPEAT" "${SWEEP_LOAD[@]}" >/dev/null 2>&1 &
    sp=$!
    while kill -0 $sp 2>/dev/null; do sleep 2; toggle; done
done
echo "3. interleaved: $PAIRS A/B sweeps, TTFT +10 %"
for i in $(seq 1 "$PAIRS"); do
    [[ $SECTIONS == *3* ]] || break
    toggle
    "$MAGPIE" benchmark sweep --base-url "$A" --candidate-url "$B" -o "$W/ab$i" \
        --max-concurrency 4 --repeat "$REPEAT" "${SWEEP_LOAD[@]}" >/dev/null 2>&1 &
    sp=$!
    while kill -0 $sp 2>/dev/null; do sleep 2; toggle; done
done
for p in "${burn[@]}"; do kill "$p" 2>/dev/null; done
burn=()
python3 - "$W" "$PAIRS" <<'PY'
import glob, json, statistics, sys
w, n = sys.argv[1], int(sys.argv[2])
def calls(c):
    return c["faster"] + c["slower"] > 0
nofloor = [json.load(open(f"{w}/s/nofloor{i}.json"))["candidates"][0] for i in range(1, n + 1)]
floor = [json.load(open(f"{w}/s/floor{i}.json"))["candidates"][0] for i in range(1, n + 1)]
print(f"single runs, A/A: a FASTER/SLOWER call in {sum(map(calls, nofloor))}/{n} pairs without "
      f"a floor, {sum(map(calls, floor))}/{n} with the default floor")
called = {}
for c in floor:
    for m in c["metrics"]:
        if m["verdict"] in ("FASTER", "SLOWER"):
            called.setdefault(m["name"], []).append(round(m["change_pct"], 1))
print(f"  called with the floor: {called}")
for name in ("ttft_mean_ms", "tpot_mean_ms", "itl_mean_ms", "e2el_mean_ms", "output_throughput"):
    ch = sorted(abs(m["change_pct"]) for c in nofloor for m in c["metrics"] if m["name"] == name)
    print(f"  |change| of {name}: median {statistics.median(ch):.2f} %, 90th "
          f"{ch[int(0.9 * (len(ch) - 1))]:.2f} %, max {ch[-1]:.2f} %")
def paired(prefix):
    out = []
    for i in range(1, n + 1):
        try:
            c = json.load(open(f"{w}/{prefix}{i}/compare.json"))
        except OSError:
            continue
        out.append(c["points"][0]["compare"]["candidates"][0])
    return out
aa, ab = paired("aa"), paired("ab")
if not aa or not ab:
    sys.exit(0)
print(f"interleaved A/A: a call in {sum(map(calls, aa))}/{len(aa)} sweeps")
ci = sorted((round(m["ci_lo_pct"], 1), round(m["ci_hi_pct"], 1), round(m["p_holm"], 4))
            for c in ab for m in c["metrics"] if m["name"] == "ttft_mean_ms")
print(f"  A/B TTFT mean intervals and Holm p: {ci}")
slower = sum(1 for c in ab for m in c["metrics"] if m["name"] == "ttft_mean_ms" and m["verdict"] == "SLOWER")
chg = [m["change_pct"] for c in ab for m in c["metrics"] if m["name"] == "ttft_mean_ms"]
print(f"interleaved A/B (TTFT +10 %): TTFT mean SLOWER in {slower}/{len(ab)} sweeps, measured "
      f"change median {statistics.median(chg):.1f} % (min {min(chg):.1f}, max {max(chg):.1f})")
PY
