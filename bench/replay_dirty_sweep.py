"""The decode GEMM (8, 4096) x (4096, 4096) bf16 with L2 left dirty by
N MiB (L2 emptied by reading a buffer twice its size, then N MiB of it
rewritten) and after the contexts a Llama decode step gives it (the KV
caches' concatenation and SDPA; a small elementwise op): per-call kernel
time from the profiler's kernel records (median GEMM + median split-K
reduce). Needs a CUDA GPU and torch. Run: python3 bench/replay_dirty_sweep.py
(writes $OUT/exp_dirty.json when OUT is set). Figures: bench/README.md,
"replay_fidelity with the trace's dirty-L2 levels"."""
import torch, json, os, tempfile, statistics as st
from torch.profiler import profile, ProfilerActivity
dev = torch.device("cuda")
L2 = torch.cuda.get_device_properties(dev).L2_cache_size
flush = torch.empty(2 * L2, dtype=torch.int8, device=dev)
def recs(run):
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        run(); torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json"); os.close(fd)
    p.export_chrome_trace(path); evs = json.load(open(path)); os.unlink(path)
    evs = evs.get("traceEvents", evs) if isinstance(evs, dict) else evs
    r = [(e["ts"], e["dur"], e["name"]) for e in evs if e.get("ph") == "X" and e.get("cat") == "kernel"]
    return sorted(r)
W = [torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16) for _ in range(4)]
x = torch.randn(8, 4096, device=dev, dtype=torch.bfloat16)
def gemm_us(pre, n=60):
    def run():
        for i in range(n):
            pre(i); torch.mm(x, W[0])
    r = recs(run)
    # per call: nvjet + splitKreduce
    k = [d for (_, d, nm) in r if "nvjet" in nm]
    red = [d for (_, d, nm) in r if "splitKreduce" in nm]
    return st.median(k) + (st.median(red) if red else 0)
out = {}
for mib in (0, 4, 8, 16, 24, 32, 40, 50, 60, 80, 100):
    b = min(mib << 20, flush.numel())
    def pre(i, b=b):
        torch.amax(flush)
        if b: flush[:b].fill_(i % 100 + 1)
    out["dirty_%d" % mib] = round(gemm_us(pre), 2)
    print("dirty %3d MiB: %.2f us" % (mib, out["dirty_%d" % mib]), flush=True)
# the workload's context: cat K, cat V into new caches, cudnn SDPA (gqa), then o_proj
from torch.nn.attention import sdpa_kernel, SDPBackend
Kc = torch.randn(8, 8, 535, 128, device=dev, dtype=torch.bfloat16)
Vc = torch.randn(8, 8, 535, 128, device=dev, dtype=torch.bfloat16)
kn = torch.randn(8, 8, 1, 128, device=dev, dtype=torch.bfloat16)
q = torch.randn(8, 32, 1, 128, device=dev, dtype=torch.bfloat16)
def ctx(i):
    torch.amax(flush)
    K = torch.cat([Kc, kn], dim=2); V = torch.cat([Vc, kn], dim=2)
    for be in (SDPBackend.CUDNN_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.FLASH_ATTENTION, SDPBackend.MATH):
        try:
            with sdpa_kernel([be]):
                o = torch.nn.functional.scaled_dot_product_attention(q, K, V, enable_gqa=True)
            break
        except Exception as e:
            continue
    torch.cuda.synchronize()
out["ctx_cat_sdpa_drained"] = round(gemm_us(ctx), 2)
print("context cat+sdpa (drained):", out["ctx_cat_sdpa_drained"])
def ctx2(i):
    torch.amax(flush)
    K = torch.cat([Kc, kn], dim=2); V = torch.cat([Vc, kn], dim=2)
    torch.cuda.synchronize()
out["ctx_cat_only"] = round(gemm_us(ctx2), 2)
print("context cat only:", out["ctx_cat_only"])
def ctx3(i):  # rms-norm-ish context: small elementwise
    torch.amax(flush)
    y = x * 2.0
    torch.cuda.synchronize()
out["ctx_small"] = round(gemm_us(ctx3), 2)
print("context small:", out["ctx_small"])
json.dump(out, open(os.environ.get("OUT", ".") + "/exp_dirty.json", "w"))
