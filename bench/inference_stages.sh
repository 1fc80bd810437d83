#!/usr/bin/env bash
# bench/inference_stages.sh: Magpie's inference post-processing, magpie vs
# TraceLens, on the same serving traces in the same run.
#
#   bash bench/inference_stages.sh build/release/magpie
#   TL_PYTHON=/tmp/tlvenv/bin/python TL_SRC=/tmp/tlsrc bash bench/inference_stages.sh build/release/magpie
#
# Two timings per dataset, magpie BENCH_RUNS times (default 5) pinned to one
# CPU with bench_runrss, TraceLens once (when TL_PYTHON, a Python with pandas,
# and TL_SRC, a TraceLens checkout outside this repo, are given):
#   split   magpie trace split T -o D --find-steady-state --store-single-iteration
#           --num-steps 32  vs  TraceLens_split_inference_trace with the same options
#           (Magpie's splitter call without --CONC/--OSL/--R); execution_details.csv
#           must be identical.
#   stages  magpie trace stages (split + one step per stage + three inference
#           reports + roofline CSVs)  vs  TraceLens's splitter followed by
#           TraceLens_generate_perf_report_pytorch_inference --group_by_parent_module
#           --enable_pseudo_ops --group_by_num_kernels on the three steps magpie
#           picked (the commands Magpie runs; their times summed).
# Datasets: the real H200 Mixtral serving trace (13 steps, 25.9 MB of JSON)
# and the ~100 MB synthetic trace trace_ingest.sh makes from it (4 replicas,
# 52 steps; run `make bench` once first, or it is skipped).
set -u
MAGPIE=${1:-build/release/magpie}
here=$(cd "$(dirname "$0")" && pwd)
bindir=$(cd "$(dirname "$MAGPIE")" && pwd)/bench
runrss=$bindir/bench_runrss
SHARED=${MP_SHARED:-$here/../../shared}
BENCH_DIR=${BENCH_DIR:-/tmp/magpie-bench}
RUNS=${BENCH_RUNS:-5}
CPU=${BENCH_CPU:-1}
[ -x "$MAGPIE" ] && [ -x "$runrss" ] || { echo "build first: make build"; exit 2; }
[ -d "$SHARED/data/traces" ] || { echo "SKIPPED: no shared traces at $SHARED"; exit 0; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -a names=(real-gz synth-100mb)
declare -A files=(
    [real-gz]="$SHARED/data/traces/h200/mixtral_shape_l8_bs16_p256_d12.json.gz"
    [synth-100mb]="$BENCH_DIR/data/synth_100mb/synth_100mb.json"
)
stat_of() { # median, min, max of wall; max rss (MB) over json lines
    python3 - "$@" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for f in sys.argv[1:] for l in open(f)]
w = sorted(r["wall_s"] for r in rows); m = [r["maxrss_kb"] / 1024 for r in rows]
print(f"{statistics.median(w):.3f} {min(w):.3f} {max(w):.3f} {max(m):.1f}")
PY
}
sum_of() { # summed wall and max rss of json lines (one TraceLens pipeline)
    python3 - "$@" <<'PY'
import json, sys
rows = [json.loads(l) for f in sys.argv[1:] for l in open(f)]
print(f"{sum(r['wall_s'] for r in rows):.3f} {max(r['maxrss_kb'] for r in rows) / 1024:.1f}")
PY
}
printf '%-12s %-7s %-9s %4s %10s %17s %10s\n' dataset task tool runs "wall s" "[min-max]" "RSS MB"
summary=()
for name in "${names[@]}"; do
    f=${files[$name]}
    [ -f "$f" ] || { echo "$name: $f missing (run make bench first), skipped"; continue; }
    # -- split
    : >"$out/$name.ms.json"
    for _ in $(seq "$RUNS"); do
        rm -rf "$out/$name-split"
        "$runrss" --cpu "$CPU" -o "$out/$name.ms.json" -- "$MAGPIE" trace split "$f" \
            -o "$out/$name-split" --find-steady-state --store-single-iteration --num-steps 32 -q >/dev/null
    done
    read -r smed smin smax srss < <(stat_of "$out/$name.ms.json")
    printf '%-12s %-7s %-9s %4s %10s %17s %10s\n' "$name" split magpie "$RUNS" "$smed" "[$smin-$smax]" "$srss"
    # -- stages
    mkdir -p "$out/$name-ws/torch_trace"
    ln -sf "$f" "$out/$name-ws/torch_trace/$(basename "$f" .json).json.gz"
    : >"$out/$name.mt.json"
    for _ in $(seq "$RUNS"); do
        rm -rf "$out/$name-ws/tracelens" "$out/$name-ws/torch_trace/trace_split"
        "$runrss" --cpu "$CPU" -o "$out/$name.mt.json" -- "$MAGPIE" trace stages \
            "$out/$name-ws/torch_trace" -o "$out/$name-ws" --conc 16 --isl 256 --osl 12 -q >/dev/null
    done
    read -r tmed tmin tmax trss < <(stat_of "$out/$name.mt.json")
    printf '%-12s %-7s %-9s %4s %10s %17s %10s\n' "$name" stages magpie "$RUNS" "$tmed" "[$tmin-$tmax]" "$trss"
    [ -n "${TL_PYTHON:-}" ] && [ -n "${TL_SRC:-}" ] || continue
    PYTHONPATH=$TL_SRC "$runrss" --cpu "$CPU" -o "$out/$name.ts.json" -- "$TL_PYTHON" -m \
        TraceLens.TraceUtils.split_inference_trace_annotation "$f" -o "$out/$name-tlsplit" \
        --find-steady-state --store-single-iteration --num-steps 32 >/dev/null 2>&1
    read -r tsw tsrss < <(sum_of "$out/$name.ts.json")
    printf '%-12s %-7s %-9s %4s %10s %17s %10s\n' "$name" split tracelens 1 "$tsw" "" "$tsrss"
    if cmp -s <(sed "s#$out/$name-split/##" "$out/$name-split/execution_details.csv") \
        <(sed "s#$out/$name-tlsplit/##" "$out/$name-tlsplit/execution_details.csv"); then
        same=identical
    else
        same=DIFFER
    fi
    # TraceLens's stage pipeline: its split (with Magpie's CONC/OSL/R) + 3 reports
    PYTHONPATH=$TL_SRC "$runrss" --cpu "$CPU" -o "$out/$name.tt.json" -- "$TL_PYTHON" -m \
        TraceLens.TraceUtils.split_inference_trace_annotation "$f" -o "$out/$name-tlsplit2" \
        --find-steady-state --store-single-iteration --num-steps 32 --CONC 16 --OSL 12 --R 1.0 >/dev/null 2>&1
    for st in prefilldecode decode_only prefill_only; do
        pick=$(python3 -c "import json,os,sys; d=json.load(open(sys.argv[1])); s={'prefilldecode':'prefilldecode','decode_only':'decode','prefill_only':'prefill'}[sys.argv[2]]; p=d['phase_picks'][s]['trace_path']; print(os.path.basename(p) if p else '')" "$out/$name-ws/tracelens/tracelens_analysis.json" "$st")
        [ -n "$pick" ] || continue
        PYTHONPATH=$TL_SRC "$runrss" --cpu "$CPU" -o "$out/$name.tt.json" -- "$TL_PYTHON" -m \
            TraceLens.Reporting.generate_perf_report_pytorch_inference --profile_json_path \
            "$out/$name-tlsplit2/$pick" --output_csvs_dir "$out/$name-tl-$st" \
            --group_by_parent_module --enable_pseudo_ops --group_by_num_kernels >/dev/null 2>&1
    done
    read -r ttw ttrss < <(sum_of "$out/$name.tt.json")
    printf '%-12s %-7s %-9s %4s %10s %17s %10s\n' "$name" stages tracelens 1 "$ttw" "" "$ttrss"
    summary+=("$(python3 -c "print('%-12s split %6.1fx (RSS %5.1fx, execution_details %s)   stages %6.1fx (RSS %5.1fx)' % ('$name', $tsw/$smed, $tsrss/$srss, '$same', $ttw/$tmed, $ttrss/$trss))")")
done
[ ${#summary[@]} -gt 0 ] && printf '%s\n' "" "${summary[@]}"
exit 0
