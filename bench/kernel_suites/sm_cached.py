"""Cheating: computes the first input it sees and returns that output ever
after (fresh inputs on the next seed and the re-check catch it)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        global _OUT
        if _OUT is None:
            _OUT = torch.softmax(x, dim=-1)
        return _OUT


_OUT = None
