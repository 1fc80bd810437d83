#!/bin/bash
# Issue 33: how long a compare takes, before (--timing fixed: a process per
# kernel for correctness, then every kernel timed to its noise target) and
# after (the default, --timing sequential: one warm process, the reference
# per seed computed once, each candidate stopped at a decision), with the
# verdicts of both; then the sequential decision's error rates.
#
#   OUT=DIR MAGPIE=$PWD/.klibs/magpie bench/kernel_eval_speed.sh [PART]
#
# Per suite: fixed, sequential (a fresh output root: the reference computed
# and written to its disk cache), and sequential-warm (a second compare in
# one output root: the reference's outputs read back, as an agent's next
# compare of the same problem would).
#
# from the repository root on a GPU machine (Triton). PART: suites (the three
# suites below, each fixed then sequential), seqerr (the error check), or
# all (default). N (default 10): trials of each error check. MODES: the
# modes each suite runs before the warm pair (default "fixed sequential"). SUITES: the
# suite YAMLs to run (default the three below). Writes
# $OUT/summary.txt, per run the terminal summary ($OUT/NAME.MODE.txt) and
# the report ($OUT/NAME.MODE.json), and $OUT/seqerr.txt.
#
# Suites: bench/kernel_suites/softmax7.yaml (row softmax 4096 x 8192 fp32,
# 7 candidates), bench/kernel_suites/silu3.yaml (SiLU-and-mul, 50M bf16, 3
# candidates), examples/kernels/pytorch/compare_2pct.yaml (Triton add, its
# copy, a ~2.7 % slower variant). Error check: speedup1pct.yaml (a ~1 %
# faster candidate; --min-effect 0.5, as a 1 % band cannot call a 1 %
# effect) N times: how often FASTER, and the timed GPU seconds of each
# compare (bar: <= 1 s); twin.yaml (a kernel against its copy, default
# band) N times: FASTER/SLOWER calls (bar: 0). One fixed-mode run of
# speedup1pct.yaml first measures the true ratio. WARM=1: every compare
# goes through one `magpie warm-pool` (the runner kept between compares).
#
# --timing fixed keeps the old process structure and stop rule but has the
# runner's in-process reference cache; for the evaluation exactly as it
# was, build the commit before issue 33 (7135268) and give its binary as
# MAGPIE_BEFORE: each suite then also runs with it (mode "before").
set -u
OUT=${OUT:-/tmp/kernel_eval_speed}
M=${MAGPIE:-build/rel-k/magpie}
N=${N:-10}
PART=${1:-all}
export PATH=$PATH:/usr/local/cuda/bin
mkdir -p "$OUT"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
summary=$OUT/summary.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw \
    --format=csv,noheader >>"$summary" 2>&1

# report JSON -> "id=VERDICT(speedup) ... timed=GPU s"
verdicts() {
    python3 - "$1" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))["results"]
except Exception as e:
    print("no report (%s)" % e)
    sys.exit(0)
cm = d["comparison_metrics"]
out, timed = [], 0.0
for i, k in enumerate(d["kernel_results"]):
    v, sp = cm["verdicts"][i], cm["speedup_vs_baseline"][i]
    s = k["extra"]["kernel_id"] + "=" + v
    if sp.get("speedup") is not None and v not in ("BASELINE", "INCORRECT"):
        s += "(%.4fx [%s, %s] %s)" % (sp["speedup"], sp["ci95"][0], sp["ci95"][1], sp["ci_kind"])
    out.append(s)
    ph = ((k.get("time_breakdown") or {}).get("timed_process") or {}).get("phases") or {}
    timed += ph.get("timed_device_s") or 0.0
print(" ".join(out), "timed_gpu=%.3fs" % timed)
PY
}

# run NAME MODE YAML [magpie flags]: one compare, its wall time and verdicts.
# ROOT (env): the output root (default a fresh one: no reference cache from
# an earlier run); LABEL (env): the mode's name in the output.
run() {
    local name=$1 mode=$2 yaml=$3
    shift 3
    local dir=${ROOT:-$W/$name.$mode.$RANDOM}
    local label=${LABEL:-$mode}
    local t0 bin=$M
    local flags=(--timing "$mode")
    if [ "$mode" = before ]; then
        bin=$MAGPIE_BEFORE
        flags=()
    fi
    t0=$(date +%s.%N)
    timeout 500 "$bin" compare --no-perf "${flags[@]}" "$@" -o "$dir" -k "$yaml" \
        >"$OUT/$name.$label.txt" 2>&1
    local rc=$?
    local wall
    wall=$(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}")
    local rep
    rep=$(ls -t "$dir"/compare_*/compare_report.json 2>/dev/null | head -1)
    [ -n "$rep" ] && cp "$rep" "$OUT/$name.$label.json"
    echo "$name $label rc=$rc wall=${wall}s $(verdicts "${rep:-/nonexistent}")"
}

if [ "${WARM:-0}" = 1 ]; then
    # every compare through one `magpie warm-pool` (what an agent's loop uses)
    eval "$("$M" warm-pool --daemon --exit-after 120)"
    trap 'kill $MAGPIE_WARM_POOL_PID 2>/dev/null; rm -rf "$W"' EXIT
    echo "compares through warm-pool $MAGPIE_WARM_SOCKET" >>"$summary"
fi

if [ "$PART" = all ] || [ "$PART" = suites ]; then
    for s in ${SUITES:-bench/kernel_suites/softmax7.yaml bench/kernel_suites/silu3.yaml \
        examples/kernels/pytorch/compare_2pct.yaml}; do
        name=$(basename "$s" .yaml)
        modes=${MODES:-fixed sequential}
        [ -n "${MAGPIE_BEFORE:-}" ] && modes="before $modes"
        for mode in $modes; do
            run "$name" "$mode" "$s" | tee -a "$summary"
        done
        # the agent's next compare of the same problem: the reference's
        # outputs on disk from the first (the default mode, one output root)
        ROOT=$W/$name.root run "$name" sequential "$s" >/dev/null
        sleep 1 # a workspace of its own
        ROOT=$W/$name.root LABEL=sequential-warm run "$name" sequential "$s" | tee -a "$summary"
    done
fi

if [ "$PART" = all ] || [ "$PART" = seqerr ]; then
    err=$OUT/seqerr.txt
    run speedup1pct fixed bench/kernel_suites/speedup1pct.yaml --min-effect 0.5 | tee -a "$err"
    # one trial of each check per round, so a run cut short still has both
    faster=0 cheap=0 calls=0
    for t in $(seq 1 "$N"); do
        s0=$(date +%s.%N)
        line=$(run speedup1pct sequential bench/kernel_suites/speedup1pct.yaml --min-effect 0.5)
        echo "speedup trial $t: $line" >>"$err"
        case $line in *"fma_398=FASTER"*) faster=$((faster + 1)) ;; esac
        g=$(echo "$line" | sed -n 's/.*timed_gpu=\([0-9.]*\)s.*/\1/p')
        case $line in *"fma_398=INCORRECT"*) ;; *)
            awk "BEGIN{exit !(${g:-99} <= 1.0)}" && cheap=$((cheap + 1)) ;;
        esac
        line=$(run twin sequential bench/kernel_suites/twin.yaml)
        echo "twin trial $t: $line" >>"$err"
        case $line in *"add_plain_copy=FASTER"* | *"add_plain_copy=SLOWER"*) calls=$((calls + 1)) ;; esac
        echo "round $t: FASTER $faster/$t, timed <= 1 s $cheap/$t, twin FASTER/SLOWER $calls/$t ($(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $s0}") s)" >>"$err"
    done
    echo "1 % speedup, --min-effect 0.5: FASTER in $faster of $N; timed GPU <= 1 s in $cheap of $N" |
        tee -a "$err" "$summary"
    echo "identical copy, default band: FASTER/SLOWER in $calls of $N" | tee -a "$err" "$summary"
fi
echo "results in $OUT" >&2
