"""triton.testing.do_bench medians of the noise kernels, one line per kernel,
for bench/kernel_noise.sh, which runs this in separate processes (the spread
of interest is between processes). Usage: noise_dobench.py [VADD_CUBIN]

vadd: the very cubin of examples/kernels/cuda/vadd.cu (compiled by the
caller) launched through the driver API on torch's stream, 16777259 floats,
256 threads a block, as magpie's C harness launches it; without a cubin,
torch.add(a, b, out=c). matmul_bf16_{4096,8192}: a @ b. softmax_4096:
torch.softmax(x, -1). add_65536: a + b on 65536 floats."""
import ctypes
import json
import sys

import torch
import triton.testing

N = 16777259
a = torch.randn(N, device="cuda")
b = torch.randn(N, device="cuda")
c = torch.empty(N, device="cuda")
vadd = lambda: torch.add(a, b, out=c)  # noqa: E731
if len(sys.argv) > 1:
    cu = ctypes.CDLL("libcuda.so.1")
    mod, kfn = ctypes.c_void_p(), ctypes.c_void_p()
    assert cu.cuModuleLoad(ctypes.byref(mod), sys.argv[1].encode()) == 0
    assert cu.cuModuleGetFunction(ctypes.byref(kfn), mod, b"vadd") == 0
    cu.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
        ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    args = [ctypes.c_void_p(t.data_ptr()) for t in (a, b, c)] + [ctypes.c_int(N)]
    params = (ctypes.c_void_p * 4)(*[ctypes.addressof(x) for x in args])
    grid = (N + 255) // 256

    def vadd():
        st = torch.cuda.current_stream().cuda_stream
        assert cu.cuLaunchKernel(kfn, grid, 1, 1, 256, 1, 1, 0, st, params, None) == 0

    vadd()
    torch.cuda.synchronize()
    assert torch.equal(c, a + b)
m4 = [torch.randn(4096, 4096, dtype=torch.bfloat16, device="cuda") for _ in range(2)]
m8 = [torch.randn(8192, 8192, dtype=torch.bfloat16, device="cuda") for _ in range(2)]
x = torch.randn(4096, 4096, device="cuda")
s1, s2 = torch.randn(65536, device="cuda"), torch.randn(65536, device="cuda")
kernels = {"add_65536": lambda: s1 + s2, "vadd": vadd, "matmul_bf16_8192": lambda: m8[0] @ m8[1],
           "matmul_bf16_4096": lambda: m4[0] @ m4[1], "softmax_4096": lambda: torch.softmax(x, -1)}
for name, call in kernels.items():
    med = triton.testing.do_bench(call, return_mode="median")
    print(json.dumps({"tool": "do_bench", "kernel": name, "median_ms": med}), flush=True)
