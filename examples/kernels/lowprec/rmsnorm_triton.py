"""Correct Triton candidate: one program per row, float32 inside, one
rounding to bfloat16 at the store."""
import torch
import triton
import triton.language as tl

from rmsnorm_ref import Model


@triton.jit
def _rmsnorm(x_ptr, w_ptr, y_ptr, n, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    r = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n + eps)
    tl.store(y_ptr + row * stride + cols, (x * r * w).to(tl.bfloat16), mask=mask)


class ModelNew(Model):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        _rmsnorm[(x.shape[0],)](x, self.weight, y, x.shape[1], x.stride(0), 1e-6,
                                BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=8)
        return y
