"""Triton a + b (the reference is examples/kernels/pytorch/add_ref.py) for the
sequential-error check of bench/kernel_eval_speed.sh. One kernel serves both
sides of the 1 % check: the grid's first programs add a and b; with EXTRA > 0
the launch has EXTRA x 100 % more programs, which do the same add on scratch
buffers of that size. The code each program runs is the same in both
variants, only the amount of work differs, so EXTRA = 0.01 (add_extra1pct.py)
moves ~1 % more bytes through the same instructions: a ~1 % slower kernel.

(An earlier variant made each program also sum a few padding floats; on an
H200 that "slower" kernel came out 2.9 % *faster* than the plain add, the
changed instruction schedule outweighing the extra bytes.)"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

EXTRA = 0.0
BLOCK = 1024


@triton.jit
def _add(a_ptr, b_ptr, c_ptr, x_ptr, y_ptr, z_ptr, n, nx, nmain, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    if pid < nmain:
        offs = pid * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        s = tl.load(a_ptr + offs, mask=mask) + tl.load(b_ptr + offs, mask=mask)
        tl.store(c_ptr + offs, s, mask=mask)
    else:
        offs = (pid - nmain) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < nx
        s = tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask)
        tl.store(z_ptr + offs, s, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scratch = None

    def forward(self, a, b):
        c = torch.empty_like(a)
        n = a.numel()
        nmain = triton.cdiv(n, BLOCK)
        x, y, z, nx = a, b, c, 0
        if EXTRA > 0:
            nx = max(BLOCK, int(n * EXTRA))
            if self.scratch is None or self.scratch[0].device != a.device or \
                    self.scratch[0].numel() != nx:
                self.scratch = [torch.ones(nx, dtype=a.dtype, device=a.device) for _ in range(3)]
            x, y, z = self.scratch
        _add[(nmain + triton.cdiv(nx, BLOCK),)](a, b, c, x, y, z, n, nx, nmain, BLOCK=BLOCK)
        return c
