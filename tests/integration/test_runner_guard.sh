#!/bin/bash
# The Python runner's power guard (runtime/magpie_runner.py, Timer.judge and
# the Sampler): its decisions on sequences of probe clocks, without a GPU. Its effect on a
# real power-capped GPU is measured by bench/kernel_device_next.sh
# (bench/kernel_timing.md).
set -eu
SRC=${MP_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
python3 - "$SRC/runtime" <<'PY'
import random
import sys

sys.path.insert(0, sys.argv[1])
import magpie_runner as mr  # noqa: E402  (torch is imported by main() only)


class Dev:
    type = "cpu"


class ProbeTimer(mr.Timer):
    """The runner's Timer with the GPU replaced by a list of probe clocks
    (each sample takes 1 ms); judge and the samplers are the real ones."""

    def __init__(self, ref=1980.0, fixed=None):
        mr.Timer.__init__(self, None, Dev())
        self.guard, self.ref_mhz, self.cycles_per_us = True, ref, ref
        if fixed is not None:
            self.cool_ratio, self.fixed_ratio = fixed, True
        self.clocks = iter(())

    def time_batch(self, fn, batch, busy_us=0.0):
        self.last_mhz = next(self.clocks)
        return 1.0


def run(t, clocks, nsamplers=1):
    """Feeds the clocks through round-robin samplers; returns them."""
    t.clocks = iter(clocks)
    sm = [mr.Sampler(t, None, {}) for _ in range(nsamplers)]
    for i in range(len(clocks)):
        sm[i % nsamplers].take()
    return sm


def kept(sm):
    return sum(len(s.samples) for s in sm)


rng = random.Random(5)
fails = []

# 1. an unthrottled GPU with 0.75 % probe noise: nothing discarded, no cool-down,
#    and the reference does not creep up with the noise's tail
t = ProbeTimer()
sm = run(t, [rng.gauss(1980, 15) for _ in range(20000)])
if kept(sm) != 20000 or t.discarded or t.cool_ratio or t.sustained or t.ref_mhz != 1980:
    fails.append("unthrottled: kept %d discarded %d ratio %g ref %.1f" % (
        kept(sm), t.discarded, t.cool_ratio, t.ref_mhz))

# 2. capped until the cool-down reaches 1x, then at the full clock; two
#    samplers taking turns (compare mode): the first capped sample, kept until
#    the second low probe confirmed the cap, is taken back from its owner
t = ProbeTimer()
sm = [mr.Sampler(t, None, {}) for _ in range(2)]
for i in range(2000):
    t.clocks = iter([1700 if t.cool_ratio < 1 else rng.gauss(1975, 10)])
    sm[i % 2].take()
if t.cool_ratio != 1.0 or t.discarded != 8 or t.sustained or kept(sm) != 2000 - 8 or \
        len(sm[0].clocks) != len(sm[0].samples) or \
        abs(sm[0].sum_ms - len(sm[0].samples)) > 1e-9:
    fails.append("recovers at 1x: ratio %g discarded %d kept %d" % (
        t.cool_ratio, t.discarded, kept(sm)))

# 3. capped whatever the cool-down: bounded losses, then kept and flagged
t = ProbeTimer()
sm = run(t, [1700] * 500)
if not t.sustained or t.cool_ratio != 4.0 or t.discarded > 48 or \
        kept(sm) != 500 - t.discarded:
    fails.append("sustained: %s" % t.guard_info())

# 4. a fixed ratio: confirmed caps dropped, the ratio never moves
t = ProbeTimer(fixed=2.0)
sm = run(t, [1700, 1700, 1980, 1980] * 5)
if t.cool_ratio != 2.0 or t.discarded != 10 or kept(sm) != 10:
    fails.append("fixed ratio: %s kept %d" % (t.guard_info(), kept(sm)))

# 5. a calibration taken under a cap: the reference rises to the real clock
t = ProbeTimer(ref=1750)
sm = run(t, [rng.gauss(1980, 10) for _ in range(64)] + [1750] * 8)
if not 1960 < t.ref_mhz < 2000 or t.discarded != 8 or kept(sm) != 64:
    fails.append("low calibration: ref %.1f discarded %d" % (t.ref_mhz, t.discarded))

# 6. lone low probes (the host late to queue the probe, seen on the H200 at
#    ~1 in 4000 samples): kept, no cool-down
t = ProbeTimer()
sm = run(t, [1500 if i % 97 == 50 else 1980 for i in range(5000)], 3)
if kept(sm) != 5000 or t.discarded or t.cool_ratio:
    fails.append("lone low probes: %s kept %d" % (t.guard_info(), kept(sm)))

# 7. guard off: every sample kept
t = ProbeTimer()
t.guard = False
sm = run(t, [1000] * 50)
if kept(sm) != 50 or t.discarded:
    fails.append("guard off")

for f in fails:
    print("FAIL " + f)
print("runner guard: %d of 7 cases failed" % len(fails))
sys.exit(1 if fails else 0)
PY
