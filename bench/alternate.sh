#!/bin/bash
# bench/alternate.sh: two magpie builds side by side, runs alternating so that
# both see the same machine load.
#   bash bench/alternate.sh OLD_MAGPIE NEW_MAGPIE TRACE [RUNS]
# For each build: `trace report TRACE --enable_kernel_summary --short_kernel_study`
# and the gap analysis (`benchmark --trace-dir` on a folder holding TRACE),
# RUNS times each (default 7), printing wall median [min-max], the median of
# user+sys CPU seconds and the largest peak RSS.
set -euo pipefail
old=$1 new=$2 trace=$3 runs=${4:-7}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/in"
ln -s "$(readlink -f "$trace")" "$tmp/in/"
one() { # BIN KIND -> "wall cpu rss_kb"
    local bin=$1 kind=$2
    rm -rf "$tmp/out"
    if [[ $kind == report ]]; then
        /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$bin" trace report "$trace" \
            --enable_kernel_summary --short_kernel_study -o "$tmp/out" -q --no-summary >/dev/null 2>&1
    else
        /usr/bin/time -f "%e %U %S %M" -o "$tmp/t" "$bin" benchmark --trace-dir "$tmp/in" \
            -o "$tmp/out" --top-k 10 --json >/dev/null 2>&1
    fi
    awk '{printf "%s %.3f %s\n", $1, $2 + $3, $4}' "$tmp/t"
}
for kind in report gap; do
    : >"$tmp/old.$kind"
    : >"$tmp/new.$kind"
    for ((i = 0; i < runs; i++)); do
        one "$old" $kind >>"$tmp/old.$kind"
        one "$new" $kind >>"$tmp/new.$kind"
    done
done
med() { sort -n | awk '{v[NR]=$1} END {printf "%.3f", (NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2}'; }
summary() {
    local w c r
    w=$(cut -d' ' -f1 "$1" | med)
    c=$(cut -d' ' -f2 "$1" | med)
    r=$(cut -d' ' -f3 "$1" | sort -n | tail -1)
    printf "%s [%s-%s] cpu %s rss %.1f MB" "$w" "$(cut -d' ' -f1 "$1" | sort -n | head -1)" \
        "$(cut -d' ' -f1 "$1" | sort -n | tail -1)" "$c" "$(echo "$r / 1024" | bc -l)"
}
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for kind in report gap; do
    echo "$kind old: $(summary "$tmp/old.$kind")"
    echo "$kind new: $(summary "$tmp/new.$kind")"
done
