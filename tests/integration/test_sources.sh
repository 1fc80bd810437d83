#!/usr/bin/env bash
# `magpie trace sources` and gap analysis --find-kernel-sources on real
# traces from ../shared and the fixture trees in tests/fixtures/sources:
# closed-library kernels come out closed, names on stdin resolve against the
# fixtures, the gap CSV carries Magpie's header comments and 15 + 4 source
# columns, a missing repo is a warning naming it, bad input exits 2.
set -euo pipefail
: "${MAGPIE:?}" "${MP_SHARED:?}" "${MP_FIXTURES:?}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export XDG_CACHE_HOME=$T/cache
FX=$MP_FIXTURES/sources
TR=$MP_SHARED/data/traces
fail() { echo "FAIL: $*"; exit 1; }

# 1. a real trace, no repos: kernels listed, closed libraries closed
"$MAGPIE" trace sources "$TR/h200-tp2/torch_trace/tp2-rank-0.1796011317.pt.trace.json.gz" --json > "$T/a.json"
python3 - "$T/a.json" <<'PY' || fail "trace sources on a real trace"
import json, sys
d = json.load(open(sys.argv[1]))
ks = d["kernels"]
assert len(ks) > 10, len(ks)
closed = [k for k in ks if k["name"].startswith(("nvjet_", "ncclDevKernel"))]
assert closed, "no nvjet/nccl kernel in the trace"
for k in closed:
    assert k["source_resolution"] == "closed" and k["source_file"] is None, k
    assert k["source_confidence"] == 0 and k["library"], k
for k in ks:
    if k["source_resolution"] != "closed":
        assert k["source_resolution"] == "unresolved" and "no_source_repos" in k["source_error"], k
print("trace: %d kernels, %d closed" % (len(ks), len(closed)))
PY

# 2. names on stdin against the fixture trees; the cache is written then used
printf '%s\n' 'void mylib::rms_norm_kernel<float>(float*, float const*, int)' \
    copy_tile_16x16_half gemm_asm_bf16_128x128 fused_norm_kernel \
    > "$T/names.txt"
for pass in 1 2; do
    "$MAGPIE" trace sources --kernel-source-repos "$FX/hipproj" "$FX/asmproj" "$FX/proj_a" "$FX/proj_b" \
        < "$T/names.txt" > "$T/b$pass.tsv" 2> "$T/b$pass.err"
done
grep -q '(cache)' "$T/b2.err" || fail "second run did not use the index cache"
cmp -s "$T/b1.tsv" "$T/b2.tsv" || fail "cached index gave other answers"
grep -qP '^resolved\t0\.9\d\d\tcuda_cpp\thipproj/src/kernels.cu:26\t' "$T/b1.tsv" || fail "rms_norm_kernel row: $(cat "$T/b1.tsv")"
grep -qP '^resolved\t[0-9.]+\tasm\tasmproj/kernels/gemm_asm_bf16_128x128.s:3\t' "$T/b1.tsv" || fail "asm row"
grep -qP '^unresolved\t0\.000\ttriton_jit\t-- ambiguous: 2 files' "$T/b1.tsv" || fail "ambiguous row"

# 3. gap analysis with source columns; a missing repo is a warning
"$MAGPIE" benchmark --trace-dir "$TR/tracelens-tests/inference/sglang_decode" --top-k 6 -q \
    --find-kernel-sources --kernel-source-repos "$FX/hipproj" "$T/no-such-repo" -o "$T/gap" \
    > "$T/gap.out" 2> "$T/gap.err"
grep -q "no-such-repo' not found" "$T/gap.err" || fail "no warning for the missing repo"
python3 - "$T/gap/gap_analysis/gap_analysis.csv" <<'PY' || fail "gap_analysis.csv source columns"
import csv, sys
lines = open(sys.argv[1], newline="").read().split("\r\n")
assert lines[0] == "# Repository Path Mappings:", lines[0]
assert lines[1].startswith("# $HIPPROJ_DIR="), lines[1]
assert lines[2] == "#" and "experimental" in lines[3], lines[:4]
rows = list(csv.reader(l for l in lines[4:] if l))
h = rows[0]
magpie15 = ["kind", "category", "source_repo", "source_file", "upstream_url", "test_file",
            "test_cmd", "baseline_ref_file", "baseline_ref_symbol", "baseline_ref_kind",
            "triton_ref_file", "triton_ref_symbol", "notes", "source_resolution", "source_error"]
assert h[6:21] == magpie15, h
assert h[21:] == ["source_line", "source_symbol", "source_confidence", "source_candidates",
                  "replay_command"], h
assert len(rows) == 7 and all(len(r) == 26 for r in rows[1:])
# the replay command for the op behind each kernel (docs/replay.md)
for r in rows[1:]:
    assert r[25].startswith("magpie trace replay '") and r[25].endswith(" --top 1 -o replay_%d" % rows.index(r)), r[25]
    assert " --kernel '" + r[0].replace("'", "'\\''") + "'" in r[25], r[25]
tens = [r for r in rows[1:] if r[0].startswith("Cijk_")]
assert tens and all(r[19] == "closed" and r[9] == "" and r[23] == "0.000" for r in tens)
PY
MAGPIE_REPOS_URL_BASE=file:///nonexistent HOME="$T/home" \
    "$MAGPIE" benchmark --trace-dir "$TR/tracelens-tests/inference/sglang_decode" --top-k 3 -q --json \
    --find-kernel-sources -o "$T/gap2" > "$T/gap2.json" 2> /dev/null
python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
assert d["config"]["find_kernel_sources"] is True
k=d["top_kernels"][0]
assert "source_confidence" in k and "source_candidates" in k and "kind" in k, k
assert k["replay_command"].startswith("magpie trace replay "), k' "$T/gap2.json" \
    || fail "gap JSON source fields"

# the gap-analysis path uses the run's own evidence: the packages its trace
# shows loaded (upkern), then a capture trace's launch stack beside it
# (vendproj's copy ran) over the packages
mkdir -p "$T/run/capture_traces"
cp "$FX/ctx_trace.json" "$T/run/run_rank0.json"
gapsrc() {
    "$MAGPIE" benchmark --trace-dir "$T/run" --top-k 5 -q --json --find-kernel-sources \
        --kernel-source-repos "$FX/upkern" "$FX/vendproj" -o "$T/gapws" 2> /dev/null |
        python3 -c 'import json,sys
k=[k for k in json.load(sys.stdin)["top_kernels"] if k["name"] == "_route_rows"][0]
print(k["source_file"], k["notes"])'
}
gapsrc | grep -q '^upkern/routing.py .*decided_by=package' || fail "gap path: package clue: $(gapsrc)"
python3 - "$T/run/capture_traces/capture_rank0.json" <<'PY'
import json, sys
ev = [{"ph": "X", "cat": "python_function", "pid": 1, "tid": 1, "ts": 0, "dur": 50,
       "name": "vendproj/ops/_kernels/routing.py(9): launch"},
      {"ph": "X", "cat": "cuda_runtime", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
       "name": "hipModuleLaunchKernel", "args": {"correlation": 3, "kernel": "_route_rows"}}]
json.dump({"traceEvents": ev}, open(sys.argv[1], "w"))
PY
gapsrc | grep -q '^vendproj/ops/_kernels/routing.py .*decided_by=stack' || fail "gap path: capture stack: $(gapsrc)"

# 4. bad input
set +e
"$MAGPIE" trace sources --kernel-source-repos "$T/no-such-repo" < /dev/null > /dev/null 2>&1
[ $? -eq 2 ] || fail "a missing repo for trace sources should exit 2"
"$MAGPIE" trace sources "$T/no-such-trace.json" > /dev/null 2>&1
[ $? -eq 2 ] || fail "a missing trace should exit 2"
set -e
echo "test_sources: ok"
