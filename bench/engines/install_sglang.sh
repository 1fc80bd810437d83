#!/bin/bash
# Installs SGLang for CPU runs into a venv (make check-engines), from PyPI
# only. `pip install sglang` pulls every CUDA-only extra (flashinfer,
# flash-attn, DeepEP/DeepGEMM, FlashMLA, TileLang, CUTLASS DSL, ...) and
# there is no CPU build of torch or of sglang-kernel on PyPI, so: sglang
# without dependencies, then its requirements minus the CUDA-only ones
# (PyPI's torch wheel is the CUDA build; it runs on a CPU). sglang imports
# sglang-kernel unconditionally and that library links libcuda.so.1, which a
# machine without an NVIDIA driver lacks: stub_libcuda.c, built here into
# the venv, stands in and reports "no device", so SGLang takes its
# plain-torch CPU paths (run the server with LD_LIBRARY_PATH=$VENV/stub).
#
# usage: install_sglang.sh VENV [VERSION]     (uv is used when it can be had)
set -eu
VENV=$1
VER=${2:-0.5.23}
HERE=$(cd "$(dirname "$0")" && pwd)
t0=$(date +%s)
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PY=$VENV/bin/python
if ! "$VENV/bin/pip" install -q uv 2>/dev/null; then :; fi
if [ -x "$VENV/bin/uv" ]; then
    inst() { "$VENV/bin/uv" pip install -q --python "$PY" "$@"; }
else
    inst() { "$VENV/bin/pip" install -q "$@"; }
fi
inst --no-deps "sglang==$VER"
# CUDA-only requirements (GPU kernels, their DSLs and CUDA bindings) and
# media extras a text model does not use.
SKIP='flash-attn-4 flashinfer-python humming-kernels nvidia-cutlass-dsl nvidia-mathdx
nvshmem4py-cu13 quack-kernels sgl-deep-ep sgl-deep-gemm sgl-flash-mla tilelang
torch-memory-saver deepseek-recipe cuda-python kernels torchaudio torchcodec av
decord2 apache-tvm-ffi'
"$PY" - "$SKIP" >"$VENV/sglang-reqs.txt" <<'PY'
import importlib.metadata as m, re, sys
skip = set(sys.argv[1].split())
norm = lambda s: re.sub(r"[-_.]+", "-", s).lower()
for r in m.requires("sglang") or []:
    if "extra ==" in r:
        continue
    name = norm(re.split(r"[\[<>=!~; ]", r, 1)[0])
    if name not in skip:
        print(r)
PY
inst -r "$VENV/sglang-reqs.txt"
mkdir -p "$VENV/stub"
cc -O2 -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$VENV/stub/libcuda.so.1" "$HERE/stub_libcuda.c"
echo "sglang $VER installed in $VENV in $(($(date +%s) - t0)) s, $(du -sh "$VENV" | cut -f1)"
