"""Correct candidate: softmax as three float16 kernels (max, exp, sum and
divide), each rounding to float16: more rounding than the reference, the
same algorithm."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
        return e / e.sum(dim=-1, keepdim=True)
