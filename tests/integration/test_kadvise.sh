#!/usr/bin/env bash
# `magpie discover`, `magpie suggest` and gap_analysis's clamped traces end
# to end: discovery on examples/kernels (JSON shape, kinds, references,
# YAML configs), suggestions from the real H200 ncu recordings, and the
# clamped traces of the real two-rank H200 trace compared event by event
# with an independent Python implementation of Magpie's clamping rule.
set -u
MAGPIE=${MAGPIE:?} SRC=${MP_SRC:?}
DATA=${MP_SHARED:-}/data
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# ---- discover ----
"$MAGPIE" discover "$SRC/examples/kernels" --kernel-type all --json >"$t/disc.json" || fail "discover exit"
python3 - "$t/disc.json" <<'PY' || fail "discover JSON"
import json, sys
d = json.load(open(sys.argv[1]))
by = {e["source_file"].split("examples/kernels/")[1]: e for e in d}
v = by["cuda/vadd.cu"]
assert v["kernel_type"] == "cuda" and v["kernels"] == [{"name": "vadd", "line": 2}], v
assert v["suggested_config"]["reference"].endswith("cuda/vadd_ref.cu"), v
assert any(c.endswith("cuda/compare.yaml") for c in v["configs"]), v
assert by["opencl/vadd.cl"]["suggested_config"]["kernel_name"] == "vadd"
assert by["hip/vadd_test.hip"]["runs_standalone"] is True
assert by["lowprec/softmax_triton.py"]["kernel_type"] == "triton"
assert "pytorch/softmax_naive.py" not in by
kinds = {e["kernel_type"] for e in d}
assert kinds == {"cuda", "hip", "opencl", "triton"}, kinds
print("discover:", len(d), "files,", sum(len(e["kernels"]) for e in d), "kernels")
PY
"$MAGPIE" discover "$SRC/examples/kernels" --kernel-type hip | grep -q "hip/vadd_test.hip (hip)" ||
    fail "discover text output"
"$MAGPIE" discover "$SRC/examples/kernels" --kernel-type nope >/dev/null 2>&1
[ $? = 2 ] || fail "bad --kernel-type exits 2"
"$MAGPIE" discover "$t/missing" >/dev/null 2>&1
[ $? = 2 ] || fail "missing path exits 2"

# ---- suggest ----
"$MAGPIE" suggest --ncu-csv "$SRC/tests/fixtures/kernel/ncu_h200_harness_base_units.csv" --kernel-id vadd \
    --json >"$t/sug.json" || fail "suggest exit"
python3 - "$t/sug.json" <<'PY' || fail "suggest JSON"
import json, sys
s = json.load(open(sys.argv[1]))
b = {x["type"]: x for x in s["bottlenecks"]}
assert "memory_bound" in b and 62 < b["memory_bound"]["metric_value"] < 63, s
assert s["summary"]["total_suggestions"] == len(s["suggestions"]) >= 1
PY
if [ -f "$DATA/gpu/ncu_vadd.csv" ]; then
    "$MAGPIE" suggest --ncu-csv "$DATA/gpu/ncu_vadd.csv" | grep -q "bottleneck" || fail "suggest on ncu_vadd.csv"
fi
echo '{"performance_state": "FAILED", "performance_result": {}}' >"$t/failed.json"
"$MAGPIE" suggest "$t/failed.json" 2>"$t/err" >/dev/null
[ $? = 2 ] && grep -q "Performance analysis not available" "$t/err" || fail "suggest on a failed analysis"

# ---- clamped traces (through the MCP tool over raw stdio) ----
TP2=$DATA/traces/h200-tp2/torch_trace
if [ -d "$TP2" ]; then
    req='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gap_analysis","arguments":{"trace_dir":"'$TP2'","start_pct":40,"end_pct":60,"top_k":3,"output_dir":"'$t'","generate_clamped_traces":true}}}'
    # stdin stays open until the answer came (EOF cancels calls in flight)
    timeout 300 python3 - "$MAGPIE" "$req" >"$t/mcp.out" 2>"$t/mcp.err" <<'PY' || fail "mcp gap_analysis"
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
p.stdin.write('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}\n')
p.stdin.write(sys.argv[2] + "\n")
p.stdin.flush()
for line in p.stdout:
    print(line, end="")
    if json.loads(line).get("id") == 1:
        break
p.stdin.close()
p.wait()
PY
    python3 - "$t/mcp.out" "$TP2" <<'PY' || fail "clamped traces differ from Magpie's rule"
import gzip, json, os, sys
res = None
for line in open(sys.argv[1]):
    m = json.loads(line)
    if m.get("id") == 1:
        res = m["result"]["structuredContent"]
files = res["clamped_trace_files"]
assert len(files) == 2, res
for f in files:
    src = os.path.join(sys.argv[2], os.path.basename(f).split("_clamped_")[0] + ".json.gz")
    data = json.load(gzip.open(src))
    ev = data["traceEvents"]
    spans = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ts") is not None and e.get("dur")
             and e["dur"] > 0]
    lo, hi = min(s for s, _ in spans), max(e for _, e in spans)
    a, b = lo + (hi - lo) * (40 / 100.0), lo + (hi - lo) * (60 / 100.0)
    want = []
    for e in ev:
        if e.get("ts") is None:
            continue
        dur = e.get("dur", 0)
        if e["ts"] + dur < a or e["ts"] > b:
            continue
        n = dict(e)
        s0, e0 = max(e["ts"], a), min(e["ts"] + dur, b)
        n["ts"], n["dur"] = s0, e0 - s0
        want.append(n)
    got = json.load(gzip.open(f))
    assert got["traceEvents"] == want, (f, len(got["traceEvents"]), len(want))
    assert [k for k in got] == [k for k in data], "top-level keys in order"
    for x, y in zip(got["traceEvents"], want):
        assert type(x["ts"]) is type(y["ts"]) and type(x["dur"]) is type(y["dur"]), (x, y)
    print(os.path.basename(f), len(want), "of", len(ev), "events")
PY
fi

# ---- auto_clone_repos (gap analysis --find-kernel-sources without repos) ----
VD=$DATA/traces/tracelens-tests/inference/vllm_decode_full
if [ -d "$VD" ]; then
    # a local "upstream" vllm holding the kernel a row needs; every other repo
    # the rows' kinds ask for is missing there, as with no network
    up=$t/up/vllm
    mkdir -p "$up/csrc" && printf 'namespace vllm {\ntemplate <typename scalar_t, bool IS_NEOX>\n__global__ void rotary_embedding_kernel(const long *p, scalar_t *q) {\n}\n}\n' \
        >"$up/csrc/pos_encoding_kernels.cu"
    (cd "$up" && git init -q && git add . && git -c user.name=t -c user.email=t@t commit -qm one) || fail "git init"
    start=$(date +%s)
    HOME=$t/home MAGPIE_REPOS_URL_BASE=file://$t/up "$MAGPIE" benchmark --trace-dir "$VD" --top-k 20 -q --json \
        --find-kernel-sources -o "$t/ac" >"$t/ac.json" 2>"$t/ac.err" || fail "gap with auto clone"
    [ -d "$t/home/.cache/magpie/repos/vllm/csrc" ] || fail "vllm not cloned into the cache"
    grep -q "auto_clone_repos: cannot clone pytorch" "$t/ac.err" || fail "no warning naming the missing repo: $(head -3 "$t/ac.err")"
    python3 - "$t/ac.json" <<'PY' || fail "auto-cloned repo resolves the row"
import json, sys
d = json.load(open(sys.argv[1]))
rows = {k["name"].split("<")[0]: k for k in d["top_kernels"]}
r = rows["void vllm::rotary_embedding_kernel"]
assert r["source_resolution"] == "resolved" and r["source_file"] == "csrc/pos_encoding_kernels.cu", r
PY
    # no network at all: each clone fails fast, a warning per repo, rows unresolved
    HOME=$t/home2 MAGPIE_REPOS_URL_BASE=https://nonexistent.invalid "$MAGPIE" benchmark --trace-dir "$VD" --top-k 5 \
        -q --find-kernel-sources -o "$t/ac2" >/dev/null 2>"$t/ac2.err" || fail "gap without network"
    grep -q "auto_clone_repos: cannot clone .*no network?" "$t/ac2.err" || fail "no-network warning: $(head -3 "$t/ac2.err")"
    echo "auto clone: $(( $(date +%s) - start )) s for both runs"
fi

# ---- benchmark_report.json: the source columns when the benchmark's gap
# analysis runs with find_kernel_sources (stand-in engine, profiled run) ----
mkdir -p "$t/bin"
printf '#!/bin/sh\nexec python3 %s "$@"\n' "$SRC/tests/tools/fake_engine.py" >"$t/bin/vllm"
chmod +x "$t/bin/vllm"
cat >"$t/fks.yaml" <<EOF
benchmark:
  framework: vllm
  model: fake-model
  run_mode: local
  envs: {CONC: 2, ISL: 16, OSL: 8, NUM_PROMPTS: 8, NUM_WARMUPS: 0}
  profiler: {torch_profiler: {enabled: true}}
  gap_analysis:
    enabled: true
    find_kernel_sources: true
    kernel_source_repos: [$SRC/tests/fixtures/sources/hipproj, $t/no-such-repo]
EOF
PATH="$t/bin:$PATH" FAKE_ENGINE_TAG="kadv$$" FAKE_ENGINE_MAX_S=90 PORT=$(python3 "$SRC/tests/tools/free_port.py") \
    timeout 180 "$MAGPIE" benchmark -b "$t/fks.yaml" -o "$t/fks" -q >"$t/fks.out" 2>"$t/fks.err" ||
    fail "benchmark with find_kernel_sources: $(tail -3 "$t/fks.err")"
python3 - "$t/fks" <<'PY' || fail "benchmark_report.json source columns"
import glob, json, sys
ws = sorted(glob.glob(sys.argv[1] + "/benchmark_vllm_*"))[-1]
r = json.load(open(ws + "/benchmark_report.json"))
g = r["gap_analysis"]
assert g["config"]["find_kernel_sources"] is True, g["config"]
k = g["top_kernels"][0]
cols = ["kind", "category", "source_repo", "source_file", "upstream_url", "test_file", "test_cmd",
        "baseline_ref_file", "baseline_ref_symbol", "baseline_ref_kind", "triton_ref_file",
        "triton_ref_symbol", "notes", "source_resolution", "source_error", "source_line",
        "source_symbol", "source_confidence", "source_candidates"]
missing = [c for c in cols if c not in k]
assert not missing, missing
assert "no-such-repo" in json.dumps(r), "the missing repo is not named in the report"
lines = open(ws + "/gap_analysis/gap_analysis.csv", newline="").read().split("\r\n")
assert lines[0] == "# Repository Path Mappings:", lines[0]
print("report row:", k["name"][:50], k["kind"], k["source_resolution"])
PY

[ $fails = 0 ] && echo "test_kadvise: all checks passed"
[ $fails = 0 ]
