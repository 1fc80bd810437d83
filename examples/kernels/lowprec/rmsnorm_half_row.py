"""Wrong candidate (subtle): the mean of squares is taken over the first
half of each row only, a ~1 % error per row, about 3 bfloat16 ulps: inside
allclose's bfloat16 rtol at most elements, caught by the RMS rule."""
import torch

from rmsnorm_ref import Model


class ModelNew(Model):
    def forward(self, x):
        xf = x.float()
        half = xf[:, : xf.shape[-1] // 2]
        r = torch.rsqrt(half.pow(2).mean(dim=-1, keepdim=True) + 1e-6)
        return (xf * r * self.weight.float()).to(x.dtype)
