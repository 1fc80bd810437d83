#!/usr/bin/env bash
# Differential test of gap analysis: `magpie benchmark --trace-dir` against
# tool_gapref (an independent jansson-DOM reimplementation of Magpie's
# gap_analysis.py) on every real trace under $MP_SHARED/data/traces and on
# a few hand-written edge-case traces. The CSVs must match byte for byte and
# both programs must agree on success/failure.
#
# Env: MAGPIE (magpie binary), MP_BIN (build tests dir with tool_gapref),
#      MP_SHARED (shared data), MP_SRC (source tree; unused but accepted).
set -u

if [ -z "${MP_SHARED:-}" ] || [ ! -d "$MP_SHARED/data/traces" ]; then
    echo "SKIPPED: no shared traces (MP_SHARED=${MP_SHARED:-unset})"
    exit 0
fi
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_BIN:?MP_BIN must point to the build tests directory}"
TOOL="$MP_BIN/tool_gapref"
if [ ! -x "$MAGPIE" ] || [ ! -x "$TOOL" ]; then
    echo "FAIL: missing $MAGPIE or $TOOL"
    exit 1
fi

TRACES="$MP_SHARED/data/traces"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gapdiff.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

DEFAULT_OPTS=""
CUSTOM_OPTS="--top-k 5 --start-pct 10 --end-pct 60 --min-duration-us 2 --categories kernel --ignore-categories nccl"

failures=0
cases=0

# run_case LABEL TRACE_DIR "OPTS" TOOL_FILE_ARGS...
# Runs both programs with OPTS and compares their gap_analysis/ outputs.
run_case() {
    local label=$1 dir=$2 opts=$3
    shift 3
    local out="$TMP/out.$cases"
    cases=$((cases + 1))
    rm -rf "$out"
    mkdir -p "$out"
    # shellcheck disable=SC2086
    "$MAGPIE" benchmark --trace-dir "$dir" -o "$out/m" $opts >"$out/m.log" 2>&1
    local rc_m=$?
    # shellcheck disable=SC2086
    "$TOOL" -o "$out/r" $opts "$@" >"$out/r.log" 2>&1
    local rc_r=$?
    local why=""
    if [ $rc_r -ge 2 ]; then
        why="reference tool failed (rc=$rc_r): $(head -c 400 "$out/r.log")"
    elif [ $rc_r -eq 0 ] && [ $rc_m -ne 0 ]; then
        why="magpie failed (rc=$rc_m), reference succeeded: $(tail -c 400 "$out/m.log")"
    elif [ $rc_r -ne 0 ] && [ $rc_m -eq 0 ]; then
        why="magpie succeeded, reference found no kernels (rc=$rc_r)"
    else
        local lm lr
        lm=$(cd "$out/m/gap_analysis" 2>/dev/null && ls | sort | tr '\n' ' ')
        lr=$(cd "$out/r/gap_analysis" 2>/dev/null && ls | sort | tr '\n' ' ')
        if [ "$lm" != "$lr" ]; then
            why="different files: magpie [$lm] reference [$lr]"
        else
            local f
            for f in $lr; do
                if ! cmp -s "$out/m/gap_analysis/$f" "$out/r/gap_analysis/$f"; then
                    why="$f differs:
$(diff "$out/r/gap_analysis/$f" "$out/m/gap_analysis/$f" | head -n 12 | cat -A | cut -c1-300)"
                    break
                fi
            done
        fi
    fi
    if [ -n "$why" ]; then
        failures=$((failures + 1))
        echo "FAIL $label [${opts:-defaults}]: $why"
    else
        local n=0
        [ -f "$out/r/gap_analysis/gap_analysis.csv" ] &&
            n=$(($(wc -l <"$out/r/gap_analysis/gap_analysis.csv") - 1))
        echo "ok   $label [${opts:-defaults}] rc=$rc_m rows=$n"
    fi
    rm -rf "$out"
}

# ---- every single-rank trace file, alone in a directory ----
is_trace() {
    # a Chrome trace: has "traceEvents" or event phases near the start
    if [[ $1 == *.gz ]]; then
        gzip -dc "$1" 2>/dev/null | head -c 1048576 | grep -q -e '"traceEvents"' -e '"ph"'
    else
        head -c 1048576 "$1" | grep -q -e '"traceEvents"' -e '"ph"'
    fi
}

n=0
while IFS= read -r f; do
    case "$f" in */h200-tp2/torch_trace/*) continue ;; esac
    is_trace "$f" || continue
    n=$((n + 1))
    d="$TMP/single$n"
    mkdir -p "$d"
    cp "$f" "$d/"
    rel=${f#"$TRACES"/}
    run_case "$rel" "$d" "$DEFAULT_OPTS" --rank 0 "$f"
    run_case "$rel" "$d" "$CUSTOM_OPTS" --rank 0 "$f"
    rm -rf "$d"
done < <(find "$TRACES" -type f \( -name '*.json.gz' -o -name '*.json' \) | sort)

if [ $n -eq 0 ]; then
    echo "FAIL: no trace files found under $TRACES"
    exit 1
fi

# ---- the two-rank set, as a directory and as a workspace ----
TP2="$TRACES/h200-tp2"
if [ -d "$TP2/torch_trace" ]; then
    r0=$(ls "$TP2"/torch_trace/*-rank-0.*.pt.trace.json.gz)
    r1=$(ls "$TP2"/torch_trace/*-rank-1.*.pt.trace.json.gz)
    run_case "h200-tp2/torch_trace (2 ranks)" "$TP2/torch_trace" "$DEFAULT_OPTS" \
        --rank 0 "$r0" --rank 1 "$r1"
    run_case "h200-tp2/torch_trace (2 ranks)" "$TP2/torch_trace" "$CUSTOM_OPTS" \
        --rank 0 "$r0" --rank 1 "$r1"
    run_case "h200-tp2 workspace (2 ranks)" "$TP2" "--top-k 7 --no-rank-csv" \
        --rank 0 "$r0" --rank 1 "$r1"
fi

# ---- hand-written edge cases ----
# integral-float External ids, nested Input Dims (TensorList), float dims,
# quotes/commas/newlines/escapes in names, missing name/dur/ts, ties,
# ignored annotation categories, mixed-case categories, negative durations.
E="$TMP/edge"
mkdir -p "$E/obj" "$E/bare" "$E/gz" "$E/ranks"
cat >"$E/obj/edge.json" <<'EOF'
{"schemaVersion":1,"deviceProperties":[{"id":0}],"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":100,"dur":50,"args":{"External id":7,"Input Dims":[[4,8],[8,16],[]]}},
{"ph":"X","cat":"CPU_OP","name":"aten::cat","ts":101.5,"dur":5,"args":{"External id":8.0,"Input Dims":[[[2,3],[4,5]],[],[1.5,2e20,1e-7]]}},
{"ph":"X","cat":"cpu_op","name":"aten::x","ts":102,"args":{"External id":9,"Input Dims":[[],[]]}},
{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":103,"dur":1,"args":{"External id":7,"Input Dims":[[1,2]]}},
{"ph":"X","cat":"Kernel","name":"gemm, \"fast\"","ts":110,"dur":20.125,"args":{"External id":7,"correlation":1}},
{"ph":"X","cat":"kernel","name":"gemm, \"fast\"","ts":140,"dur":2.5,"args":{"External id":8}},
{"ph":"X","cat":"kernel","name":"caf\u00e9\tk","ts":145,"dur":3,"args":{"External id":9}},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","ts":150,"dur":1e1,"args":{}},
{"ph":"X","cat":"gpu_user_annotation","name":"anno","ts":100,"dur":100},
{"ph":"X","cat":"kernel","ts":160,"dur":0.5},
{"ph":"X","cat":"kernel","name":"nodur","ts":161},
{"ph":"i","cat":"kernel","name":"nots","dur":4},
{"ph":"X","cat":"kernel","name":"line\nbreak","ts":170,"dur":1.005},
{"ph":"X","cat":"kernel","name":"tie_a","ts":171,"dur":2.5},
{"ph":"X","cat":"kernel","name":"tie_b","ts":172,"dur":2.5},
{"ph":"X","cat":"kernel","name":"neg","ts":173,"dur":-1},
{"ph":"X","cat":"nccl:kernel","name":"ncclAllReduce","ts":180,"dur":7,"args":{"External id":7}},
{"ph":"X","cat":"kernel","name":"late","ts":300,"dur":0.125}
]}
EOF
# the same events as a bare list
sed -e '1d' -e '$d' "$E/obj/edge.json" | { echo '['; cat; echo ']'; } >"$E/bare/edge.json"
gzip -c "$E/obj/edge.json" >"$E/gz/edge.json.gz"
# two plain-JSON ranks sharing kernel names (merge order, per-rank %)
cat >"$E/ranks/t-rank-1.5.pt.trace.json" <<'EOF'
[{"ph":"X","cat":"cpu_op","name":"op","ts":1,"dur":9,"args":{"External id":1,"Input Dims":[[3]]}},
{"ph":"X","cat":"kernel","name":"k1","ts":2,"dur":3.25,"args":{"External id":1}},
{"ph":"X","cat":"kernel","name":"k2","ts":6,"dur":1.5},
{"ph":"X","cat":"kernel","name":"k3","ts":8,"dur":0.3}]
EOF
cat >"$E/ranks/t-rank-0.5.pt.trace.json" <<'EOF'
{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"op","ts":1,"dur":9,"args":{"External id":1,"Input Dims":[[2],[]]}},
{"ph":"X","cat":"kernel","name":"k2","ts":2,"dur":4},
{"ph":"X","cat":"kernel","name":"k1","ts":6,"dur":1,"args":{"External id":1}}]}
EOF

EDGE_OPTS=("" "$CUSTOM_OPTS" "--top-k 100 --categories --ignore-categories"
    "--start-pct 20 --end-pct 100" "--top-k 3 --categories KERNEL gpu --ignore-categories"
    "--min-duration-us 2.5")
for form in obj bare gz; do
    f=$(ls "$E/$form"/*)
    for o in "${EDGE_OPTS[@]}"; do
        run_case "edge ($form)" "$E/$form" "$o" --rank 0 "$f"
    done
done
for o in "" "--top-k 2" "--categories --ignore-categories --start-pct 50 --end-pct 100"; do
    run_case "edge (2 plain-json ranks)" "$E/ranks" "$o" \
        --rank 0 "$E/ranks/t-rank-0.5.pt.trace.json" --rank 1 "$E/ranks/t-rank-1.5.pt.trace.json"
done

echo "$cases cases, $failures failed"
[ $failures -eq 0 ]
