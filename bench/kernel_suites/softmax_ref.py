"""Reference (KernelBench style): row softmax of a 4096 x 8192 float32 matrix
(issue 33's 7-candidate suite; bench/kernel_eval_speed.sh)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(4096, 8192)]


def get_init_inputs():
    return []
