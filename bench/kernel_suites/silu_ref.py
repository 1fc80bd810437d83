"""Reference (KernelBench style): SiLU-and-multiply (the gated MLP
activation) of an 8192 x 6144 bfloat16 input (50.3M elements): out =
silu(x[:, :3072]) * x[:, 3072:]."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        d = x.shape[-1] // 2
        return F.silu(x[:, :d]) * x[:, d:]


def get_inputs():
    return [torch.randn(8192, 6144, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
