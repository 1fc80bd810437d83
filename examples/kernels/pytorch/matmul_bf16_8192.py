"""8192 x 8192 x 8192 bf16 matrix product (~1.6 ms on an H200; one of the
timing-noise anchors of issue 5)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(8192, 8192, dtype=torch.bfloat16),
            torch.randn(8192, 8192, dtype=torch.bfloat16)]


def get_init_inputs():
    return []
