"""Wrong Triton candidate (subtle): the K mask stops one short, so the last
term of every dot product is dropped."""
import torch.nn as nn

from matmul_triton import matmul


class ModelNew(nn.Module):
    def forward(self, a, b):
        return matmul(a, b, k_end_pad=1)
