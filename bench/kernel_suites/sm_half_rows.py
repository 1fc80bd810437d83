"""Wrong: writes only the first half of the rows of a fresh output (the
rest is whatever the allocator hands out: poisoned with NaN)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        h = x.shape[0] // 2
        y[:h] = torch.softmax(x[:h], dim=-1)
        return y
