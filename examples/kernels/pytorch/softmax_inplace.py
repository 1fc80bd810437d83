"""Wrong candidate: right values, but it overwrites its input (caught by the
input-mutation check)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        x.sub_(x.max(dim=-1, keepdim=True).values).exp_()
        return x.div_(x.sum(dim=-1, keepdim=True))
