"""Triton a + b (the reference is examples/kernels/pytorch/add_ref.py), where
every 1024-element program also sums PAD floats of a zero-filled scratch
buffer: PAD = 0 is the plain add; add_pad12.py sets PAD = 12 (about 1 % more
traffic: 12 x 4 bytes per 1024 x 12 bytes). For the sequential-error check
of bench/kernel_eval_speed.sh."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

PAD = 0


@triton.jit
def _add(a_ptr, b_ptr, c_ptr, z_ptr, n, PADN: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    s = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
    if PADN > 0:
        zo = pid * PADN + tl.arange(0, 16)
        s += tl.sum(tl.load(z_ptr + zo, mask=tl.arange(0, 16) < PADN, other=0.0), axis=0)
    tl.store(c_ptr + offs, s, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.zeros = None

    def forward(self, a, b):
        c = torch.empty_like(a)
        n = a.numel()
        z = a
        if PAD > 0:
            if self.zeros is None or self.zeros.device != a.device:
                self.zeros = torch.zeros(triton.cdiv(n, 1024) * PAD + 16, dtype=a.dtype,
                                         device=a.device)
            z = self.zeros
        _add[(triton.cdiv(n, 1024),)](a, b, c, z, n, PADN=PAD, BLOCK=1024)
        return c
