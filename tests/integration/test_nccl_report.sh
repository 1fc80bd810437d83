#!/usr/bin/env bash
# `magpie trace collective` (TraceLens's multi-rank collective report)
# compared with TraceLens main's CSVs by tests/tools/tl_compare.py (same
# header, rows in the same order, numbers within 1e-6 relative) and the set
# of files written:
#  - the synthetic rank traces of tests/fixtures/traces/nccl_synth (several
#    process groups and nodes, TraceLens's simplified mode, no implicit-sync
#    collectives), always;
#  - the two H200 TP2 rank traces of the shared data (made with
#    TraceLens_generate_multi_rank_collective_report_pytorch --trace_glob ...
#    --world_size 2 --rank_regex 'rank-(\d+)\.' --detailed_analysis), when
#    present, also through the directory form, plus --help and the
#    missing-rank error.
set -u
MAGPIE=${MAGPIE:?}
SRC=${MP_SRC:?}
D=${MP_SHARED:-}/data/traces/h200-tp2
command -v python3 >/dev/null || { echo "SKIPPED: python3 not found"; exit 0; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
SHEETS="nccl_long nccl_summary_long nccl_implicit_sync nccl_summary_implicit_sync straggler_summary"

compare() { # compare NAME GOLDEN_DIR OUT_DIR
    echo "== $1"
    # shellcheck disable=SC2086
    python3 "$SRC/tests/tools/tl_compare.py" "$2" "$3" $SHEETS || fails=$((fails + 1))
    if [ "$(cd "$2" && ls ./*.csv)" != "$(cd "$3" && ls ./*.csv)" ]; then
        echo "FAIL $1: other CSV files than TraceLens's:"
        ls "$2" "$3"
        fails=$((fails + 1))
    fi
}

for c in pg4:4 simplified:2 noimplicit:2; do
    name=${c%%:*}
    ws=${c##*:}
    F=$SRC/tests/fixtures/traces/nccl_synth/$name
    if ! "$MAGPIE" trace collective --trace_glob "$F/traces/*.json" --world_size "$ws" \
        --rank_regex 'rank-(\d+)\.' -o "$t/$name" -q >"$t/$name.log" 2>&1; then
        echo "FAIL $name: magpie exited non-zero"
        cat "$t/$name.log"
        fails=$((fails + 1))
        continue
    fi
    compare "$name" "$F/tracelens_collective" "$t/$name"
done

if [ ! -d "$D/torch_trace" ] || [ ! -d "$D/tracelens_collective" ]; then
    echo "shared TP2 traces not found at $D: only the fixtures were compared"
else
    if ! "$MAGPIE" trace collective --trace_glob "$D/torch_trace/*.pt.trace.json.gz" --world_size 2 \
        --rank_regex 'rank-(\d+)\.' --detailed_analysis -o "$t/glob" -q >"$t/glob.log" 2>&1; then
        echo "FAIL: magpie trace collective (glob) exited non-zero"
        cat "$t/glob.log"
        exit 1
    fi
    compare h200-tp2 "$D/tracelens_collective" "$t/glob"

    # a directory and the default rank regex give the same CSVs
    if ! "$MAGPIE" trace collective "$D/torch_trace" -o "$t/dir" -q >"$t/dir.log" 2>&1; then
        echo "FAIL: magpie trace collective (directory) exited non-zero"
        cat "$t/dir.log"
        fails=$((fails + 1))
    elif ! diff -r "$t/glob" "$t/dir" >/dev/null; then
        echo "FAIL: directory form differs from the glob form"
        fails=$((fails + 1))
    fi

    # a missing rank is an error naming the rank (non-zero exit, no CSVs)
    "$MAGPIE" trace collective "$D/torch_trace" --world-size 4 -o "$t/ws4" -q >"$t/ws4.log" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] || ! grep -q "rank 2" "$t/ws4.log" || [ -e "$t/ws4/nccl_long.csv" ]; then
        echo "FAIL: --world-size 4 with two rank traces: rc=$rc"
        cat "$t/ws4.log"
        fails=$((fails + 1))
    fi
fi

if ! "$MAGPIE" trace collective --help | grep -q -- '--rank-regex'; then
    echo "FAIL: trace collective --help lacks --rank-regex"
    fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
    echo "FAILED: $fails check(s)"
    exit 1
fi
echo "PASS"
