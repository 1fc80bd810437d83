#!/usr/bin/env bash
# Warm runners kept between MCP calls (issue 33; docs/kernel-timing.md,
# "Warm runners"): tests/integration/mcp_warm.py on PoCL OpenCL (stdio and
# streamable HTTP) and on the CPU torch venv (MAGPIE_PYTHON, else
# ~/.cache/magpie/torch-venv, else python3; SKIP when none has torch):
# the second call of a problem runs in the warm child (no process start,
# no imports or device open, the reference from memory), verdicts as on a
# cold server, and hostile candidates (garbage on stdout, crash, exit,
# wrong, a hang cancelled) or a runner killed between calls leave the
# server answering and the next call on a fresh runner.
#
# Env: MAGPIE (magpie binary), MP_SRC (repository root).
set -u
: "${MAGPIE:?MAGPIE must point to the magpie binary}"
: "${MP_SRC:?MP_SRC must point to the repository}"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/mcpwarm.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# PoCL's LLVM is not built with the sanitizers: leaks it leaves at exit are not ours
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
export MAGPIE_RUNTIME_DIR="$MP_SRC/runtime"
fails=0
if [ ! -d /etc/OpenCL/vendors ] || [ -z "$(ls /etc/OpenCL/vendors 2>/dev/null)" ]; then
    echo "SKIP opencl, http: no OpenCL ICD installed (apt-get install pocl-opencl-icd)"
else
    for part in opencl http; do
        mkdir -p "$TMP/$part"
        timeout 900 python3 "$MP_SRC/tests/integration/mcp_warm.py" "$MAGPIE" "$TMP/$part" $part ||
            fails=$((fails + 1))
    done
fi
PY=${MAGPIE_PYTHON:-}
[ -n "$PY" ] || { [ -x "$HOME/.cache/magpie/torch-venv/bin/python" ] &&
    PY=$HOME/.cache/magpie/torch-venv/bin/python; } || PY=python3
if ! "$PY" -c 'import torch' >/dev/null 2>&1; then
    echo "SKIP torch: PyTorch is not importable for $PY"
else
    mkdir -p "$TMP/torch"
    MAGPIE_PYTHON="$PY" timeout 1200 python3 "$MP_SRC/tests/integration/mcp_warm.py" "$MAGPIE" \
        "$TMP/torch" torch || fails=$((fails + 1))
fi
[ $fails = 0 ] && echo "test_mcp_warm: all passed"
exit $((fails > 0))
