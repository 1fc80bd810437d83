#!/usr/bin/env bash
# Installing magpie (cmake/install.cmake): `cmake --install` of the build tree
# under test into a temporary prefix and with DESTDIR, then the installed
# binary, run from another directory with the source tree on no path, on
# what needs no PyPI package: a TraceLens report and gap analysis of the
# bundled two-rank trace, an OpenCL compare on PoCL, and the Python runner
# started from the installed runtime/ (not the source tree's). Then the
# .deb (`cpack -G DEB`): its name, version, files and Depends, and lintian
# (when installed) finds no error or warning. Nothing is installed on this
# machine (no dpkg -i).
#
# Env: MAGPIE (magpie binary of a build tree), MP_SRC (repository root),
# MP_BUILD (the build tree to install; default: the directory of MAGPIE).
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_SRC:?MP_SRC must point to the repository}"
BUILD=${MP_BUILD:-$(dirname "$MAGPIE")}
if [ ! -f "$BUILD/cmake_install.cmake" ]; then
    echo "FAIL: $BUILD is not a configured build tree (set MP_BUILD)"
    exit 1
fi
TMP=$(mktemp -d "${TMPDIR:-/tmp}/install.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# PoCL's LLVM is not built with the sanitizers: leaks it leaves at exit are not ours
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
unset MAGPIE_RUNTIME_DIR
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
ok() { echo "ok   $*"; }

# ---- cmake --install into a prefix, and with DESTDIR
P=$TMP/prefix
if cmake --install "$BUILD" --prefix "$P" >"$TMP/install.log" 2>&1; then
    ok "cmake --install --prefix"
else
    fail "cmake --install: $(tail -5 "$TMP/install.log")"
fi
for f in bin/magpie share/magpie/runtime/magpie_runner.py share/magpie/runtime/magpie_check.py \
    share/magpie/runtime/magpie_timing.h; do
    [ -f "$P/$f" ] || fail "$f not installed"
done
[ -x "$P/bin/magpie" ] || fail "bin/magpie not executable"
# the man page and completions: installed when the build generated them
# (the man page compressed with gzip -9n, as Debian wants)
if [ -f "$BUILD/doc/magpie.1" ]; then
    zcat "$P/share/man/man1/magpie.1.gz" 2>/dev/null | cmp -s "$BUILD/doc/magpie.1" - ||
        fail "share/man/man1/magpie.1.gz not installed from doc/magpie.1"
fi
[ -f "$P/share/doc/magpie/changelog.gz" ] || fail "share/doc/magpie/changelog.gz not installed"
for pair in \
    completions/magpie:share/bash-completion/completions/magpie \
    completions/_magpie:share/zsh/vendor-completions/_magpie; do
    built=${pair%%:*} dest=${pair#*:}
    if [ -f "$BUILD/$built" ]; then
        cmp -s "$BUILD/$built" "$P/$dest" || fail "$dest not installed from $built"
    elif [ -e "$P/$dest" ]; then
        fail "$dest installed but the build has no $built"
    fi
done
if DESTDIR="$TMP/stage" cmake --install "$BUILD" --prefix /usr/local >"$TMP/destdir.log" 2>&1 &&
    [ -x "$TMP/stage/usr/local/bin/magpie" ] &&
    [ -f "$TMP/stage/usr/local/share/magpie/runtime/magpie_runner.py" ]; then
    ok "DESTDIR honoured"
else
    fail "DESTDIR install: $(tail -5 "$TMP/destdir.log")"
fi

# ---- the installed binary, from a directory outside the source tree
M=$P/bin/magpie
RT=$(cd "$P/share/magpie/runtime" && pwd -P)
W=$TMP/work
mkdir -p "$W/traces" "$W/k"
cp "$MP_SRC"/examples/traces/tp2/*.json.gz "$W/traces/"
cp "$MP_SRC"/examples/kernels/opencl/{vadd.cl,vadd_slow.cl,vadd_ref.cl} "$W/k/"
cp "$MP_SRC"/examples/kernels/pytorch/{add_ref.py,add_small.py} "$W/k/"
cd "$W" || exit 1
case "$PWD" in "$MP_SRC"*) fail "work directory $PWD is inside the source tree" ;; esac

# which runtime/: the installed one; the build tree's binary keeps its source tree's
"$M" --version >"$TMP/out" 2>&1 || fail "installed --version: exit $?"
grep -qx "runtime: $RT (installed)" "$TMP/out" || fail "installed --version: $(cat "$TMP/out")"
grep -qx "install: prefix ($(cd "$P" && pwd -P))" "$TMP/out" || fail "installed --version install: $(cat "$TMP/out")"
"$MAGPIE" --version >"$TMP/out" 2>&1
src_rt=$(cd "$MP_SRC/runtime" && pwd -P)
grep -qx "runtime: $src_rt (source tree)" "$TMP/out" || fail "build-tree --version: $(cat "$TMP/out")"
grep -q "^install: build tree (" "$TMP/out" || fail "build-tree --version install: $(cat "$TMP/out")"
MAGPIE_RUNTIME_DIR=$W/k "$M" --version >"$TMP/out" 2>&1
grep -q "^runtime: none: MAGPIE_RUNTIME_DIR=$W/k has no magpie_runner.py" "$TMP/out" ||
    fail "a MAGPIE_RUNTIME_DIR without the runner must be refused: $(cat "$TMP/out")"
MAGPIE_RUNTIME_DIR=$src_rt "$M" --version >"$TMP/out" 2>&1
grep -qx "runtime: $src_rt (MAGPIE_RUNTIME_DIR)" "$TMP/out" || fail "MAGPIE_RUNTIME_DIR first: $(cat "$TMP/out")"
ok "runtime lookup order"

# TraceLens report of one rank
rank0=$(ls traces/tp2-rank-0*.json.gz)
if "$M" trace report "$rank0" -o report >"$TMP/out" 2>"$TMP/err" &&
    [ -s report/gpu_timeline.csv ] && [ -s report/ops_summary.csv ] && [ -s report/report.html ]; then
    ok "trace report"
else
    fail "trace report: $(tail -5 "$TMP/err")"
fi

# gap analysis over both ranks
if "$M" benchmark --trace-dir traces --top-k 5 -o gap >"$TMP/out" 2>"$TMP/err" &&
    [ -f gap/gap_analysis/gap_analysis_rank0.csv ] && [ -f gap/gap_analysis/gap_analysis_rank1.csv ] &&
    head -1 gap/gap_analysis/gap_analysis.csv | grep -q '^Name,Calls,Self CUDA total (us)'; then
    ok "gap analysis"
else
    fail "gap analysis: $(tail -5 "$TMP/err")"
fi

# OpenCL compare (PoCL): both kernels correct, a verdict for the candidate;
# the verdict itself is test_kernel_opencl.sh's business
if [ -n "$(ls /etc/OpenCL/vendors 2>/dev/null)" ]; then
    cat >cmp.yaml <<'YAML'
kernels:
  - {id: vadd_slow, type: opencl, source_files: [k/vadd_slow.cl], size: 100003, reference: k/vadd_ref.cl}
  - {id: vadd, type: opencl, source_files: [k/vadd.cl], size: 100003, reference: k/vadd_ref.cl}
latency:
  min_time_s: 0.05
  max_time_s: 0.5
YAML
    if "$M" compare -q -k cmp.yaml -o cmp >"$TMP/out" 2>"$TMP/err" &&
        grep -q 'Correctness: 2/2 passed' "$TMP/out" &&
        grep -q 'Kernel 1: vadd  \(FASTER\|SLOWER\|SAME\|INCONCLUSIVE\)' "$TMP/out"; then
        ok "OpenCL compare"
    else
        fail "OpenCL compare: $(tail -5 "$TMP/out" "$TMP/err")"
    fi
else
    echo "SKIP OpenCL compare: no OpenCL ICD installed (apt-get install pocl-opencl-icd)"
fi

# the Python runner from the installed runtime/: without torch it reports
# that PyTorch is missing (with torch, the add kernel passes)
"$M" -v analyze --no-latency --type pytorch --reference k/add_ref.py k/add_small.py -o py \
    >"$TMP/out" 2>"$TMP/err"
grep -q "runtime from $RT (installed)" "$TMP/err" ||
    fail "runner not started from the installed runtime: $(grep runtime "$TMP/err")"
if grep -q 'Correctness: SUCCESS' "$TMP/out" || grep -q 'PyTorch is not installed' "$TMP/out"; then
    ok "Python runner from the installed runtime"
else
    fail "Python runner: $(cat "$TMP/out")"
fi

# ---- the .deb
if command -v dpkg-deb >/dev/null && [ -f "$BUILD/CPackConfig.cmake" ]; then
    if cpack --config "$BUILD/CPackConfig.cmake" -G DEB -B "$TMP/deb" >"$TMP/cpack.log" 2>&1; then
        ver=$("$M" --version | sed -n 's/^magpie //p')
        deb="$TMP/deb/magpie_${ver}_amd64.deb"
        if [ -f "$deb" ]; then
            dpkg-deb -c "$deb" | awk '{print $NF}' >"$TMP/files"
            for f in ./usr/bin/magpie ./usr/share/magpie/runtime/magpie_runner.py \
                ./usr/share/magpie/runtime/magpie_check.py ./usr/share/magpie/runtime/magpie_timing.h \
                ./usr/share/doc/magpie/copyright ./usr/share/doc/magpie/changelog.gz; do
                grep -qx -- "$f" "$TMP/files" || fail ".deb lacks $f"
            done
            if [ -f "$BUILD/doc/magpie.1" ]; then
                grep -qx './usr/share/man/man1/magpie.1.gz' "$TMP/files" || fail ".deb lacks the man page"
            fi
            [ "$(dpkg-deb -f "$deb" Package)" = magpie ] || fail ".deb Package"
            [ "$(dpkg-deb -f "$deb" Version)" = "$ver" ] || fail ".deb Version"
            dep=$(dpkg-deb -f "$deb" Depends)
            want="libc6 libjansson4 libyaml-0-2 zlib1g libcurl4 libxlsxwriter4 libmicrohttpd12"
            # ISA-L is optional at build time (CMakeLists.txt)
            grep -q '^ISAL_LIB:FILEPATH=/' "$BUILD/CMakeCache.txt" && want="$want libisal2"
            for p in $want; do
                echo ", $dep," | grep -q ", $p[ ,]" || fail ".deb Depends lacks $p: $dep"
            done
            ok ".deb: $(basename "$deb"), Depends: $dep"
            # lintian-clean: no error and no warning (informational tags allowed)
            if command -v lintian >/dev/null; then
                lintian "$deb" >"$TMP/lintian" 2>&1
                if grep -E '^[EW]: ' "$TMP/lintian"; then
                    fail "lintian: $(grep -cE '^[EW]: ' "$TMP/lintian") error(s)/warning(s)"
                else
                    ok "lintian: no errors or warnings"
                fi
            else
                echo "SKIP lintian: not installed (apt-get install lintian)"
            fi
        else
            fail "cpack made no $deb: $(ls "$TMP/deb")"
        fi
    else
        fail "cpack -G DEB: $(tail -5 "$TMP/cpack.log")"
    fi
else
    echo "SKIP .deb: no dpkg-deb or no CPackConfig.cmake in $BUILD"
fi

if [ $fails -gt 0 ]; then
    echo "$fails failure(s)"
    exit 1
fi
echo "test_install: all passed"
