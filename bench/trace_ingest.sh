#!/usr/bin/env bash
# bench/trace_ingest.sh: trace ingest + gap analysis throughput, magpie vs a Python peer.
#
#   bash bench/trace_ingest.sh [build/release/magpie]        (what `make bench` runs)
#
# Runs `magpie benchmark --trace-dir D --json` (standalone gap analysis) on a real
# H200 trace and on synthetic traces grown from it (~100 MB and ~1 GB of JSON,
# plain and gzip), each BENCH_RUNS times pinned to one CPU, and the Python peer
# (bench/peer_gap.py: json.load + dict passes, as Magpie does it) on the same
# data; prints median and min-max of wall time, MB/s of uncompressed JSON,
# events/s and peak RSS, the magpie/peer ratios, and whether the two CSVs are
# identical. Builds nothing: it uses the magpie binary given and the bench
# helpers built beside it (build/<preset>/bench/bench_runrss, bench_gen_synth).
# See bench/README.md for the columns and recorded results.
#
# Environment:
#   BENCH_RUNS=5          magpie runs per dataset (after one untimed warm-up run)
#   BENCH_PEER_RUNS=3     peer runs on the real trace (1 on ~100 MB, 0 on ~1 GB)
#   BENCH_PEER_BIG=0      1 = also run the peer once on the ~1 GB plain JSON (~5 GB RAM, ~50 s)
#   BENCH_DIR=/tmp/magpie-bench   scratch dir for datasets (reused) and outputs
#   BENCH_CPU=<last CPU>  CPU to pin to; "none" = no pinning
#   BENCH_DATASETS="real-gz real-json synth-100mb synth-100mb-gz synth-1gb synth-1gb-gz"  subset to run
#   BENCH_TOPK=20         --top-k for the timed runs (untimed correctness cases on the
#                         real trace also compare every kernel row, filters and 2 ranks)
#   MAGPIE_SHARED=<repo>/../shared   where data/traces lives
#
# Exit: 0 when every run succeeded and every compared CSV matched; 1 otherwise.
# Performance targets are printed (PASS/MISS), never turned into a failure.
set -u -o pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
magpie=${1:-$root/build/release/magpie}
[[ $magpie == /* ]] || magpie=$PWD/$magpie
bindir=$(dirname "$magpie")/bench
runrss=$bindir/bench_runrss
gen=$bindir/bench_gen_synth
shared=${MAGPIE_SHARED:-$root/../shared}
real=$shared/data/traces/h200/mixtral_shape_l8_bs16_p256_d12.json.gz

if [[ ! -f $real ]]; then
    echo "trace_ingest: SKIPPED ($real not found: the shared data dir is missing)"
    exit 0
fi
for b in "$magpie" "$runrss" "$gen"; do
    if [[ ! -x $b ]]; then
        echo "trace_ingest: $b not built; run 'make build' first" >&2
        exit 2
    fi
done
if ! command -v python3 >/dev/null; then
    echo "trace_ingest: SKIPPED (python3 is needed for the peer and the report)"
    exit 0
fi

runs=${BENCH_RUNS:-5}
peer_runs=${BENCH_PEER_RUNS:-3}
peer_big=${BENCH_PEER_BIG:-0}
topk=${BENCH_TOPK:-20}
bench_dir=${BENCH_DIR:-/tmp/magpie-bench}
datasets=${BENCH_DATASETS:-real-gz real-json synth-100mb synth-100mb-gz synth-1gb synth-1gb-gz}
ncpu=$(nproc 2>/dev/null || echo 1)
cpu=${BENCH_CPU:-$((ncpu - 1))}
pin=()
[[ $cpu == none ]] || pin=(--cpu "$cpu")

data=$bench_dir/data
stamp=$(date -u +%Y%m%dT%H%M%SZ)
rundir=$bench_dir/runs/$stamp
mkdir -p "$data" "$rundir" || exit 2

echo "== magpie trace ingest benchmark ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo "machine : $(uname -srm), $ncpu CPU(s): $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')"
echo "          $(awk '/MemTotal/ {printf "%.1f GiB RAM", $2/1048576}' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg) (anything busy competes for the pinned CPU)"
echo "magpie  : $magpie ($("$magpie" --version 2>/dev/null | head -1))"
echo "peer    : $here/peer_gap.py ($(python3 --version 2>&1))"
if [[ $cpu == none ]]; then pinned="not pinned"; else pinned="CPU $cpu (sched_setaffinity)"; fi
echo "pinning : $pinned; runs: magpie $runs (+1 warm-up), peer $peer_runs / $((peer_runs > 0 ? 1 : 0)) / $((peer_big == 1 ? 1 : 0)) (real / 100 MB / 1 GB)"
echo "data    : $data   runs: $rundir"
echo

# ---------------------------------------------------------------- datasets
# gen_dataset DST TARGET_MB: synthetic trace, reused when its stamp matches.
gen_dataset() {
    local dst=$1 target=$2
    # Sidecar files live outside the trace dir: magpie and the peer would read any *.json.
    local st want
    st=$data/$(basename "$dst").stamp
    want="gen_synth v1 in=$(stat -c %s "$real") target_mb=$target out=$(basename "$dst")"
    if [[ -f $dst && -f $st && $(head -1 "$st") == "$want" ]]; then
        return 0
    fi
    echo "generating $dst (target $target MB) ..."
    rm -f "$dst" "$st"
    local t0=$SECONDS summary
    if ! summary=$("$gen" --in "$real" --out "$dst" --target-mb "$target"); then
        echo "trace_ingest: bench_gen_synth failed for $dst" >&2
        return 1
    fi
    printf '%s\n%s\n' "$want" "$summary" >"$st"
    echo "  done in $((SECONDS - t0)) s: $summary"
}

# dataset NAME -> sets ds_dir (trace dir holding one trace file), ds_file, ds_peer
# (peer runs), ds_bytes (uncompressed JSON bytes).
dataset() {
    local name=$1
    case $name in
    real-gz)
        ds_dir=$data/real_gz
        mkdir -p "$ds_dir"
        ds_file=$ds_dir/$(basename "$real")
        ln -sfn "$real" "$ds_file"
        ds_peer=$peer_runs
        ;;
    real-json)
        ds_dir=$data/real_json
        mkdir -p "$ds_dir"
        ds_file=$ds_dir/$(basename "$real" .gz)
        if [[ ! -f $ds_file ]]; then
            gzip -dc "$real" >"$ds_file.tmp" && mv "$ds_file.tmp" "$ds_file" || return 1
        fi
        ds_peer=$peer_runs
        ;;
    synth-100mb)
        ds_dir=$data/synth_100mb
        mkdir -p "$ds_dir"
        ds_file=$ds_dir/synth_100mb.json
        gen_dataset "$ds_file" 100 || return 1
        ds_peer=$((peer_runs > 0 ? 1 : 0))
        ;;
    synth-100mb-gz) # the shape of issue 13's trace: ~100 MB of JSON, gzip
        ds_dir=$data/synth_100mb_gz
        mkdir -p "$ds_dir"
        ds_file=$ds_dir/synth_100mb.json.gz
        gen_dataset "$ds_file" 100 || return 1
        ds_peer=$((peer_runs > 0 ? 1 : 0))
        ;;
    synth-1gb)
        ds_dir=$data/synth_1gb
        mkdir -p "$ds_dir"
        ds_file=$ds_dir/synth_1gb.json
        gen_dataset "$ds_file" 1100 || return 1
        ds_peer=0
        [[ $peer_big == 1 ]] && ds_peer=1
        ;;
    synth-1gb-gz)
        ds_dir=$data/synth_1gb_gz
        mkdir -p "$ds_dir"
        ds_file=$ds_dir/synth_1gb.json.gz
        gen_dataset "$ds_file" 1100 || return 1
        ds_peer=0
        ;;
    *)
        echo "trace_ingest: unknown dataset '$name'" >&2
        return 1
        ;;
    esac
    case $ds_file in
    *.gz)
        if [[ -f $data/$(basename "$ds_file").stamp ]]; then
            ds_bytes=$(sed -n 's/.*"bytes": \([0-9]*\).*/\1/p' "$data/$(basename "$ds_file").stamp")
        else
            ds_bytes=$(gzip -dc "$ds_file" | wc -c)
        fi
        ;;
    *) ds_bytes=$(stat -L -c %s "$ds_file") ;;
    esac
}

# run_tool TOOL DATASET I OUTDIR TOPK: one measured run; files under $rundir/DATASET/.
run_tool() {
    local tool=$1 name=$2 i=$3 out=$4 k=$5
    local base=$rundir/$name/$tool.$i
    mkdir -p "$rundir/$name"
    rm -f "$base.rss.json"
    local cmd
    if [[ $tool == magpie ]]; then
        cmd=("$magpie" benchmark --trace-dir "$ds_dir" -o "$out" --top-k "$k" --json)
    else
        cmd=(python3 "$here/peer_gap.py" --trace-dir "$ds_dir" --out "$out" --top-k "$k" --json)
    fi
    "$runrss" "${pin[@]}" -o "$base.rss.json" -- "${cmd[@]}" >"$base.stdout" 2>"$base.stderr"
    local rc=$?
    echo "{\"tool\": \"$tool\", \"dataset\": \"$name\", \"run\": $i, \"rc\": $rc," \
        "\"bytes\": $ds_bytes, \"file\": \"$ds_file\"}" >"$base.meta.json"
    if [[ $rc != 0 ]]; then
        echo "  $tool run $i on $name FAILED (exit $rc); stderr:" >&2
        tail -5 "$base.stderr" | sed 's/^/    /' >&2
        return 1
    fi
    return 0
}

status=0
: >"$rundir/compare.txt"
for name in $datasets; do
    if ! dataset "$name"; then
        status=1
        continue
    fi
    printf '%-13s %s (%s bytes of JSON)\n' "$name" "$ds_file" "$ds_bytes"
    out=$bench_dir/out/$name
    rm -rf "$out"
    mkdir -p "$out"
    # Warm-up: page cache and first-touch costs are not what we measure.
    run_tool magpie "$name" 0 "$out/magpie" "$topk" || { status=1; continue; }
    for ((i = 1; i <= runs; i++)); do
        run_tool magpie "$name" "$i" "$out/magpie" "$topk" || status=1
    done
    for ((i = 1; i <= ds_peer; i++)); do
        run_tool peer "$name" "$i" "$out/peer" "$topk" || status=1
    done
    if [[ $ds_peer == 0 ]]; then
        if [[ $name == synth-1gb ]]; then
            echo "  peer skipped on synth-1gb: json.load of ~1 GB takes ~50 s and ~5 GB RAM here (BENCH_PEER_BIG=1 runs it)" |
                tee -a "$rundir/compare.txt"
        else
            echo "  peer skipped on $name" | tee -a "$rundir/compare.txt"
        fi
        continue
    fi
    a=$out/magpie/gap_analysis/gap_analysis.csv
    b=$out/peer/gap_analysis/gap_analysis.csv
    verdict=$(python3 - "$a" "$b" <<'PY'
import sys
a, b = sys.argv[1], sys.argv[2]
try:
    x, y = open(a, "rb").read(), open(b, "rb").read()
except OSError as e:
    print(f"DIFFER (missing: {e.filename})")
    sys.exit(0)
if x == y:
    print("MATCH")
elif x.replace(b"\r\n", b"\n") == y.replace(b"\r\n", b"\n"):
    print("MATCH (except line ends: magpie %s, peer CRLF as Magpie's csv module)"
          % ("CRLF" if b"\r\n" in x else "LF"))
else:
    print("DIFFER")
PY
    )
    echo "  $name: CSV top-$topk magpie vs peer: $verdict" | tee -a "$rundir/compare.txt"
    [[ $verdict == DIFFER* ]] && status=1
    if [[ $verdict == DIFFER* ]]; then
        diff <(tr -d '\r' <"$a") <(tr -d '\r' <"$b") | head -8 | cut -c1-300 | sed 's/^/    /' |
            tee -a "$rundir/compare.txt"
    fi
done

# Untimed correctness cases: every kernel row (not just the top-k), the window and
# duration filters, all categories, and a two-rank trace dir (merged + rank CSVs).
# Each case runs both tools with the same arguments and compares every CSV they wrote.
compare_case() {
    local label=$1 dir=$2
    shift 2
    local out=$bench_dir/out/compare/$label
    rm -rf "$out"
    if ! "$magpie" benchmark --trace-dir "$dir" -o "$out/magpie" --json "$@" \
        >"$rundir/case.$label.magpie.stdout" 2>"$rundir/case.$label.magpie.stderr"; then
        echo "  case $label: magpie FAILED (exit $?): $(tail -1 "$rundir/case.$label.magpie.stderr")" |
            tee -a "$rundir/compare.txt"
        status=1
        return
    fi
    if ! python3 "$here/peer_gap.py" --trace-dir "$dir" --out "$out/peer" "$@" \
        >/dev/null 2>"$rundir/case.$label.peer.stderr"; then
        echo "  case $label: peer FAILED: $(tail -1 "$rundir/case.$label.peer.stderr")" |
            tee -a "$rundir/compare.txt"
        status=1
        return
    fi
    local v=MATCH f files rows=0 first=""
    files=$(cd "$out" && { ls magpie/gap_analysis; ls peer/gap_analysis; } | sort -u)
    for f in $files; do
        local a=$out/magpie/gap_analysis/$f b=$out/peer/gap_analysis/$f
        if [[ ! -f $a || ! -f $b ]]; then
            v=DIFFER
            first+="    only one tool wrote $f"$'\n'
        elif ! cmp -s "$a" "$b"; then
            v=DIFFER
            first+="    $f:"$'\n'$(diff <(tr -d '\r' <"$a") <(tr -d '\r' <"$b") | head -6 | cut -c1-300 | sed 's/^/      /')$'\n'
        fi
        [[ -f $b ]] && rows=$((rows + $(wc -l <"$b") - 1))
    done
    echo "  case $label ($(echo "$files" | wc -w) CSV(s), $rows rows): $v" | tee -a "$rundir/compare.txt"
    if [[ $v == DIFFER ]]; then
        printf '%s' "$first" | tee -a "$rundir/compare.txt"
        status=1
    fi
}

if [[ " $datasets " == *" real-json "* ]] && dataset real-json; then
    all=(--top-k 1000000)
    compare_case all-kernels "$ds_dir" "${all[@]}"
    compare_case window-20-70-min3us "$ds_dir" "${all[@]}" --start-pct 20 --end-pct 70 --min-duration-us 3
    compare_case all-categories "$ds_dir" "${all[@]}" --categories --ignore-categories
    tp2=$shared/data/traces/h200-tp2
    if [[ -d $tp2/torch_trace ]]; then
        compare_case tp2-ranks "$tp2/torch_trace" "${all[@]}"
        compare_case tp2-workspace-top5 "$tp2" --top-k 5
    fi
fi

echo
python3 - "$rundir" <<'PY'
import glob, json, os, statistics, sys

rundir = sys.argv[1]
recs = []
for meta in sorted(glob.glob(os.path.join(rundir, "*", "*.meta.json"))):
    base = meta[: -len(".meta.json")]
    m = json.load(open(meta))
    if m["run"] == 0 or m["rc"] != 0:
        continue
    try:
        rss = json.loads(open(base + ".rss.json").read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        continue
    stats = {}
    try:
        lines = [l for l in open(base + ".stdout").read().splitlines() if l.strip()]
        stats = json.loads(lines[-1]).get("stats", {}) if lines else {}
    except (OSError, ValueError, AttributeError):
        pass
    m.update(rss)
    m["stats"] = stats if isinstance(stats, dict) else {}
    recs.append(m)

order = ["real-gz", "real-json", "synth-100mb", "synth-100mb-gz", "synth-1gb", "synth-1gb-gz"]
def key(r):
    return (order.index(r["dataset"]) if r["dataset"] in order else 99, r["tool"] != "magpie")

groups = {}
for r in sorted(recs, key=key):
    groups.setdefault((r["dataset"], r["tool"]), []).append(r)

def med(xs):
    return statistics.median(xs)

print("== results (median [min-max] over n runs; wall = whole process, pinned to one CPU)")
hdr = f"{'dataset':<13} {'tool':<6} {'n':>2} {'JSON MB':>8} {'wall s':>20} {'MB/s':>17} {'Mevents/s':>10} {'cpu s':>7} {'peak RSS MB':>16} {'events':>10}"
print(hdr)
print("-" * len(hdr))
summary = {}
warn = []
for (ds, tool), rs in groups.items():
    walls = [r["wall_s"] for r in rs]
    rsss = [r["maxrss_kb"] / 1024.0 for r in rs]
    nbytes = rs[0]["bytes"]
    ev = [r["stats"].get("events") for r in rs if isinstance(r["stats"].get("events"), int)]
    sb = [r["stats"].get("bytes") for r in rs if isinstance(r["stats"].get("bytes"), int)]
    if sb and sb[0] != nbytes:
        warn.append(f"{ds}/{tool}: stats.bytes {sb[0]} != {nbytes} uncompressed bytes on disk")
    events = ev[0] if ev else None
    mw = med(walls)
    mbs = [nbytes / 1e6 / w for w in walls]
    evs = f"{events / mw / 1e6:10.2f}" if events else f"{'-':>10}"
    summary[(ds, tool)] = {"wall": mw, "rss": med(rsss), "mbs": nbytes / 1e6 / mw,
                           "cpu": med([r["cpu_s"] for r in rs])}
    print(f"{ds:<13} {tool:<6} {len(rs):>2} {nbytes / 1e6:8.1f} "
          f"{mw:7.3f} [{min(walls):.3f}-{max(walls):.3f}] "
          f"{nbytes / 1e6 / mw:6.0f} [{min(mbs):.0f}-{max(mbs):.0f}] {evs} "
          f"{med([r['cpu_s'] for r in rs]):7.3f} {med(rsss):6.1f} [{min(rsss):.0f}-{max(rsss):.0f}] "
          f"{events if events is not None else '-':>10}")
for w in warn:
    print("warning:", w)

print()
print("== magpie vs peer (peer median / magpie median: wall, user+sys CPU, peak RSS)")
print(f"{'dataset':<13} {'speedup':>8} {'cpu ratio':>10} {'RSS ratio':>10}")
ratios = []
for ds in order:
    a, b = summary.get((ds, "magpie")), summary.get((ds, "peer"))
    if a and b:
        sp = b["wall"] / a["wall"]
        ratios.append((ds, sp))
        print(f"{ds:<13} {sp:7.1f}x {b['cpu'] / a['cpu']:9.1f}x {b['rss'] / a['rss']:9.1f}x")
    elif a:
        print(f"{ds:<13} {'(peer not run)':>19}")
print(f"load average now: {open('/proc/loadavg').read().split()[:3]}")

print()
print("== issue targets (informative; performance is never asserted)")
def verdict(ok):
    return "PASS" if ok else "MISS"
mine = [(ds, summary[(ds, "magpie")]) for ds in order if (ds, "magpie") in summary]
print("  throughput >= 300 MB/s of uncompressed JSON on one core (median, whole process):")
for ds, m in mine:
    print(f"      {ds:<13} {m['mbs']:6.0f} MB/s  {verdict(m['mbs'] >= 300)}")
print("  peak RSS flat with trace size, <= 64 MB at ~1 GB of JSON:")
for ds, m in mine:
    tag = f"  {verdict(m['rss'] <= 64)}" if ds.startswith("synth-1gb") else ""
    print(f"      {ds:<13} {m['rss']:6.1f} MB{tag}")
if ratios:
    print("  >= 20x the Python peer (median wall, whole process):")
    for ds, sp in ratios:
        print(f"      {ds:<13} {sp:6.1f}x    {verdict(sp >= 20)}")
PY
echo
echo "correctness:"
sed 's/^/ /' "$rundir/compare.txt"
echo
echo "raw runs: $rundir"
exit $status
