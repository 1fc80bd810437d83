"""Correct Triton candidate: one program per row, absmax and scaling in
float32, FP8 store. LAST_COL_RAW (wrong variant) stores the last column
without scaling."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _quant(x_ptr, q_ptr, s_ptr, n, stride, LAST_COL_RAW: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    s = tl.max(tl.abs(x), axis=0) / 448.0
    q = x / s
    if LAST_COL_RAW:
        q = tl.where(cols == n - 1, x, q)
    tl.store(q_ptr + row * stride + cols, q.to(tl.float8e4nv), mask=mask)
    tl.store(s_ptr + row, s)


def quant(x, last_col_raw=False):
    x = x.contiguous()
    q = torch.empty(x.shape, dtype=torch.float8_e4m3fn, device=x.device)
    s = torch.empty((x.shape[0], 1), dtype=torch.float32, device=x.device)
    _quant[(x.shape[0],)](x, q, s, x.shape[1], x.stride(0), LAST_COL_RAW=last_col_raw,
                          BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=8)
    return q, s


class ModelNew(nn.Module):
    def forward(self, x):
        return quant(x)
