"""Reference (KernelBench style): row softmax of a 1024 x 4096 float16
matrix of logits with standard deviation 3."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [(3 * torch.randn(1024, 4096)).to(torch.float16)]


def get_init_inputs():
    return []
