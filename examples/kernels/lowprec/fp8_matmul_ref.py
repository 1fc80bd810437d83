"""Reference (KernelBench style): an FP8 GEMM, A (512 x 2048) and B
(2048 x 384) in float8_e4m3fn with a per-tensor scale, dequantized to
bfloat16, output bfloat16. Written dtype-generic (the compute dtype follows
the inputs unless they are fp8), so that magpie's float64 run of the
reference really computes in float64."""
import torch
import torch.nn as nn

FP8 = (torch.float8_e4m3fn, torch.float8_e5m2)


class Model(nn.Module):
    def forward(self, a, b, scale):
        cdt = torch.bfloat16 if a.dtype in FP8 else a.dtype
        return (a.to(cdt) @ b.to(cdt)) * scale.to(cdt)


def get_inputs():
    return [torch.randn(512, 2048).to(torch.float8_e4m3fn),
            torch.randn(2048, 384).to(torch.float8_e4m3fn), torch.tensor(0.25)]


def get_init_inputs():
    return []
