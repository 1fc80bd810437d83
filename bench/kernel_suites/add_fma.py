"""Triton a + b (the reference is examples/kernels/pytorch/add_ref.py) made
compute-bound, for the 1 % check of bench/kernel_eval_speed.sh. Each element
of a goes through ITERS multiply-adds by 1.0 and 0.0 (read from memory at run
time, so the compiler cannot drop them; exact in fp32, so the result is a + b
bit for bit) before b is added. ITERS is a run-time argument, so both sides
run the same compiled kernel and differ only in the loop count: 402 against
398 iterations is ~1 % more work whatever the memory placement.

(Why not add_extra.py's 1 % more programs on scratch buffers: on an H200 that
pair's effect moved between compares, 1.25 % in one and 0.14-0.57 % in four
of 53, each with a tight interval: a memory-bound pair's "1 %" depends on
where its buffers land.)"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ITERS = 398
BLOCK = 1024


@triton.jit
def _add_fma(a_ptr, b_ptr, c_ptr, k_ptr, n, iters, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    one = tl.load(k_ptr)
    zero = tl.load(k_ptr + 1)
    acc = tl.load(a_ptr + offs, mask=mask)
    for _ in range(iters):
        acc = acc * one + zero
    tl.store(c_ptr + offs, acc + tl.load(b_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = None

    def forward(self, a, b):
        if self.k is None or self.k.device != a.device:
            self.k = torch.tensor([1.0, 0.0], dtype=a.dtype, device=a.device)
        c = torch.empty_like(a)
        n = a.numel()
        _add_fma[(triton.cdiv(n, BLOCK),)](a, b, c, self.k, n, ITERS, BLOCK=BLOCK)
        return c
