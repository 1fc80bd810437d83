#!/usr/bin/env bash
# `magpie trace split` against TraceLens's splitter: on the real H200 mixtral
# serving trace (vLLM-native step annotations) execution_details.csv must be
# byte-identical to TraceLens's (output paths relative), execution_details.json
# equal within 1e-9, the same sub-trace files written, and every sub-trace a
# valid trace whose event count is the one reported. Also: error handling
# (no annotations, bad options, unreadable input) exits 2 and writes nothing.
set -u
MAGPIE=${MAGPIE:?}
SRC=${MP_SRC:?}
FIX=${MP_FIXTURES:?}
H=${MP_SHARED:-}/data/traces/h200
T=$H/mixtral_shape_l8_bs16_p256_d12.json.gz
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# -- errors: a trace with neither step annotations nor a repeating call
# pattern, bad options, missing file
printf '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 2, "pid": 1, "tid": 1}]}' \
    >"$t/flat.json"
"$MAGPIE" trace split "$t/flat.json" -o "$t/none" -q >"$t/log" 2>&1
rc=$?
[ $rc = 2 ] || fail "no annotations: exit $rc, want 2"
grep -q "no repeating call pattern" "$t/log" || fail "no annotations: message: $(cat "$t/log")"
[ ! -e "$t/none" ] || fail "no annotations: output directory was created"
"$MAGPIE" trace split "$t/missing.json.gz" -o "$t/x" -q >/dev/null 2>&1
[ $? = 2 ] || fail "missing file: want exit 2"
"$MAGPIE" trace split "$t/flat.json" -o "$t/x" --num-steps zero -q >/dev/null 2>&1
[ $? = 2 ] || fail "bad --num-steps: want exit 2"
"$MAGPIE" trace split "$t/flat.json" -o "$t/x" --bogus >/dev/null 2>&1
[ $? = 2 ] || fail "unknown option: want exit 2"

command -v python3 >/dev/null || { echo "SKIPPED: python3 not found"; exit 0; }
check() { # check NAME GOLDEN_CSV GOLDEN_FILES_TXT [GOLDEN_JSON] -- options
    local name=$1 csv=$2 files=$3 json=$4
    shift 4
    local out=$t/$name
    if ! "$MAGPIE" trace split "$T" -o "$out" -q "$@" >"$t/$name.log" 2>&1; then
        fail "$name: magpie exited non-zero"
        cat "$t/$name.log"
        return
    fi
    python3 - "$out" "$csv" "$files" "$json" "${EVSHA:--}" <<'PY' || fail "$name"
import csv, glob, gzip, hashlib, json, os, sys
out, gcsv, gfiles, gjson, gsha = sys.argv[1:6]
ok = True
if gsha != "-":
    # each sub-trace lists TraceLens's events in TraceLens's order
    want = dict(l.split() for l in open(gsha))
    for f, digest in want.items():
        h = hashlib.sha256()
        for e in json.load(gzip.open(os.path.join(out, f)))["traceEvents"]:
            h.update(json.dumps(e, sort_keys=True).encode())
            h.update(b"\n")
        if h.hexdigest() != digest:
            print(f, "events differ from TraceLens's (content or order)"); ok = False
mine = open(os.path.join(out, "execution_details.csv")).read().replace(out + "/", "")
if mine != open(gcsv).read():
    print("execution_details.csv differs from TraceLens's"); ok = False
want = sorted(l.strip() for l in open(gfiles) if l.strip().endswith(".gz"))
have = sorted(os.path.relpath(p, out) for p in glob.glob(out + "/**/*.json.gz", recursive=True))
if want != have:
    print("sub-trace files differ:", set(want) ^ set(have)); ok = False
det = json.load(open(os.path.join(out, "execution_details.json")))
for e in det:
    tr = json.load(gzip.open(e["output_path"]))
    n = len(tr["traceEvents"])
    if n != e["event_count"]:
        print(e["output_path"], "has", n, "events, details say", e["event_count"]); ok = False
    g = sum(1 for x in tr["traceEvents"] if x.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation"))
    if g != e["num_gpu_events"]:
        print(e["output_path"], "has", g, "GPU events, details say", e["num_gpu_events"]); ok = False
    if "deviceProperties" not in tr:
        print(e["output_path"], "lost the top-level keys"); ok = False
if gjson != "-":
    ref = json.load(open(gjson))
    if len(ref) != len(det):
        print("execution_details.json: entries", len(det), "want", len(ref)); ok = False
    for a, b in zip(det, ref):
        a = dict(a, output_path=os.path.basename(a["output_path"]))
        for k in b:
            x, y = a.get(k), b[k]
            if isinstance(y, float):
                if abs(x - y) > 1e-9 * max(1.0, abs(y)):
                    print("json", k, x, y); ok = False
            elif x != y:
                print("json", k, x, y); ok = False
print(("ok   " if ok else "FAIL ") + os.path.basename(out), len(det), "sub-traces")
sys.exit(0 if ok else 1)
PY
}

# the bundled TP2 rank-0 trace (examples/): runs without ../shared too
T=$SRC/examples/traces/tp2/tp2-rank-0.1796011317.pt.trace.json.gz
EVSHA=$FIX/split/tp2_rank0.events.sha256 check tp2_rank0 "$FIX/split/tp2_rank0.execution_details.csv" "$FIX/split/tp2_rank0.files.txt" \
    "$FIX/split/tp2_rank0.execution_details.json" --store-single-iteration --find-steady-state --num-steps 8
T=$H/mixtral_shape_l8_bs16_p256_d12.json.gz
if [ ! -f "$T" ]; then
    echo "shared H200 trace not found: TraceLens comparisons skipped"
    [ $fails = 0 ] && echo "trace split: error cases ok" && exit 0
    exit 1
fi
command -v python3 >/dev/null || { echo "SKIPPED: python3 not found"; exit 0; }

G=$H/mixtral_shape_l8_bs16_p256_d12_tracelens_split
EVSHA=$FIX/split/mixtral_steady.events.sha256 check steady "$G/execution_details.csv" "$G/files.txt" "$G/execution_details.json" \
    --find-steady-state --store-single-iteration --num-steps 8
check divide "$FIX/split/mixtral_div.execution_details.csv" "$FIX/split/mixtral_div.files.txt" - \
    --divide-phases --num-steps 4
check range "$FIX/split/mixtral_rng.execution_details.csv" "$FIX/split/mixtral_rng.files.txt" - \
    -i 2:11 --find-steady-state --num-steps 4
check workload "$FIX/split/mixtral_wl.execution_details.csv" "$FIX/split/mixtral_wl.files.txt" - \
    --find-steady-state --num-steps 4 --CONC 16 --OSL 12 --R 0.5
# traces without step annotations: TraceLens's generic fallback (a repeating
# pattern of child names in the call tree)
gen() { # gen NAME TRACE
    [ -f "$2" ] || { echo "skip generic $1: trace missing"; return; }
    local keep=$T
    T=$2
    check "generic_$1" "$FIX/split/generic_$1.execution_details.csv" "$FIX/split/generic_$1.files.txt" - \
        --store-single-iteration --find-steady-state --num-steps 8
    T=$keep
}
S=${MP_SHARED:-}/data/traces/tracelens-tests
gen train_plain "$FIX/traces/h200_train/train_plain.json.gz"
gen Qwen_Qwen1.5-0.5B-Chat__1016005 "$S/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
gen resnet_act_checkpoint "$S/mi300/resnet_act_checkpoint.json.gz"
gen facebook_timesformer-base-finetuned-k400__1016002 "$S/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
gen normalization_layer_test "$S/perf_model/normalization/normalization_layer_test.json.gz"
[ $fails = 0 ] && echo "trace split: all cases agree with TraceLens" && exit 0
echo "trace split: $fails failure(s)"
exit 1
