"""Correct candidate: multiplies by the reciprocal scale instead of dividing
(a one-ulp difference in float32 that can move an FP8 rounding)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        xf = x.float()
        amax = xf.abs().amax(dim=-1, keepdim=True)
        return (xf * (448.0 / amax)).to(torch.float8_e4m3fn), amax / 448.0
