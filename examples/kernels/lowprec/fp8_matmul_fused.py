"""Correct candidate: the FP8 GEMM in float32 with the scale applied before
the one rounding to bfloat16 (the reference rounds twice)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b, scale):
        return ((a.float() @ b.float()) * scale.float()).to(torch.bfloat16)
