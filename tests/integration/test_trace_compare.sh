#!/usr/bin/env bash
# `magpie trace compare` against TraceLens_compare_perf_reports_pytorch:
# every case of tests/fixtures/trace_compare/cases.txt compares reports
# (CSV directories of the shared traces, kept CSV reports, .xlsx workbooks) and must give TraceLens's CSV files byte
# for byte (the goldens, one tar.gz per case, and how they were made are in
# tests/fixtures/trace_compare/README.md). Then the workbook, the errors
# TraceLens also refuses (repeated tags, a missing sheet, one report) and a
# hand-made pair with rows only in one report, a zero baseline and
# duplicate keys.
set -u
MAGPIE=${MAGPIE:?}

FX=${MP_FIXTURES:?}/trace_compare
D=${MP_SHARED:-}/data/traces
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# ---- conformance with TraceLens's goldens ----
ncase=0
if [ -d "$D/tracelens-tests" ]; then
    while read -r name order sheets names reports; do
        case "$name" in '' | '#'*) continue ;; esac
        ncase=$((ncase + 1))
        args=()
        for r in $reports; do
            case "$r" in
            fixture:*) # a report kept in the fixtures (tar.gz of its CSVs)
                out="$t/${r#fixture:}"
                if [ ! -d "$out" ]; then
                    mkdir -p "$out"
                    tar -C "$out" -xzf "$FX/${r#fixture:}.tar.gz"
                fi
                args+=("$out")
                ;;
            fx:*) args+=("$FX/${r#fx:}") ;;
            *) args+=("$D/$r") ;;
            esac
        done
        [ "$names" != - ] && args+=(--names ${names//,/ })
        [ "$sheets" != - ] && args+=(--sheets ${sheets//,/ })
        mkdir -p "$t/$name.gold"
        tar -C "$t/$name.gold" -xzf "$FX/$name.tar.gz"
        if ! "$MAGPIE" trace compare "${args[@]}" --no-xlsx --output_csvs_dir "$t/$name.out" \
            >"$t/$name.log" 2>&1; then
            fail "$name: magpie trace compare exited non-zero"
            cat "$t/$name.log"
            continue
        fi
        (cd "$t/$name.gold" && find . -type f | sort) >"$t/$name.gl"
        (cd "$t/$name.out" && find . -type f | sort) >"$t/$name.ol"
        if ! cmp -s "$t/$name.gl" "$t/$name.ol"; then
            fail "$name: sheet files differ"
            diff "$t/$name.gl" "$t/$name.ol" | head -20
        fi
        nsheet=0
        bad=0
        ntie=0
        while read -r f; do
            nsheet=$((nsheet + 1))
            if cmp -s "$t/$name.gold/$f" "$t/$name.out/$f"; then
                continue
            fi
            if [ "$order" = ties ] && python3 "$FX/ties.py" \
                "$t/$name.gold/$f" "$t/$name.out/$f" "${names%%,*}"; then
                ntie=$((ntie + 1))
                continue
            fi
            bad=$((bad + 1))
            fail "$name: $f differs from TraceLens's"
            diff "$t/$name.gold/$f" "$t/$name.out/$f" | head -6 | cut -c1-300
        done <"$t/$name.gl"
        echo "case $name: $nsheet sheets, $bad differ, $ntie equal but for the order of tied rows"
    done <"$FX/cases.txt"
else
    echo "shared traces not found at $D: conformance cases skipped"
fi

# ---- hand-made reports: one-sided rows, zero baseline, duplicate keys ----
A="$t/hand_a" B="$t/hand_b"
mkdir -p "$A" "$B"
printf 'type,time ms,percent\ncomputation_time,2.0,50.0\nidle_time,0.0,0.0\ntotal_time,4.0,100.0\n' >"$A/gpu_timeline.csv"
printf 'type,time ms,percent\nidle_time,1.0,20.0\ncomputation_time,3.0,60.0\ntotal_time,5.0,100.0\n' >"$B/gpu_timeline.csv"
printf 'name,total_direct_kernel_time_sum,total_direct_kernel_time_ms,Count,Cumulative Percentage (%%)\nop_a,3000,3.0,2,75.0\nop_b,1000,1.0,1,100.0\n' >"$A/ops_summary.csv"
printf 'name,total_direct_kernel_time_sum,total_direct_kernel_time_ms,Count,Cumulative Percentage (%%)\nop_c,500,0.5,4,10.0\nop_a,4500,4.5,2,100.0\n' >"$B/ops_summary.csv"
printf 'Kernel name,Kernel duration (µs)_sum,Kernel duration (µs)_mean,Kernel duration (µs)_count\nk1,10.0,5.0,2\n' >"$A/kernel_summary.csv"
printf 'Kernel name,Kernel duration (µs)_sum,Kernel duration (µs)_mean,Kernel duration (µs)_count\nk1,12.5,6.25,2\nk2,1.0,1.0,1\n' >"$B/kernel_summary.csv"
hdr='name,Input type,Input Dims,Input Strides,Concrete Inputs,total_direct_kernel_time_sum,total_direct_kernel_time_mean,operation_count,note'
printf '%s\nop_a,float,"((2, 2),)",,NA,3000,1500.0,2,x\nop_a,float,"((2, 2),)",,NA,10,10.0,1,y\nop_b,,,,,1000,1000.0,1,z\n' "$hdr" >"$A/ops_unique_args.csv"
printf '%s\nop_a,float,"((2, 2),)",,NA,4500,2250.0,2,x\nop_c,half,,,,500,125.0,4,w\n' "$hdr" >"$B/ops_unique_args.csv"
# TraceLens's output for this pair is hand.tar.gz
mkdir -p "$t/hand.gold"
tar -C "$t/hand.gold" -xzf "$FX/hand.tar.gz"
if "$MAGPIE" trace compare "$A" "$B" --names base new --no-xlsx --output_csvs_dir "$t/hand" >"$t/hand.log" 2>&1; then
    for f in "$t"/hand.gold/*.csv; do
        cmp -s "$f" "$t/hand/$(basename "$f")" ||
            { fail "hand-made pair: $(basename "$f")"; diff "$f" "$t/hand/$(basename "$f")"; }
    done
    [ "$(ls "$t/hand" | wc -l)" = "$(ls "$t/hand.gold" | wc -l)" ] || fail "hand-made pair: sheet count"
else
    fail "hand-made pair"
    cat "$t/hand.log"
fi

# ---- workbook ----
if "$MAGPIE" trace compare "$A" "$B" -o "$t/cmp.xlsx" >"$t/x.log" 2>&1; then
    [ "$(head -c 2 "$t/cmp.xlsx")" = PK ] || fail "workbook is not a zip file"
else
    fail "workbook"
    cat "$t/x.log"
fi

# long tags (a workspace's directory name): sheet files keep the whole name,
# the workbook cuts sheet names to 31 characters
L=benchmark_vllm_20261201_175642_candidate
if "$MAGPIE" trace compare "$A" "$B" --names base "$L" --output_csvs_dir "$t/long" -o "$t/long.xlsx" \
    >"$t/long.log" 2>&1; then
    [ -s "$t/long/ops_unique_args_only_baseline_$L.csv" ] || { fail "long tag: file names"; ls "$t/long"; }
    [ "$(head -c 2 "$t/long.xlsx")" = PK ] || fail "long tag: workbook"
else
    fail "long tag"
    cat "$t/long.log"
fi

# ---- refusals (exit 2, as TraceLens refuses them) ----
"$MAGPIE" trace compare "$A" "$A" --no-xlsx --output_csvs_dir "$t/e1" >"$t/e.log" 2>&1
[ $? = 2 ] && grep -q "Tags must be unique" "$t/e.log" || { fail "repeated tags"; cat "$t/e.log"; }
echo "not a workbook" >"$t/junk.xlsx"
"$MAGPIE" trace compare "$A" "$t/junk.xlsx" --no-xlsx --output_csvs_dir "$t/e0" >"$t/e.log" 2>&1
[ $? = 2 ] && grep -q "not a readable xlsx" "$t/e.log" || { fail "junk workbook"; cat "$t/e.log"; }
"$MAGPIE" trace compare "$A" >"$t/e.log" 2>&1
[ $? = 2 ] || { fail "one report"; cat "$t/e.log"; }
rm "$B/kernel_summary.csv"
"$MAGPIE" trace compare "$A" "$B" --names a b --no-xlsx --output_csvs_dir "$t/e2" >"$t/e.log" 2>&1
[ $? = 2 ] && grep -q "kernel_summary" "$t/e.log" || { fail "missing sheet"; cat "$t/e.log"; }
"$MAGPIE" trace compare "$A" "$B" --names a --no-xlsx --output_csvs_dir "$t/e3" >"$t/e.log" 2>&1
[ $? = 2 ] || { fail "--names count"; cat "$t/e.log"; }
"$MAGPIE" trace compare "$A" "$B" --sheets bogus >"$t/e.log" 2>&1
[ $? = 2 ] || { fail "--sheets bogus"; cat "$t/e.log"; }

echo "$ncase TraceLens cases, $fails failures"
[ "$fails" = 0 ]
