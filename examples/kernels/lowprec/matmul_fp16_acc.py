"""Wrong candidate (wrong reduction): K in 32 blocks of 64 whose float32
block products are added into a float16 running sum, rounded after each
block (a float16 accumulator)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float16, device=a.device)
        for i in range(0, a.shape[1], 64):
            acc = (acc.float() + a[:, i:i + 64].float() @ b[i:i + 64].float()).half()
        return acc
