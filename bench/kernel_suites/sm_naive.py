"""Baseline: softmax from PyTorch primitives (max, exp, sum, divide: four
passes over the matrix)."""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        e = (x - x.max(dim=-1, keepdim=True).values).exp()
        return e / e.sum(dim=-1, keepdim=True)
