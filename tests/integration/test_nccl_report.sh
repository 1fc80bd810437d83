#!/usr/bin/env bash
# `magpie trace collective` (TraceLens's multi-rank collective report) on the
# two TP2 rank traces, compared with TraceLens main's CSVs (made with
# TraceLens_generate_multi_rank_collective_report_pytorch --trace_glob ...
# --world_size 2 --rank_regex 'rank-(\d+)\.' --detailed_analysis) by
# tests/tools/tl_compare.py: same header, rows in the same order, numbers
# within 1e-6 relative. Also checks the directory form, --help and the
# missing-rank error.
set -u
MAGPIE=${MAGPIE:?}
SRC=${MP_SRC:?}
D=${MP_SHARED:-}/data/traces/h200-tp2
if [ ! -d "$D/torch_trace" ] || [ ! -d "$D/tracelens_collective" ]; then
    echo "SKIPPED: shared TP2 traces not found at $D"
    exit 0
fi
command -v python3 >/dev/null || { echo "SKIPPED: python3 not found"; exit 0; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
SHEETS="nccl_long nccl_summary_long nccl_implicit_sync nccl_summary_implicit_sync straggler_summary"

if ! "$MAGPIE" trace collective --trace_glob "$D/torch_trace/*.pt.trace.json.gz" --world_size 2 \
    --rank_regex 'rank-(\d+)\.' --detailed_analysis -o "$t/glob" -q >"$t/glob.log" 2>&1; then
    echo "FAIL: magpie trace collective (glob) exited non-zero"
    cat "$t/glob.log"
    exit 1
fi
# shellcheck disable=SC2086
python3 "$SRC/tests/tools/tl_compare.py" "$D/tracelens_collective" "$t/glob" $SHEETS || fails=$((fails + 1))

# a directory and the default rank regex give the same CSVs
if ! "$MAGPIE" trace collective "$D/torch_trace" -o "$t/dir" -q >"$t/dir.log" 2>&1; then
    echo "FAIL: magpie trace collective (directory) exited non-zero"
    cat "$t/dir.log"
    fails=$((fails + 1))
elif ! diff -r "$t/glob" "$t/dir" >/dev/null; then
    echo "FAIL: directory form differs from the glob form"
    fails=$((fails + 1))
fi

if ! "$MAGPIE" trace collective --help | grep -q -- '--rank-regex'; then
    echo "FAIL: trace collective --help lacks --rank-regex"
    fails=$((fails + 1))
fi

# a missing rank is an error naming the rank (exit code 2 or more, no CSVs)
"$MAGPIE" trace collective "$D/torch_trace" --world-size 4 -o "$t/ws4" -q >"$t/ws4.log" 2>&1
rc=$?
if [ "$rc" -eq 0 ] || ! grep -q "rank 2" "$t/ws4.log" || [ -e "$t/ws4/nccl_long.csv" ]; then
    echo "FAIL: --world-size 4 with two rank traces: rc=$rc"
    cat "$t/ws4.log"
    fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
    echo "FAILED: $fails check(s)"
    exit 1
fi
echo "PASS"
