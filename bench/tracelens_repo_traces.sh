#!/usr/bin/env bash
# Conformance beyond the shared goldens: TraceLens itself and magpie on the
# traces of TraceLens's own repository that ../shared does not carry (so no
# golden of them is in this repository), default report, sheet by sheet with
# tests/tools/tl_compare.py. TraceLens runs once per trace (its reports are
# kept in OUT and reused); nothing of TraceLens is committed here.
#
#   TL_PYTHON=/tmp/tlvenv/bin/python TL_SRC=/tmp/tlsrc OUT=/tmp/heldout \
#       bash bench/tracelens_repo_traces.sh build/release/magpie
#
# TL_SRC: a TraceLens checkout (e.g. from the fetch tool), TL_PYTHON: a Python
# with pandas, tqdm, openpyxl, tabulate, orjson, PyYAML, matplotlib.
set -u
MAGPIE=$(cd "$(dirname "${1:-build/release/magpie}")" && pwd)/$(basename "${1:-build/release/magpie}")
here=$(cd "$(dirname "$0")" && pwd)
: "${TL_PYTHON:?TL_PYTHON must be a Python with pandas}"
: "${TL_SRC:?TL_SRC must be a TraceLens checkout}"
OUT=${OUT:-/tmp/tracelens-repo-traces}
mkdir -p "$OUT"
T=$TL_SRC/tests/traces
fails=0
for f in h100/google_owlv2-large-patch14-ensemble__1016001 \
    mi300/google_owlv2-large-patch14-ensemble__1016001 \
    mi300/facebook_timesformer-base-finetuned-k400__1016002 b200/eager_trace \
    inference/sglang_prefilldecode/sglang_Qwen3-8B_prefilldecode \
    inference/vllm_prefilldecode_piecewise/graph_execution \
    inference/xdit_flux.1_aiter_sage/profile_trace_rank_0 \
    inference/xdit_sd_3.5/profile_trace_rank_0 \
    perf_model/normalization/normalization_layer_test; do
    [ -f "$T/$f.json.gz" ] || { echo "skip $f: not in $TL_SRC"; continue; }
    n=$(echo "$f" | tr / _)
    if [ ! -d "$OUT/tl_$n" ]; then
        PYTHONPATH=$TL_SRC timeout 900 "$TL_PYTHON" -m TraceLens.Reporting.generate_perf_report_pytorch \
            --profile_json_path "$T/$f.json.gz" --output_csvs_dir "$OUT/tl_$n" \
            --enable_kernel_summary >"$OUT/tl_$n.log" 2>&1 || { echo "TraceLens failed on $f"; continue; }
    fi
    rm -rf "$OUT/mp_$n"
    "$MAGPIE" trace report "$T/$f.json.gz" -o "$OUT/mp_$n" -q --no-summary >"$OUT/mp_$n.log" 2>&1 ||
        { echo "FAIL $n: magpie exited non-zero"; fails=$((fails + 1)); continue; }
    sheets=$(cd "$OUT/tl_$n" && ls ./*.csv | sed 's|^\./||; s/\.csv$//' | tr '\n' ' ')
    echo "=== $n"
    # shellcheck disable=SC2086
    python3 "$here/../tests/tools/tl_compare.py" "$OUT/tl_$n" "$OUT/mp_$n" $sheets || fails=$((fails + 1))
done
echo "traces differing: $fails"
exit $((fails > 0))
