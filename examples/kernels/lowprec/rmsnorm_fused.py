"""Correct candidate: RMSNorm computed in float32 and rounded to bfloat16
once (about one bfloat16 ulp from the naive reference at most elements;
rejected by float32 tolerances, accepted by the dtype-based rule)."""
import torch

from rmsnorm_ref import Model


class ModelNew(Model):
    def forward(self, x):
        xf = x.float()
        r = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
        return (xf * r * self.weight.float()).to(x.dtype)
