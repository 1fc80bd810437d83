#!/usr/bin/env bash
# `make demo`: gap analysis, kernel summary and the TraceLens-compatible report
# on the bundled two-rank trace, and the inference stages of the bundled
# serving trace.
set -euo pipefail
MAGPIE=${1:-build/release/magpie}
here=$(cd "$(dirname "$0")" && pwd)
out=${DEMO_OUT:-demo-out}
rm -rf "$out"
mkdir -p "$out"
echo "== magpie --version"
"$MAGPIE" --version
echo
echo "== magpie --gpu-info"
"$MAGPIE" --gpu-info
echo
echo "== magpie benchmark --trace-dir examples/traces/tp2 --top-k 10 -o $out"
"$MAGPIE" benchmark --trace-dir "$here/traces/tp2" --top-k 10 -o "$out"
echo
echo "== magpie benchmark --trace-dir examples/traces/tp2 --group-by normalized --top-k 8 --json"
"$MAGPIE" benchmark --trace-dir "$here/traces/tp2" --group-by normalized --top-k 8 \
    -o "$out/normalized" --json > "$out/gap_normalized.json"
python3 - "$out/gap_normalized.json" <<'PY' 2>/dev/null || head -c 600 "$out/gap_normalized.json"
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{'family':60s} {'calls':>6s} {'us':>10s} {'%':>6s} variants")
for k in d["top_kernels"]:
    print(f"{k['name'][:60]:60s} {k['calls']:6d} {k['self_cuda_total_us']:10.1f} {k['pct_total']:6.2f} {k['variants']}")
s = d["stats"]
print(f"\nparsed {s['bytes']/1e6:.1f} MB of JSON, {s['events']} events in {s['seconds']:.3f} s ({s['mb_per_s']:.0f} MB/s)")
PY
echo
echo "== magpie trace kernels examples/traces/tp2 --top-k 8 -o $out/kernel_summary"
"$MAGPIE" trace kernels "$here/traces/tp2" --top-k 8 -o "$out/kernel_summary"
echo
echo "== magpie trace report examples/traces/tp2/tp2-rank-0*.json.gz --gpu-arch H200 -o $out/report"
rank0=$(ls "$here"/traces/tp2/tp2-rank-0*.json.gz | head -1)
"$MAGPIE" trace report "$rank0" --gpu-arch H200 -o "$out/report"
chrome=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$chrome" ]; then
    profile=$(mktemp -d)
    if timeout 120 "$chrome" --headless --disable-gpu --no-sandbox --user-data-dir="$profile" \
        --screenshot="$out/report.png" --window-size=1400,2000 \
        "file://$(cd "$out/report" && pwd)/report.html" >/dev/null 2>&1; then
        echo "screenshot of $out/report/report.html: $out/report.png"
    else
        echo "chromium could not take a screenshot of $out/report/report.html"
    fi
    rm -rf "$profile"
else
    echo "(install chromium for a screenshot of $out/report/report.html)"
fi
echo
echo "== magpie trace stages (Magpie's inference post-processing) on examples/traces/serving"
mkdir -p "$out/serving/torch_trace"
cp "$here/traces/serving/"*.json.gz "$out/serving/torch_trace/"
"$MAGPIE" trace stages "$out/serving/torch_trace" -o "$out/serving" --conc 16 --isl 256 --osl 12 \
    --num-steps 8 --gpu-arch H200 -q
for f in "$out"/serving/tracelens/*_kernel_roofline_simple.csv; do
    echo "-- $(basename "$f"): top 5 ops by kernel time"
    python3 - "$f" <<'PY' 2>/dev/null || head -6 "$f"
import csv, sys
rows = sorted(csv.DictReader(open(sys.argv[1], encoding="utf-8")),
              key=lambda r: -float(r["kernel_time_ms_sum"] or 0))
for r in rows[:5]:
    print(f"  {r['op_name'][:34]:34s} {r['kernel_time_ms_sum']:>9s} ms {float(r['time_pct'] or 0):5.1f}%"
          f"  {r.get('roofline_bound', ''):13s} {r['param_signature'][:50]}")
PY
done
echo
echo "outputs:"
find "$out" -type f | sort
