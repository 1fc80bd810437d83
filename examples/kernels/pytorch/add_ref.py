"""Reference (KernelBench style): a + b on 16777259 floats (~65 us on an H200,
memory-bound), for the Triton sensitivity set compare_2pct.yaml."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a + b


def get_inputs():
    return [torch.randn(16777259), torch.randn(16777259)]


def get_init_inputs():
    return []
