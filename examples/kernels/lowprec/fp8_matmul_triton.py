"""Correct Triton candidate: FP8 tiles widened to bfloat16 in registers,
float32 accumulator, scale and one rounding at the store. SKIP_K_TAIL
(wrong variant) stops the K loop one 64-wide block early."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _mm8(a_ptr, b_ptr, c_ptr, s_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
         SKIP_K_TAIL: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    k_stop = K - BK if SKIP_K_TAIL else K
    for k in range(0, k_stop, BK):
        kk = k + rk
        a = tl.load(a_ptr + rm[:, None] * sam + kk[None, :] * sak,
                    mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + kk[:, None] * sbk + rn[None, :] * sbn,
                    mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a.to(tl.bfloat16), b.to(tl.bfloat16))
    s = tl.load(s_ptr)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, (acc * s).to(tl.bfloat16),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def mm8(a, b, scale, skip_k_tail=False):
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=torch.bfloat16, device=a.device)
    s = scale.float().reshape(1).contiguous()
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    _mm8[grid](a, b, c, s, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
               c.stride(0), c.stride(1), SKIP_K_TAIL=skip_k_tail, BM=64, BN=64, BK=64)
    return c


class ModelNew(nn.Module):
    def forward(self, a, b, scale):
        return mm8(a, b, scale)
