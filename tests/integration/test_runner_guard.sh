#!/bin/bash
# The Python runner's power guard (runtime/magpie_runner.py, Timer.judge):
# its decisions on sequences of probe clocks, without a GPU. Its effect on a
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


def timer(ref=1980.0, fixed=None):
    t = mr.Timer(None, Dev())
    t.guard, t.ref_mhz, t.cycles_per_us = True, ref, ref
    if fixed is not None:
        t.cool_ratio, t.fixed_ratio = fixed, True
    return t


def feed(t, clocks):
    kept = 0
    for c in clocks:
        t.last_mhz = c
        kept += t.judge()
    return kept


rng = random.Random(5)
fails = []

# 1. an unthrottled GPU with 0.75 % probe noise: nothing discarded, no cool-down,
#    and the reference does not creep up with the noise's tail
t = timer()
k = feed(t, [rng.gauss(1980, 15) for _ in range(20000)])
if k != 20000 or t.discarded or t.cool_ratio or t.sustained or t.ref_mhz != 1980:
    fails.append("unthrottled: kept %d discarded %d ratio %g ref %.1f" % (
        k, t.discarded, t.cool_ratio, t.ref_mhz))

# 2. capped until the cool-down reaches 1x, then at the full clock
t = timer()
kept = 0
for _ in range(2000):
    t.last_mhz = 1700 if t.cool_ratio < 1 else rng.gauss(1975, 10)
    kept += t.judge()
if t.cool_ratio != 1.0 or t.discarded != 8 or t.sustained or kept != 2000 - 8:
    fails.append("recovers at 1x: ratio %g discarded %d kept %d" % (
        t.cool_ratio, t.discarded, kept))

# 3. capped whatever the cool-down: bounded discards, then kept and flagged
t = timer()
k = feed(t, [1700] * 500)
if not t.sustained or t.cool_ratio != 4.0 or t.discarded > 48 or k != 500 - t.discarded:
    fails.append("sustained: %s" % t.guard_info())

# 4. a fixed ratio: capped samples dropped, the ratio never moves
t = timer(fixed=2.0)
k = feed(t, [1980, 1700, 1980, 1700] * 5)
if t.cool_ratio != 2.0 or t.discarded != 10 or k != 10:
    fails.append("fixed ratio: %s kept %d" % (t.guard_info(), k))

# 5. a calibration taken while capped: the reference rises to the real clock
t = timer(ref=1750)
feed(t, [rng.gauss(1980, 10) for _ in range(64)])
k = feed(t, [1750] * 8)
if not 1960 < t.ref_mhz < 2000 or t.discarded != 8:
    fails.append("low calibration: ref %.1f discarded %d" % (t.ref_mhz, t.discarded))

# 6. guard off: every sample kept
t = timer()
t.guard = False
if feed(t, [1000] * 50) != 50 or t.discarded:
    fails.append("guard off")

for f in fails:
    print("FAIL " + f)
print("runner guard: %d of 6 cases failed" % len(fails))
sys.exit(1 if fails else 0)
PY
