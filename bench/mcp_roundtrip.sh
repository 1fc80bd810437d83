#!/usr/bin/env bash
# MCP round trips over stdio: tools/list and a gap_analysis call on the
# two-rank H200 trace directory, magpie mcp against an MCP server made with
# the official Python SDK doing the same work in Python (bench/mcp_sdk_server.py).
# Both are driven by the same SDK client (tests/tools/mcp_client.py bench),
# one server process each, BENCH_RUNS calls per method after one warm-up;
# prints the median, min and max per method. Magpie's own server cannot be
# installed here (no ROCm stack), hence the SDK peer.
#   bash bench/mcp_roundtrip.sh build/release/magpie
set -eu
MAGPIE=${1:?usage: mcp_roundtrip.sh MAGPIE}
MAGPIE=$(realpath "$MAGPIE")
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${MCP_PYTHON:-/work/venvs/mcp/bin/python}
RUNS=${BENCH_RUNS:-20}
TRACES=${BENCH_TRACE_DIR:-$HERE/../../shared/data/traces/h200-tp2/torch_trace}
if [ ! -d "$TRACES" ] || ! "$PY" -c 'import mcp' 2>/dev/null; then
    echo "SKIPPED: need $TRACES and the MCP SDK in $PY (pip install mcp)"
    exit 0
fi
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
echo "trace dir: $TRACES ($(du -sh "$TRACES" | cut -f1)), $RUNS runs per method"
"$PY" "$HERE/../tests/tools/mcp_client.py" bench --trace-dir "$TRACES" --runs "$RUNS" --work "$w/m" \
    --cmd "$MAGPIE mcp"
"$PY" "$HERE/../tests/tools/mcp_client.py" bench --trace-dir "$TRACES" --runs "$RUNS" --work "$w/p" \
    --cmd "$PY $HERE/mcp_sdk_server.py"
# same answer: the merged CSVs of both runs
if cmp -s "$w/m/gap_analysis/gap_analysis.csv" "$w/p/gap_analysis/gap_analysis.csv"; then
    echo "gap_analysis.csv: identical"
else
    echo "gap_analysis.csv: DIFFERENT"; diff "$w/m/gap_analysis/gap_analysis.csv" "$w/p/gap_analysis/gap_analysis.csv" | head -5
fi
