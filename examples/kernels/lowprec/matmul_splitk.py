"""Correct candidate: split-K in four float32 partial products summed in
another order than the reference's (a reduction-order difference)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        k = a.shape[1] // 4
        parts = [a[:, i:i + k].float() @ b[i:i + k].float() for i in range(0, a.shape[1], k)]
        return ((parts[3] + parts[2]) + (parts[1] + parts[0])).to(a.dtype)
