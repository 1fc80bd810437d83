#!/usr/bin/env bash
# Kernel-to-source accuracy of `magpie trace sources` on the labelled table
# tests/fixtures/sources/labels.csv (real kernel names from the traces in
# ../shared/data/traces, each with the file that defines it, found by
# reading the code). Prints precision on the rows the mapper claims, recall
# over all rows, the calibration of confidence >= 0.9 and the closed-library
# rows reported closed.
#
# usage: bench/sources_accuracy.sh MAGPIE [--offline]
# Sources: the pinned vLLM and SGLang sdists and the torch wheel's ATen
# headers and the amd-aiter wheel's sources (aiter's csrc/ and hsa/, the
# composable_kernel it bundles) from PyPI (downloaded once, sha256-checked,
# cached under ${XDG_CACHE_HOME:-~/.cache}/magpie/test-sources;
# MP_SOURCES_NO_TORCH=1 / MP_SOURCES_NO_AITER=1 skip the 104 MB / 40 MB wheels),
# plus any checkout named by MP_SOURCES_MIOPEN / MP_SOURCES_AITER /
# MP_SOURCES_PYTORCH (git checkouts; no registry ships MIOpen's kernels). Rows whose
# repository is not indexed still count in "recall over all rows".
# Exit 0 when the targets hold (precision >= 0.95, calibration >= 0.95,
# every closed row closed, recall >= 0.85 over the rows whose repository was
# indexed), 1 when one misses, 77 when the sources cannot be had (offline).
set -euo pipefail
MAGPIE=${1:?usage: sources_accuracy.sh MAGPIE [--offline]}
OFFLINE=${2:-}
HERE=$(cd "$(dirname "$0")/.." && pwd)
LABELS=$HERE/tests/fixtures/sources/labels.csv
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/magpie/test-sources
mkdir -p "$CACHE"

# name version sha256 (sizes: vllm 10.8 MB, sglang 2.0 MB)
PKGS="vllm 0.11.0 f435a64c24e9c4178d657a76f8edd8548ddc444012f7d06a9f79ac3a6392bfae
sglang 0.5.4 897a88edad78ddd8109e2f4e152d6481518c1eaddaf1cdcfac60545208bbe465"
fetch() { # name version sha -> extracted dir on stdout
    local n=$1 v=$2 sha=$3 dir=$CACHE/$1-$2
    if [ -d "$dir" ]; then echo "$dir"; return 0; fi
    [ "$OFFLINE" = --offline ] && return 1
    local url
    url=$(curl -sf --max-time 30 "https://pypi.org/simple/$n/" |
          grep -o "https://files[^\"]*/$n-$v\\.tar\\.gz#sha256=[0-9a-f]*" | head -1) || return 1
    [ -n "$url" ] || return 1
    local want=${url##*sha256=}
    [ "$sha" = - ] || [ "$sha" = "$want" ] || { echo "sha256 pin mismatch for $n $v" >&2; return 1; }
    curl -sfL --max-time 300 --max-filesize 100000000 -o "$CACHE/$n-$v.tar.gz" "${url%%#*}" || return 1
    echo "$want  $CACHE/$n-$v.tar.gz" | sha256sum -c --quiet || return 1
    mkdir -p "$dir.tmp" && tar xzf "$CACHE/$n-$v.tar.gz" -C "$dir.tmp" --strip-components=1 &&
        mv "$dir.tmp" "$dir" && rm -f "$CACHE/$n-$v.tar.gz"
    echo "$dir"
}
# Wheels of which only some files are kept: fetch_wheel DIR URL SHA PY-EXPR
# extracts the members for which PY-EXPR (a Python expression of the member
# name n) gives a new name (None = skip) into $CACHE/DIR.
fetch_wheel() {
    local dir=$CACHE/$1 whl=$CACHE/$1.whl
    if [ -d "$dir" ]; then echo "$dir"; return 0; fi
    [ "$OFFLINE" = --offline ] && return 1
    curl -sfL --max-time 600 --max-filesize 120000000 -o "$whl" "$2" || return 1
    echo "$3  $whl" | sha256sum -c --quiet || return 1
    mkdir -p "$dir.tmp" && python3 -c 'import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for m in z.infolist():
    n = m.filename
    to = eval(sys.argv[3])
    if to is None or m.is_dir():
        continue
    path = os.path.join(sys.argv[2], to)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with z.open(m) as src, open(path, "wb") as dst:
        dst.write(src.read())' "$whl" "$dir.tmp" "$4" && mv "$dir.tmp" "$dir" && rm -f "$whl"
    echo "$dir"
}
# torch 2.9.0 (aarch64 CPU wheel, 104 MB, the smallest torch wheel on PyPI):
# only its ATen headers are kept (torch/include/ATen), as "pytorch-2.9.0-headers"
TORCH_URL=https://files.pythonhosted.org/packages/58/fe/334225e6330e672b36aef23d77451fa906ea12881570c08638a91331a212/torch-2.9.0-cp311-cp311-manylinux_2_28_aarch64.whl
TORCH_SHA=c596708b5105d0b199215acf0c9be7c1db5f1680d88eddadf4b75a299259a677
fetch_torch() {
    fetch_wheel pytorch-2.9.0-headers "$TORCH_URL" "$TORCH_SHA" \
        'n if n.startswith("torch/include/ATen/") else None'
}
# amd-aiter 0.1.7.post2.dev18 (40 MB, pure-Python wheel): it ships aiter's
# sources in aiter_meta/ (csrc/, hsa/ with the asm kernels, 3rdparty/
# composable_kernel), kept at the repository's own paths, with the aiter/
# Python package (its Triton kernels) beside them, as "aiter-0.1.7.post2.dev18"
AITER_URL=https://files.pythonhosted.org/packages/3f/ba/3d47c82268d01b9e707c7b35d2177c833264c6a138b01bf427214b26cfe4/amd_aiter-0.1.7.post2.dev18-py3-none-any.whl
AITER_SHA=fe139d74438217c35e87e3b961166bac8db2d381eadccb371da2e63615f05a31
fetch_aiter() {
    fetch_wheel aiter-0.1.7.post2.dev18 "$AITER_URL" "$AITER_SHA" \
        'n[len("aiter_meta/"):] if n.startswith("aiter_meta/") else n if n.startswith("aiter/") else None'
}
REPOS=()
if [ "${MP_SOURCES_NO_TORCH:-}" != 1 ]; then
    d=$(fetch_torch) || { echo "SKIP: cannot download the torch 2.9.0 wheel (offline?)"; exit 77; }
    REPOS+=("$d")
fi
while read -r n v sha; do
    d=$(fetch "$n" "$v" "$sha") || { echo "SKIP: cannot download $n $v sdist (offline?)"; exit 77; }
    REPOS+=("$d")
done <<< "$PKGS"
if [ "${MP_SOURCES_NO_AITER:-}" != 1 ]; then
    d=$(fetch_aiter) || { echo "SKIP: cannot download the amd-aiter wheel (offline?)"; exit 77; }
    REPOS+=("$d")
fi
for var in MP_SOURCES_MIOPEN MP_SOURCES_AITER MP_SOURCES_PYTORCH; do
    [ -n "${!var:-}" ] && [ -d "${!var}" ] && REPOS+=("${!var}")
done
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
python3 -c 'import csv,sys
for r in csv.DictReader(open(sys.argv[1])): print(r["name"])' "$LABELS" > "$OUT/names.txt"
"$MAGPIE" trace sources --kernel-source-repos "${REPOS[@]}" --json < "$OUT/names.txt" > "$OUT/res.json"
# The with_stack traces of the same runs (graph-capture traces whose launch
# events name the kernels): a row whose kernel one of them launches with a
# Python stack is resolved with that evidence, as `magpie trace sources
# TRACE` would. MP_SOURCES_TRACES (space-separated) replaces the list.
TRACES_DIR=$HERE/../shared/data/traces/tracelens-tests/inference
STACK_TRACES=${MP_SOURCES_TRACES:-"$TRACES_DIR/vllm_decode_full/capture_traces/graph_capture_rank_0.1773709742341309550.pt.trace.json.gz $TRACES_DIR/sglang_decode/capture_traces/bs_32_rank0.json.gz"}
i=0
for t in $STACK_TRACES; do
    [ -f "$t" ] || continue
    "$MAGPIE" trace sources "$t" --kernel-source-repos "${REPOS[@]}" --json > "$OUT/stack$i.json"
    i=$((i + 1))
done
# The gap-analysis path, as a user runs it (`magpie benchmark --trace-dir D
# --find-kernel-sources`): it reads each run's traces (the rank traces and
# any with_stack traces beside them, e.g. capture_traces/) for launch
# stacks, loaded packages and platform. Every trace directory under
# ../shared/data/traces; MP_SOURCES_GAP_DIRS (space-separated) replaces the
# list, MP_SOURCES_NO_GAP=1 skips it. A labelled name is scored here when
# some directory's top kernels hold it.
SHARED_TRACES=$HERE/../shared/data/traces
GAP_DIRS=${MP_SOURCES_GAP_DIRS:-"$SHARED_TRACES/h200 $SHARED_TRACES/h200-tp2 $SHARED_TRACES/tracelens-tests/h100 $SHARED_TRACES/tracelens-tests/mi300 $SHARED_TRACES/tracelens-tests/mi210/gpu_only_trace $SHARED_TRACES/tracelens-tests/inference/vllm_decode_full $SHARED_TRACES/tracelens-tests/inference/sglang_decode $SHARED_TRACES/tracelens-tests/perf_model/normalization $SHARED_TRACES/tracelens-tests/torch_compile_triton"}
i=0
if [ "${MP_SOURCES_NO_GAP:-}" != 1 ]; then
    for g in $GAP_DIRS; do
        [ -d "$g" ] || continue
        "$MAGPIE" benchmark --trace-dir "$g" --top-k 100000 -q --json --skip-bad-ranks --find-kernel-sources \
            --kernel-source-repos "${REPOS[@]}" -o "$OUT/gapws$i" > "$OUT/gap$i.json" 2> "$OUT/gap$i.err" ||
            { echo "gap analysis failed on $g:"; cat "$OUT/gap$i.err"; exit 1; }
        i=$((i + 1))
    done
fi
python3 - "$LABELS" "$OUT/res.json" "$OUT" "${REPOS[@]}" <<'PY'
import csv, glob, json, os, sys
labels = list(csv.DictReader(open(sys.argv[1])))
res = json.load(open(sys.argv[2]))["kernels"]
roots = sys.argv[4:]
indexed = [os.path.basename(p.rstrip("/")).lower() for p in roots]
assert len(res) == len(labels)
stack = {}
for f in sorted(glob.glob(os.path.join(sys.argv[3], "stack*.json"))):
    for k in json.load(open(f))["kernels"]:
        if k["python_frames"] and k["name"] not in stack:
            stack[k["name"]] = k
with_stack = 0
for i, lab in enumerate(labels):
    if lab["name"] in stack:
        res[i] = stack[lab["name"]]
        with_stack += 1
def bundled(root, repo):
    """an indexed tree carries the repository (aiter's 3rdparty/composable_kernel)"""
    return any(os.path.isdir(os.path.join(root, d, repo)) for d in ("3rdparty", "third_party"))
def file_indexed(lab):
    """the labelled file is present in an indexed tree of its repository"""
    for p in roots:
        if os.path.basename(p.rstrip("/")).lower().startswith(lab["repo"].lower()) or bundled(p, lab["repo"]):
            for dp, _, fs in os.walk(p):
                for f in fs:
                    if os.path.join(dp, f).endswith("/" + lab["file"]):
                        return True
    return False
def repo_indexed(repo):
    return any(i.startswith(repo.lower()) for i in indexed) or any(bundled(p, repo) for p in roots)
def pct(a, b): return "%.3f (%d/%d)" % (a / b if b else float("nan"), a, b)
def score(pairs, title):
    """prints the figures for (label, result) pairs; returns (ok, misses)"""
    claimed = right = closed_rows = closed_ok = 0
    hi = hi_right = 0
    recall_all_num = recall_all_den = recall_ix_num = recall_ix_den = 0
    recall_nm_num = recall_nm_den = recall_fx_num = recall_fx_den = 0
    wrong = []
    for lab, r in pairs:
        if lab["repo"] == "closed":
            closed_rows += 1
            ok = r["source_resolution"] == "closed" and r["source_file"] is None and r["source_confidence"] == 0
            closed_ok += ok
            if not ok: wrong.append(("closed-not-closed", lab["name"], r["source_resolution"]))
            continue
        expect = lab["file"]
        got = r["source_file"] if r["source_resolution"] == "resolved" else None
        correct = (got is not None and expect != "" and (got == expect or got.endswith("/" + expect))) \
                  or (got is None and expect == "")
        if got is not None:
            claimed += 1
            right += correct
            if r["source_confidence"] >= 0.9:
                hi += 1; hi_right += correct
            if not correct: wrong.append(("wrong", lab["name"][:90], got))
        recall_all_den += 1
        recall_all_num += correct
        if expect == "" or repo_indexed(lab["repo"]):
            recall_ix_den += 1; recall_ix_num += correct
            if not correct and got is None and file_indexed(lab):
                wrong.append(("not-claimed", lab["name"][:90], r["source_error"]))
        if lab["repo"] != "MIOpen":
            recall_nm_den += 1; recall_nm_num += correct
        if expect == "" or (repo_indexed(lab["repo"]) and file_indexed(lab)):
            recall_fx_den += 1; recall_fx_num += correct
        elif repo_indexed(lab["repo"]) and not correct:
            wrong.append(("file-not-in-indexed-tree", lab["name"][:90], lab["file"]))
    print(title)
    print("rows: %d (closed-library %d, open %d)" % (len(pairs), closed_rows, len(pairs) - closed_rows))
    print("precision on claimed rows:          " + pct(right, claimed))
    print("recall over all open rows:          " + pct(recall_all_num, recall_all_den))
    print("recall over rows with repo indexed: " + pct(recall_ix_num, recall_ix_den))
    print("recall over rows with file indexed: " + pct(recall_fx_num, recall_fx_den))
    print("recall over non-MIOpen open rows:   " + pct(recall_nm_num, recall_nm_den))
    print("calibration, confidence >= 0.9:     " + pct(hi_right, hi))
    print("closed-library rows reported closed:" + pct(closed_ok, closed_rows))
    ok = (claimed == 0 or right / claimed >= 0.95) and (hi == 0 or hi_right / hi >= 0.95) \
         and closed_ok == closed_rows and (recall_ix_den == 0 or recall_ix_num / recall_ix_den >= 0.85)
    return ok, wrong
print("rows resolved with a trace's stack: %d" % with_stack)
ok_names, wrong = score(list(zip(labels, res)), "names from the table (trace sources), with the capture traces' stacks:")
gap = {}
for f in sorted(glob.glob(os.path.join(sys.argv[3], "gap*.json"))):
    for k in json.load(open(f)).get("top_kernels", []):
        gap.setdefault(k["name"], k)
ok_gap = True
if gap:
    pairs = [(lab, gap[lab["name"]]) for lab in labels if lab["name"] in gap]
    ok_gap, wrong_gap = score(pairs, "gap-analysis path (benchmark --trace-dir D --find-kernel-sources), "
                              "labelled names among %d kernels of %d trace directories:"
                              % (len(gap), len(glob.glob(os.path.join(sys.argv[3], "gap*.json")))))
    wrong += [("gap-" + w[0],) + w[1:] for w in wrong_gap]
# Magpie's test and reference columns, on the rows of labels_refs.csv
# (matched by name prefix): precision of every filled cell, and how many
# labelled non-empty cells were filled. test_file may list alternatives (a|b).
refs = list(csv.DictReader(open(os.path.join(os.path.dirname(sys.argv[1]), "labels_refs.csv"))))
cols = ["test_file", "baseline_ref_file", "baseline_ref_symbol", "baseline_ref_kind",
        "triton_ref_file", "triton_ref_symbol"]
filled = {c: 0 for c in cols}; good = {c: 0 for c in cols}
labelled = {c: 0 for c in cols}; found = {c: 0 for c in cols}
ref_rows = 0
for lab, r in zip(labels, res):
    ref = next((x for x in refs if lab["name"].startswith(x["name_prefix"])), None)
    if ref is None or r["source_resolution"] != "resolved":
        continue
    ref_rows += 1
    for c in cols:
        got = r.get(c) or ""
        if c == "baseline_ref_kind" and got == "none":
            got = ""
        if c == "triton_ref_file" and ":" in got:
            got = got.split(":", 1)[1]
        want = [w for w in ref[c].split("|") if w]
        if want:
            labelled[c] += 1
        if got:
            filled[c] += 1
            ok = any(got == w or got.endswith("/" + w) for w in want)
            good[c] += ok
            found[c] += ok
            if not ok: wrong.append(("wrong-" + c, lab["name"][:60], got))
print("reference columns, %d resolved rows of labels_refs.csv (precision of filled cells; labelled cells filled):" % ref_rows)
for c in cols:
    print("  %-20s precision %s  filled %s" % (c, pct(good[c], filled[c]), pct(found[c], labelled[c])))
refs_ok = all(filled[c] == 0 or good[c] / filled[c] >= 0.95 for c in cols)
for w in wrong: print("  miss:", *w)
ok = ok_names and ok_gap and refs_ok
sys.exit(0 if ok else 1)
PY
