"""Reference (KernelBench style): row softmax of a 4096 x 4096 float32 matrix."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(4096, 4096)]


def get_init_inputs():
    return []
