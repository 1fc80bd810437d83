"""Run-to-run spread of triton.testing.do_bench on the kernels of noise.yaml:
REPS medians each, printed with their coefficient of variation."""
import statistics
import sys

import torch
import triton.testing

REPS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
a = torch.randn(4096, 4096, dtype=torch.bfloat16, device="cuda")
b = torch.randn(4096, 4096, dtype=torch.bfloat16, device="cuda")
x = torch.randn(4096, 4096, device="cuda")
for name, fn in (("matmul_bf16_4096", lambda: a @ b), ("softmax_4096", lambda: torch.softmax(x, -1))):
    meds = [triton.testing.do_bench(fn, return_mode="median") for _ in range(REPS)]
    m = statistics.mean(meds)
    print("do_bench %s medians_ms=%s cov=%.3f%%" % (
        name, ",".join("%.5f" % v for v in meds), 100 * statistics.stdev(meds) / m))
