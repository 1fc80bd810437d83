"""Wrong Triton candidate: the store mask stops one column short (n - 1),
into a zero-filled output, so the last element of every row stays 0."""
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
    tl.store(y_ptr + row * stride + cols, (x * r * w).to(tl.bfloat16), mask=cols < n - 1)


class ModelNew(Model):
    def forward(self, x):
        x = x.contiguous()
        y = torch.zeros_like(x)
        _rmsnorm[(x.shape[0],)](x, self.weight, y, x.shape[1], x.stride(0), 1e-6,
                                BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=8)
        return y
