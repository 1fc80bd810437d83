#!/usr/bin/env bash
# bench/tracelens_report.sh: full TraceLens-compatible report (magpie trace
# report) vs TraceLens itself, on the same traces in the same run.
# Both make the same sheets: TraceLens with --enable_kernel_summary
# --short_kernel_study, magpie with its defaults (the same two on).
#
#   bash bench/tracelens_report.sh build/release/magpie
#   TL_PYTHON=/tmp/tlvenv/bin/python TL_SRC=/tmp/tlsrc bash bench/tracelens_report.sh build/release/magpie
#
# magpie runs BENCH_RUNS times (default 5) pinned to one CPU (bench_runrss
# --cpu); TraceLens runs once per trace when TL_PYTHON (a Python with pandas)
# and TL_SRC (a TraceLens checkout, outside this repo) are given, and the two
# reports are compared with tests/tools/tl_compare.py. Prints medians with the
# spread (wall and user+sys CPU), peak RSS, and the ratio. Datasets: the
# real H200 Mixtral trace (25.9 MB of JSON, gzip) and the ~100 MB synthetic
# trace made by trace_ingest.sh, plain and gzip (run `make bench` once
# first, or they are skipped); BENCH_DATASETS="real-gz ..." picks some.
# BENCH_CPU=none runs unpinned (magpie then uses both cores: its parse
# pipeline and side thread for sheets); MAGPIE_THREADS=1 in the
# environment makes magpie use one thread.
set -u
MAGPIE=${1:-build/release/magpie}
here=$(cd "$(dirname "$0")" && pwd)
bindir=$(cd "$(dirname "$MAGPIE")" && pwd)/bench
runrss=$bindir/bench_runrss
SHARED=${MP_SHARED:-$here/../../shared}
BENCH_DIR=${BENCH_DIR:-/tmp/magpie-bench}
RUNS=${BENCH_RUNS:-5}
CPU=${BENCH_CPU:-1}
pin=(--cpu "$CPU")
[ "$CPU" = none ] && pin=()
[ -x "$MAGPIE" ] && [ -x "$runrss" ] || { echo "build first: make build"; exit 2; }
[ -d "$SHARED/data/traces" ] || { echo "SKIPPED: no shared traces at $SHARED"; exit 0; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
declare -a names=(${BENCH_DATASETS:-real-gz synth-100mb synth-100mb-gz})
declare -A files=(
    [real-gz]="$SHARED/data/traces/h200/mixtral_shape_l8_bs16_p256_d12.json.gz"
    [synth-100mb]="$BENCH_DIR/data/synth_100mb/synth_100mb.json"
    [synth-100mb-gz]="$BENCH_DIR/data/synth_100mb_gz/synth_100mb.json.gz"
)
py_stat() { # median and min-max of wall and max rss over json lines
    python3 - "$@" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for f in sys.argv[1:] for l in open(f)]
w = sorted(r["wall_s"] for r in rows); m = [r["maxrss_kb"] / 1024 for r in rows]
c = statistics.median(r["cpu_s"] for r in rows)
print(f"{statistics.median(w):.3f} {min(w):.3f} {max(w):.3f} {max(m):.1f} {c:.3f}")
PY
}
printf '%-12s %-9s %4s %10s %17s %10s %8s\n' dataset tool runs "wall s" "[min-max]" "RSS MB" "cpu s"
summary=()
for name in "${names[@]}"; do
    f=${files[$name]}
    if [ ! -f "$f" ]; then
        echo "$name: $f missing (run make bench first), skipped"
        continue
    fi
    "$MAGPIE" trace report "$f" -o "$out/$name-magpie" -q >/dev/null # warm-up
    : >"$out/$name.m.json"
    for _ in $(seq "$RUNS"); do
        "$runrss" "${pin[@]}" -o "$out/$name.m.json" -- \
            "$MAGPIE" trace report "$f" -o "$out/$name-magpie" -q --no-summary >/dev/null 2>&1 ||
            "$runrss" "${pin[@]}" -o "$out/$name.m.json" -- \
                "$MAGPIE" trace report "$f" -o "$out/$name-magpie" -q >/dev/null
    done
    read -r mmed mmin mmax mrss mcpu < <(py_stat "$out/$name.m.json")
    printf '%-12s %-9s %4s %10s %17s %10s %8s\n' "$name" magpie "$RUNS" "$mmed" "[$mmin-$mmax]" "$mrss" "$mcpu"
    if [ -n "${TL_PYTHON:-}" ] && [ -n "${TL_SRC:-}" ]; then
        PYTHONPATH=$TL_SRC "$runrss" "${pin[@]}" -o "$out/$name.t.json" -- "$TL_PYTHON" -m \
            TraceLens.Reporting.generate_perf_report_pytorch --profile_json_path "$f" \
            --output_csvs_dir "$out/$name-tl" --enable_kernel_summary --short_kernel_study >/dev/null 2>&1
        read -r tmed _ _ trss tcpu < <(py_stat "$out/$name.t.json")
        printf '%-12s %-9s %4s %10s %17s %10s %8s\n' "$name" tracelens 1 "$tmed" "" "$trss" "$tcpu"
        sheets=$(cd "$out/$name-tl" && ls *.csv | sed 's/\.csv$//' | tr '\n' ' ')
        # shellcheck disable=SC2086
        if python3 "$here/../tests/tools/tl_compare.py" "$out/$name-tl" "$out/$name-magpie" $sheets >"$out/$name.cmp"; then
            same=MATCH
        else
            same=DIFFER
            cat "$out/$name.cmp"
        fi
        summary+=("$(python3 -c "print(f'%-12s speedup %6.1fx  cpu ratio %6.1fx  RSS ratio %6.1fx  sheets %s' % ('$name', $tmed/$mmed, $tcpu/$mcpu, $trss/$mrss, '$same'))")")
    fi
done
[ ${#summary[@]} -gt 0 ] && printf '%s\n' "" "${summary[@]}"
exit 0
