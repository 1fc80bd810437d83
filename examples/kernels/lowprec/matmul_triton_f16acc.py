"""Wrong Triton candidate (wrong reduction): a float16 accumulator, rounded
after each 64-wide K block."""
import torch.nn as nn

from matmul_triton import matmul


class ModelNew(nn.Module):
    def forward(self, a, b):
        return matmul(a, b, f16_acc=True)
