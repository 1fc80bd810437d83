"""4096 x 4096 x 4096 bf16 matrix product (the timing-noise anchor of issue 5)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(4096, 4096, dtype=torch.bfloat16),
            torch.randn(4096, 4096, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
