"""Reference (KernelBench style): RMSNorm of a 512 x 2048 bfloat16 matrix,
written the naive way: every op in bfloat16, so the reference itself rounds
four times per element (what a correct fused kernel is judged against)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n=2048):
        super().__init__()
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(n, dtype=torch.bfloat16))

    def forward(self, x):
        var = x.pow(2).mean(dim=-1, keepdim=True)
        return x * torch.rsqrt(var + 1e-6) * self.weight


def get_inputs():
    return [torch.randn(512, 2048, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
