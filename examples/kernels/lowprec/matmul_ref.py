"""Reference (KernelBench style): C = A @ B in float16, A 512 x 2048,
B 2048 x 384 (torch accumulates in float32 and rounds once)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(512, 2048, dtype=torch.float16),
            torch.randn(2048, 384, dtype=torch.float16)]


def get_init_inputs():
    return []
