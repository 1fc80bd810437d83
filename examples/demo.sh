#!/usr/bin/env bash
# `make demo`: gap analysis and kernel summary on the bundled two-rank trace.
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
echo "outputs:"
find "$out" -type f | sort
