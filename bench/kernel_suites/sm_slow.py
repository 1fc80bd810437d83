"""Slower but correct: the naive softmax computed in float64 and cast back
(twice the bytes per pass, plus the casts)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        d = x.double()
        e = (d - d.max(dim=-1, keepdim=True).values).exp()
        return (e / e.sum(dim=-1, keepdim=True)).to(torch.float32)
