"""Triton candidate: a + b, one 1024-element block per program. SLOW2PCT (set
by add_triton_2pct.py) makes the first 13 % of the programs also read one
element of b from the far end: correct, about 2 % more time (the same trick
as examples/kernels/cuda/vadd_2pct.cu)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

SLOW2PCT = False


@triton.jit
def _add(a_ptr, b_ptr, c_ptr, n, SLOW: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    s = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
    if SLOW:
        far = mask & (offs < n // 100 * 13)
        s += 0.0 * tl.load(b_ptr + (n - 1 - offs), mask=far, other=0.0)
    tl.store(c_ptr + offs, s, mask=mask)


class ModelNew(nn.Module):
    def forward(self, a, b):
        c = torch.empty_like(a)
        n = a.numel()
        _add[(triton.cdiv(n, 1024),)](a, b, c, n, SLOW=SLOW2PCT, BLOCK=1024)
        return c
