"""Wrong candidate (subtle): the last term of every dot product is dropped
(a K loop bound off by one)."""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        return (a[:, :-1].float() @ b[:-1].float()).to(a.dtype)
