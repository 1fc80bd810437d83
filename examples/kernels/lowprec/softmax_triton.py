"""Correct Triton candidate: one program per row, float32 inside; with
ONLINE=1 the row is read in 4 blocks with an online (running max) sum, a
different reduction order; DROP_LAST=1 is the wrong variant."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr, DROP_LAST: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    if DROP_LAST:
        den = tl.sum(tl.where(cols < n - 1, e, 0.0), axis=0)
    else:
        den = tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride + cols, (e / den).to(tl.float16), mask=mask)


@triton.jit
def _softmax_online(x_ptr, y_ptr, n, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    m = -float("inf")
    s = 0.0
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n,
                    other=-float("inf")).to(tl.float32)
        nm = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - nm) + tl.sum(tl.exp(x - nm), axis=0)
        m = nm
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < n,
                    other=-float("inf")).to(tl.float32)
        tl.store(y_ptr + row * stride + cols, (tl.exp(x - m) / s).to(tl.float16), mask=cols < n)


def softmax(x, online=False, drop_last=False):
    x = x.contiguous()
    y = torch.empty_like(x)
    if online:
        _softmax_online[(x.shape[0],)](x, y, x.shape[1], x.stride(0), BLOCK=1024, num_warps=4)
    else:
        _softmax[(x.shape[0],)](x, y, x.shape[1], x.stride(0),
                                BLOCK=triton.next_power_of_2(x.shape[1]), DROP_LAST=drop_last,
                                num_warps=8)
    return y


class ModelNew(nn.Module):
    def forward(self, x):
        return softmax(x)
