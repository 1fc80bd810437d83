#!/usr/bin/env bash
# `magpie warm-pool` against cold CLI evaluations (docs/kernel-timing.md,
# "Warm runners"): the same analyze run RUNS times cold (no pool) and RUNS
# times with MAGPIE_WARM_SOCKET set, alternated, after one warm-up of the
# pool; prints each wall time, the medians and the cold/warm ratio.
#
#   bench/warm_pool_cli.sh [MAGPIE] [YAML]
#     MAGPIE default build/release/magpie; YAML default
#     examples/kernels/pytorch/analyze.yaml (from the repository root);
#     env RUNS (5), MAGPIE_PYTHON (an interpreter with torch for PyTorch
#     kernels; ~/.cache/magpie/torch-venv if present).
set -u
M=$(realpath "${1:-build/release/magpie}")
Y=${2:-examples/kernels/pytorch/analyze.yaml}
RUNS=${RUNS:-5}
[ -n "${MAGPIE_PYTHON:-}" ] || { [ -x "$HOME/.cache/magpie/torch-venv/bin/python3" ] &&
    export MAGPIE_PYTHON=$HOME/.cache/magpie/torch-venv/bin/python3; }
export MAGPIE_RUNTIME_DIR=${MAGPIE_RUNTIME_DIR:-$PWD/runtime}
W=$(mktemp -d "${TMPDIR:-/tmp}/warmbench.XXXXXX")
eval "$("$M" warm-pool --daemon --exit-after 300)"
trap 'kill $MAGPIE_WARM_POOL_PID 2>/dev/null; rm -rf "$W"' EXIT
sock=$MAGPIE_WARM_SOCKET
unset MAGPIE_WARM_SOCKET
one() { # one NAME SOCKET: wall seconds of one analyze
    local s e
    s=$(date +%s.%N)
    MAGPIE_WARM_SOCKET=$2 "$M" analyze -k "$Y" -o "$W/$1" --json -q >"$W/$1.json" 2>"$W/$1.err" ||
        echo "  ($1 exited $?: $(tail -1 "$W/$1.err"))" >&2
    e=$(date +%s.%N)
    python3 -c "print('%.3f' % ($e - $s))"
}
one warmup "$sock" >/dev/null
cold=() warm=()
for i in $(seq 1 "$RUNS"); do
    c=$(one "cold$i" "")
    w=$(one "warm$i" "$sock")
    cold+=("$c")
    warm+=("$w")
    echo "run $i: cold $c s, warm $w s"
done
python3 - "${cold[*]}" "${warm[*]}" "$W" "$RUNS" <<'PY'
import json, statistics, sys
c = [float(x) for x in sys.argv[1].split()]
w = [float(x) for x in sys.argv[2].split()]
print("cold median %.3f s (%.3f-%.3f), warm median %.3f s (%.3f-%.3f), cold/warm %.2fx" % (
    statistics.median(c), min(c), max(c), statistics.median(w), min(w), max(w),
    statistics.median(c) / statistics.median(w)))
for tag in ("cold", "warm"):
    v = []
    for i in range(1, int(sys.argv[4]) + 1):
        r = json.load(open("%s/%s%d.json" % (sys.argv[3], tag, i)))["results"][0]
        v.append(r["correctness_state"])
        tp = r["time_breakdown"].get("timed_process", {})
    print("%s verdicts %s; last timed_process: warm=%s imports_s=%s" % (
        tag, sorted(set(v)), tp.get("warm"), tp.get("imports_s")))
PY
