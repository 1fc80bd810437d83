#!/bin/bash
# The Python runner's sequential compare (runtime/magpie_runner.py: ranks,
# looks, Seq and sample_loop) without a GPU or torch: the median ranks
# against exact binomial sums, the schedule as the C harness has it
# (src/kernel/seqtest.c, tests/unit/test_kernel_seq.c), and the sampling
# loop on a fake timer whose samples come from fixed distributions (a
# seeded PRNG: the same samples on every run, no wall-clock figures are
# asserted): large true effects are decided at the first look, a twin is
# SAME, the baseline stops with the candidates, and a job without
# "sequential" keeps the fixed rule.
set -eu
SRC=${MP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
python3 - "$SRC/runtime" <<'PY'
import math
import random
import sys
from fractions import Fraction

sys.path.insert(0, sys.argv[1])
import magpie_runner as mr  # noqa: E402  (torch is imported by main() only)

fails = []

# 1. ranks: the largest l with P(Bin(n, 1/2) <= l - 1) <= a/2, exactly
for a in (0.05, 0.01, 0.001):
    for n in range(1, 201):
        cdf, want = Fraction(0), 0
        for k in range((n + 1) // 2):
            cdf += Fraction(math.comb(n, k), 2 ** n)
            if cdf > Fraction(a) / 2:
                break
            want = k + 1
        if mr.median_ci_rank(n, a) != want:
            fails.append("rank n=%d a=%g: %d, want %d" % (n, a, mr.median_ci_rank(n, a), want))

# 2. the schedule (the C harness's: 16 .. 8192, 10000, and the time limit's)
looks = [n for n in range(1, 10001) if mr.seq_is_look(n, 10, 10000)]
if mr.seq_nlooks(10, 10000) != 12 or looks != [16 << j for j in range(10)] + [10000]:
    fails.append("schedule: %d looks %s" % (mr.seq_nlooks(10, 10000), looks))


class Dev:
    type = "cpu"


class FakeTimer(mr.Timer):
    """No GPU: each call of a kernel's fn returns its next sample (ms)."""

    def __init__(self):
        mr.Timer.__init__(self, None, Dev())

    def time_batch(self, fn, batch, busy_us=0.0):
        return fn()


def sampler(t, med, noise, rng):
    return mr.Sampler(t, lambda: med * math.exp(rng.gauss(0, noise)),
                      {"min_samples": 10, "max_samples": 10000, "min_time_s": 0.5,
                       "max_noise": 0.005, "max_time_s": 600})


def loop(job, kernels, seed):
    rng = random.Random(seed)
    t = FakeTimer()
    live = [(i, sampler(t, med, nz, rng), {}, None, None) for i, (med, nz) in enumerate(kernels)]
    entries = [{"id": "k%d" % i} for i in range(len(kernels))]
    seq = mr.sample_loop(job, {"min_samples": 10, "max_samples": 10000}, live, entries)
    return seq, [s for _, s, _, _, _ in live]


job = {"interleave": True, "sequential": {"baseline": "k0", "alpha": 0.05, "threshold": 0.01}}
# 3. baseline 1 ms; 0.5 ms (FASTER), 2 ms (SLOWER), a twin (SAME), all at 0.2 % noise
seq, sm = loop(job, [(1.0, 0.002), (0.5, 0.002), (2.0, 0.002), (1.0, 0.002)], 1)
want = [None, "FASTER", "SLOWER", "SAME"]
for k in (1, 2, 3):
    info = seq.info(sm[k])
    if info["decision"] != want[k] or len(sm[k].samples) != 16 or info["look"] != 1 or \
            not sm[k].reason.startswith("decided " + want[k]):
        fails.append("kernel %d: %s, %d samples, %s" % (k, info, len(sm[k].samples),
                                                         sm[k].reason))
    if abs(info["alpha_look"] - 0.05 / (3 * 12)) > 1e-15:
        fails.append("alpha per look %s" % info["alpha_look"])
if not sm[0].reason.startswith("the candidates were decided") or len(sm[0].samples) != 16:
    fails.append("baseline: %s (%d samples)" % (sm[0].reason, len(sm[0].samples)))

# 4. a 3 % difference at 1 % noise needs more than one look, stops at a later one
seq, sm = loop(job, [(1.0, 0.01), (1.03, 0.01)], 2)
info = seq.info(sm[1])
if info["decision"] != "SLOWER" or info["look"] < 2 or \
        not mr.seq_is_look(len(sm[1].samples), 10, 10000):
    fails.append("3 %% slower: %s, %d samples" % (info, len(sm[1].samples)))

# 5. without "sequential" (--timing fixed): the noise rule, every kernel sampled
#    until all stopped, no look
seq, sm = loop({"interleave": True}, [(1.0, 0.002), (0.5, 0.002)], 3)
if seq is not None or any(s.seq for s in sm) or not sm[1].reason.startswith("noise") or \
        len(sm[0].samples) != len(sm[1].samples):
    fails.append("fixed: %s %s" % ([s.reason for s in sm], [len(s.samples) for s in sm]))

if fails:
    print("FAIL:\n  " + "\n  ".join(fails))
    sys.exit(1)
print("ok")
PY
