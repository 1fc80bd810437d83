#!/usr/bin/env bash
# Runs TraceLens (a checkout and a Python with its requirements, e.g. pandas
# 3.1.1) and magpie on the same traces with the same flags and compares every
# sheet TraceLens wrote with tl_compare.py --exact (each float cell the same
# double). Not part of make check: it needs TraceLens, and it takes ~10 s to
# a minute per trace.
#   TL_PYTHON=.../bin/python TL_SRC=.../TraceLens tests/tools/tl_fresh_exact.sh MAGPIE OUT TRACE...
# Extra report flags for both: TL_FLAGS (default: --enable_kernel_summary --short_kernel_study);
# TL_MODULE picks TraceLens's entry point (default generate_perf_report_pytorch;
# generate_perf_report_pytorch_inference for the inference report, with
# MP_EXTRA=--inference, the flags magpie alone gets).
set -u
M=${1:?magpie binary} OUT=${2:?output dir}
shift 2
PY=${TL_PYTHON:?python with TraceLens requirements} TL=${TL_SRC:?TraceLens checkout}
FLAGS=${TL_FLAGS:---enable_kernel_summary --short_kernel_study}
MOD=${TL_MODULE:-generate_perf_report_pytorch} EXTRA=${MP_EXTRA:-}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
bad=0
for f in "$@"; do
    n=$(basename "$(dirname "$f")")_$(basename "$f" .json.gz)
    if [ ! -d "$OUT/$n-tl" ]; then
        # shellcheck disable=SC2086
        PYTHONPATH=$TL "$PY" -m "TraceLens.Reporting.$MOD" --profile_json_path "$f" \
            --output_csvs_dir "$OUT/$n-tl" $FLAGS >"$OUT/$n-tl.log" 2>&1 || {
            echo "== $n: TraceLens failed (see $OUT/$n-tl.log)"
            continue
        }
    fi
    rm -rf "$OUT/$n-mp"
    # shellcheck disable=SC2086
    "$M" trace report "$f" -o "$OUT/$n-mp" -q $FLAGS $EXTRA >/dev/null 2>&1 || { echo "== $n: magpie failed"; bad=1; continue; }
    sheets=$(cd "$OUT/$n-tl" && ls -- *.csv | sed 's/\.csv$//')
    # shellcheck disable=SC2086
    res=$(python3 "$HERE/tl_compare.py" --exact "$OUT/$n-tl" "$OUT/$n-mp" $sheets 2>&1)
    echo "== $n: $(grep -c '^ok' <<<"$res") of $(wc -w <<<"$sheets") sheets equal bit for bit"
    grep -E '^FAIL|row .* col' <<<"$res" | head -8
    grep -q '^FAIL' <<<"$res" && bad=1
done
exit $bad
