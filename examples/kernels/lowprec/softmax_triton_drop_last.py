"""Wrong Triton candidate (subtle): the denominator leaves out the last
column."""
import torch.nn as nn

from softmax_triton import softmax


class ModelNew(nn.Module):
    def forward(self, x):
        return softmax(x, drop_last=True)
