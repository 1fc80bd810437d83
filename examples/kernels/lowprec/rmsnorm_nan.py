"""Wrong candidate: a sign slip under the square root makes every output
NaN; the verdict must say NaN/Inf (not 'no output')."""
import torch

from rmsnorm_ref import Model


class ModelNew(Model):
    def forward(self, x):
        xf = x.float()
        r = torch.rsqrt(-xf.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
        return (xf * r * self.weight.float()).to(x.dtype)
