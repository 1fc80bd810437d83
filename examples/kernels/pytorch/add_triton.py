"""Triton candidate: a + b, one 1024-element block per program. SLOW2PCT (set
by add_triton_2pct.py) makes every program also add the sum of its own 64
elements of a zero-filled scratch buffer (n/16 floats, 4 MB, evicted by the
L2 flush between samples): correct, about 2 % more memory traffic and time
for this memory-bound kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

SLOW2PCT = False


@triton.jit
def _add(a_ptr, b_ptr, c_ptr, z_ptr, n, nz, SLOW: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    s = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
    if SLOW:  # every program also sums its own 64 zeros: 6.25 % more reads of a and b's size
        zo = pid * 64 + tl.arange(0, 64)
        s += tl.sum(tl.load(z_ptr + zo, mask=zo < nz, other=0.0), axis=0)
    tl.store(c_ptr + offs, s, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.zeros = None

    def forward(self, a, b):
        c = torch.empty_like(a)
        n = a.numel()
        z = a
        nz = 0
        if SLOW2PCT:
            if self.zeros is None or self.zeros.device != a.device:
                self.zeros = torch.zeros(triton.cdiv(n, 1024) * 64, dtype=a.dtype, device=a.device)
            z, nz = self.zeros, self.zeros.numel()
        _add[(triton.cdiv(n, 1024),)](a, b, c, z, n, nz, SLOW=SLOW2PCT, BLOCK=1024)
        return c
