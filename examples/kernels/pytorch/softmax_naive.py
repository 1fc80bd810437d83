"""Baseline candidate: softmax spelled out in four separate kernels."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        m = x.max(dim=-1, keepdim=True).values
        e = torch.exp(x - m)
        return e / e.sum(dim=-1, keepdim=True)
