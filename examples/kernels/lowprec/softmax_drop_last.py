"""Wrong candidate (subtle): the denominator leaves out the last column."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        xf = x.float()
        e = torch.exp(xf - xf.max(dim=-1, keepdim=True).values)
        return (e / e[:, :-1].sum(dim=-1, keepdim=True)).to(x.dtype)
