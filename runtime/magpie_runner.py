#!/usr/bin/env python3
"""magpie's runner for PyTorch and Triton kernels (KernelBench conventions).

    python3 magpie_runner.py JOB.json

magpie writes JOB.json (the same job format as its C harness) and reads the
result JSON this script writes to job["output"]. For compatibility the
timing of each kernel is also printed as a ``MAGPIE_LATENCY_JSON:`` line.

A kernel file defines ``ModelNew`` (a candidate) or ``Model``; a reference
file defines ``Model``, ``get_inputs()`` and ``get_init_inputs()``
(KernelBench). Correctness: for several seeds, build both models from the
same init inputs with the same seed, run them on fresh seeded inputs
(cloned per model), and compare (magpie_check.py: tolerances from the
outputs' dtypes, and a float64 run of the reference that low-precision
outputs are judged against, within a multiple of the reference's own
error; docs/correctness.md); NaN/Inf where
the reference is finite is a failure; the inputs must not be modified; the
caching allocator is poisoned with NaN before each candidate call so a
kernel that leaves its output unwritten is caught. Without a reference the
kernel is only checked for finite outputs and reported as unverified.

Timing: CUDA events around batches of calls, warm-up by time, an L2 flush
(a buffer twice the L2 size rewritten) before each sample, a GPU spin
queued ahead of the flush so the kernel is queued before the start event
fires, a power guard that drops samples started under a power cap and
grows a cool-down until there are none (see Timer), a CUDA graph of the
batch for kernels under 20 us,
NVBench's stopping rule (min samples, min device time, relative noise
target, timeout); in compare mode candidates are sampled round-robin. On a
machine without a GPU the same loop runs with time.perf_counter_ns.

Mode "profile" (job["mode"]; magpie runs it under ncu after the verdict):
no checks and no timing; each candidate's calls inside the NVTX range
ncu is filtered to (profile_one; docs/kernel-timing.md, "Profiler metrics").

The result is strict JSON: a non-finite number is written as null, with
its value under "nonfinite" beside it (magpie_check.dump_strict).
"""
import time

T_START = time.time()  # the process's start as this script sees it (breakdown)

import hashlib  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import json
import math
import os
import sys  # noqa: E402
import traceback  # noqa: E402

import magpie_check as mc  # beside this file (the script's directory is on sys.path)

# max_time_s stops sampling only once min_samples are in; sampling may run
# this many times max_time_s to get them (K_MIN_SAMPLES_GRACE in the C harness)
MIN_SAMPLES_GRACE = 4

# compare's sequential decision: the same as src/kernel/seqtest.c (see there
# and bench/kernel_timing.md, "Sequential decision")
SEQ_FIRST_LOOK = 16


def seq_first(min_s):
    return max(min_s, SEQ_FIRST_LOOK)


def seq_nlooks(min_s, max_s):
    n, at = 0, seq_first(min_s)
    while at < max_s:
        n += 1
        at *= 2
    return n + 2  # max_samples itself, and a look at the time limit


def seq_is_look(n, min_s, max_s):
    if n == max_s:
        return True
    at = seq_first(min_s)
    while at < max_s and at <= n:
        if at == n:
            return True
        at *= 2
    return False


def median_ci_rank(n, a):
    """The largest rank l (1-based) with P(Binomial(n, 1/2) <= l - 1) <= a/2:
    [x_(l), x_(n+1-l)] covers the median with probability >= 1 - a."""
    if n < 1 or not a > 0:
        return 0
    lgn, cdf, l = math.lgamma(n + 1.0), 0.0, 0
    for k in range((n + 1) // 2):
        cdf += math.exp(lgn - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0) - n * math.log(2.0))
        if cdf > a / 2:
            break
        l = k + 1
    return l


def seq_look(base, cand, alpha_look, thr):
    """(decision, ratio_lo, ratio_hi) of the time ratio cand/base."""
    lb, lc = median_ci_rank(len(base), alpha_look / 2), median_ci_rank(len(cand), alpha_look / 2)
    if lb < 1 or lc < 1:
        return "UNDECIDED", None, None
    b, c = sorted(base), sorted(cand)
    bl, bh, cl, ch = b[lb - 1], b[len(b) - lb], c[lc - 1], c[len(c) - lc]
    if not (bl > 0 and bh > 0):
        return "UNDECIDED", None, None
    lo, hi = cl / bh, ch / bl
    if hi < 1 - thr:
        return "FASTER", lo, hi
    if lo > 1 + thr:
        return "SLOWER", lo, hi
    if lo >= 1 - thr and hi <= 1 + thr:
        return "SAME", lo, hi
    return "UNDECIDED", lo, hi


class Seq:
    """compare's sequential decision over the timed kernels of the job."""

    def __init__(self, job, tcfg, ids):
        sj = job.get("sequential") or {}
        self.base = None
        if sj.get("baseline") in ids and len(ids) >= 2:
            self.base = ids.index(sj["baseline"])
        self.alpha = sj.get("alpha", 0.05)
        self.thr = sj.get("threshold", 0.01)
        self.min_s = tcfg.get("min_samples", 10)
        self.max_s = tcfg.get("max_samples", 10000)
        self.nlooks = seq_nlooks(self.min_s, self.max_s)
        self.alpha_look = self.alpha / (max(1, len(ids) - 1) * self.nlooks)

    @property
    def on(self):
        return self.base is not None

    def check(self, base, smp, elapsed):
        """After a sample of candidate smp: the stop rule's reason is kept and
        acted on only at a look, except the time limit, which takes one last
        look of its own; at a look the interval of the ratio decides."""
        if smp.check(elapsed) and not smp.rule:
            smp.rule = smp.reason
        smp.reason = ""
        n = len(smp.samples)
        timeout = bool(smp.rule) and elapsed >= smp.cfg.get("max_time_s", 15)
        last_n = smp.seq["n"] if smp.seq else 0
        if seq_is_look(n, self.min_s, self.max_s) or (timeout and n > last_n):
            d, lo, hi = seq_look(base.samples, smp.samples, self.alpha_look, self.thr)
            smp.looks += 1
            smp.seq = {"decision": d, "look": smp.looks, "looks_max": self.nlooks, "n": n,
                       "n_baseline": len(base.samples), "alpha": self.alpha,
                       "alpha_look": self.alpha_look, "threshold": self.thr}
            if lo is not None:
                smp.seq.update(ratio_lo=lo, ratio_hi=hi)
            if d != "UNDECIDED":
                smp.reason = "decided %s at look %d (%d samples, baseline %d)" % (
                    d, smp.looks, n, len(base.samples))
                return
            if smp.rule:
                smp.reason = smp.rule
                return
        if timeout:
            smp.reason = smp.rule

    def info(self, smp):
        return smp.seq or {"decision": "UNDECIDED", "look": 0, "looks_max": self.nlooks,
                           "n": len(smp.samples), "n_baseline": 0, "alpha": self.alpha,
                           "alpha_look": self.alpha_look, "threshold": self.thr}


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(mod)
    return mod


def load_kernelbench(e, name):
    """The KernelBench entry: the file is a module defining ModelNew (or
    Model) and, unless its reference brings them, get_inputs and
    get_init_inputs; a Python DSL's kernels are called from its ModelNew."""
    return load_module(e["source"], name)


# A kernel language's entry in the runner, by the word its row in magpie's
# kernel language table gives (runner_entry, passed as the job entry's
# "entry"; src/config/klang.c): a name here, or "module:function" for a
# module on sys.path (this directory is on it) whose function(entry, name)
# returns a module-like object with the KernelBench names. A Python
# language run as KernelBench is one row in the table and nothing here.
LANG_ENTRIES = {"kernelbench": load_kernelbench}


def lang_load(e, name):
    word = e.get("entry") or "kernelbench"
    fn = LANG_ENTRIES.get(word)
    if fn is None and ":" in word:
        mod, func = word.split(":", 1)
        fn = getattr(importlib.import_module(mod), func)
    if fn is None:
        raise ValueError("unknown runner entry %r for kernel type %s (its row's runner_entry in "
                         "the kernel language table); known: %s, or module:function"
                         % (word, e.get("type"), ", ".join(sorted(LANG_ENTRIES))))
    return fn(e, name)


def seed_all(torch, seed):
    import random
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy
        numpy.random.seed(seed % (2**32))
    except ImportError:
        pass


def to_list(x):
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def move(torch, xs, dev):
    return [x.to(dev) if isinstance(x, torch.Tensor) else x for x in xs]


def clone(torch, xs):
    return [x.clone() if isinstance(x, torch.Tensor) else x for x in xs]


# where get_inputs() makes its tensors: "device" (the default) runs it with
# the job's GPU as torch's default device, so a KernelBench-style
# torch.randn(n) is drawn there instead of on the CPU and copied over (on an
# H200, 0.3 s a seed for two 16.8 M-float inputs, against milliseconds); a
# get_inputs that cannot run that way (numpy, a CPU generator, .numpy() on a
# tensor) raises and is run again on the CPU from the same seed. The values
# differ from a CPU draw but are the same for every kernel of a job and for
# every run on the same device. MAGPIE_INPUTS_ON=cpu keeps the CPU draw.
INPUTS_ON = "cpu" if os.environ.get("MAGPIE_INPUTS_ON", "device") == "cpu" else "device"


def make_inputs(torch, gi, dev, seed):
    """get_inputs()'s tensors on dev, drawn after seeding with seed."""
    seed_all(torch, seed)
    if INPUTS_ON == "device" and dev.type != "cpu" and hasattr(torch.device(dev), "__enter__"):
        try:
            with torch.device(dev):
                return move(torch, to_list(gi()), dev)
        except Exception:
            seed_all(torch, seed)
    return move(torch, to_list(gi()), dev)


class Timer:
    """CUDA-event timing of one sample:
    [hold] [probe spin, between two events] [L2 flush] start fn*batch end.

    The hold is a GPU spin (torch.cuda._sleep) queued first, sized from the
    host's own enqueue time of the previous samples, so the kernel is
    already queued when the start event fires: without it the host's
    launch latency (tens of us from Python, different from process to
    process) lands inside the timed interval whenever the flush ends before
    the launch is queued. MAGPIE_NO_LAUNCH_HOLD=1 turns it off.

    Power guard: events around the probe spin give the SM clock just before
    each sample (the spin counts clock cycles; it starts when the hold ends,
    so no host latency is in it). A sample that starts with the
    clock below 96 % of the unthrottled clock (calibrated at setup) was run
    under a power or thermal cap: it is discarded, and the spin grows into
    a cool-down of `cool_ratio` times the kernel's own time (0.5, 1, 2, 4)
    so the GPU's average power stays under the cap and each sample runs at
    the full clock, as NVBench discards throttled samples. If samples stay
    throttled at the largest ratio the cap is sustained: they are kept and
    the result says so. Job keys: power_guard (false: off), cool_ratio (a
    fixed ratio, no adaptation)."""

    THROTTLE = 0.96    # a probe below this share of the reference clock is capped
    RATIOS = (0.5, 1.0, 2.0, 4.0)
    MIN_PROBE_US = 50.0  # shortest probe spin: the events resolve ~0.5 us, 1 % of it

    def __init__(self, torch, dev):
        self.torch, self.dev = torch, dev
        self.cuda = dev.type == "cuda"
        self.flush = None
        self.flush_bytes = 0
        self.fills = 0
        self.cycles_per_us = 0.0  # spin calibration; 0 = no hold
        self.hold_cycles = 0
        self.enqueue_us = []  # host enqueue time of the last samples
        # power guard
        self.guard = False
        self.ref_mhz = 0.0       # unthrottled SM clock
        self.spin_overhead_us = 0.0  # launch cost inside a timed spin
        self.cool_ratio = 0.0
        self.fixed_ratio = False
        self.last_mhz = 0.0      # clock measured by the last sample's spin
        self.discarded = 0
        self.since_step = 0      # probes since the ratio last grew
        self.recover = False     # next spin: a 20 ms recovery first
        self.sustained = False   # capped even at the largest ratio: keep samples
        self.at_max = []         # throttled flags of probes at the largest ratio
        self.recent = []         # unthrottled probes since the reference was last updated
        self.streak = 0          # low probes in a row
        self.pending = None      # the sampler that kept the last sample
        self.drop_prev = False   # judge: remove pending's last sample too

    def setup_flush(self, enabled):
        if not (enabled and self.cuda):
            return
        props = self.torch.cuda.get_device_properties(self.dev)
        l2 = getattr(props, "L2_cache_size", 0) or (64 << 20)
        self.flush_bytes = 2 * l2
        self.flush = self.torch.empty(self.flush_bytes, dtype=self.torch.int8, device=self.dev)

    def spin_us(self, cycles):
        torch = self.torch
        e0 = torch.cuda.Event(enable_timing=True)
        e1 = torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(200000)  # ~100 us: the host has queued what follows when it ends
        e0.record()
        torch.cuda._sleep(cycles)
        e1.record()
        e1.synchronize()
        return e0.elapsed_time(e1) * 1000

    def setup_hold(self, fixed_cycles=0, guard=True, cool_ratio=None):
        torch = self.torch
        if not self.cuda or fixed_cycles < 0 or os.environ.get("MAGPIE_NO_LAUNCH_HOLD") or \
                not hasattr(torch.cuda, "_sleep"):
            return
        if fixed_cycles > 0:
            self.hold_cycles = int(fixed_cycles)
            return
        # clock and per-spin overhead from two spin lengths: t = cycles / f + o,
        # after a ~20 ms spin that lets a power controller still capping the
        # clock for the correctness runs let go
        torch.cuda._sleep(40000000)
        t_long = min(self.spin_us(2000000) for _ in range(3))
        t_short = min(self.spin_us(200000) for _ in range(3))
        if t_long <= t_short or t_short <= 0:
            return
        self.cycles_per_us = 1800000 / (t_long - t_short)
        self.spin_overhead_us = max(0.0, t_short - 200000 / self.cycles_per_us)
        self.ref_mhz = self.cycles_per_us
        self.hold_cycles = int(100 * self.cycles_per_us)  # 100 us until measured
        # not on ROCm: its clocks move without a cap (unverified there)
        self.guard = bool(guard) and not os.environ.get("MAGPIE_NO_POWER_GUARD") and \
            getattr(torch.version, "hip", None) is None
        if cool_ratio is not None and cool_ratio >= 0:
            self.cool_ratio = float(cool_ratio)
            self.fixed_ratio = True

    def judge(self):
        """After a sample: False when its probe says the clock was capped and
        the sample is to be discarded; grows the cool-down on the way. One
        low probe alone is taken for a host delay (the GPU idled before the
        probe started) and its sample kept; a second low probe in a row
        confirms the cap, and then the first one's sample is dropped too
        (drop_prev: the caller removes it from `pending`, its owner)."""
        self.drop_prev = False
        if not self.guard or self.last_mhz <= 0:
            return True
        capped = self.last_mhz < self.THROTTLE * self.ref_mhz
        self.streak = self.streak + 1 if capped else 0
        if not capped:  # a calibration taken under a cap: follow the clock seen
            self.recent.append(self.last_mhz)
            if len(self.recent) >= 16:
                med = sorted(self.recent)[8]  # a median: the probes' noise cannot lift it
                if med > 1.02 * self.ref_mhz:
                    self.ref_mhz = med
                self.recent = []
        if self.sustained:
            return True
        top = self.fixed_ratio or self.cool_ratio >= self.RATIOS[-1]
        if top:
            self.at_max.append(capped)
            del self.at_max[:-64]
            if len(self.at_max) >= 32 and sum(self.at_max) > len(self.at_max) / 2:
                self.sustained = True  # capped even with the cool-down: keep what is measured
                return True
        if self.streak < 2:
            return True
        confirmed = 1
        if self.streak == 2 and self.pending is not None:
            self.drop_prev = True
            confirmed = 2
        self.discarded += confirmed
        self.since_step += confirmed
        if not top and self.since_step >= 4:
            self.cool_ratio = next(r for r in self.RATIOS if r > self.cool_ratio)
            self.since_step = 0
            self.recover = True
        return False

    def guard_info(self):
        return {"enabled": self.guard, "reference_clock_mhz": round(self.ref_mhz, 1),
                "cool_ratio": self.cool_ratio, "fixed_ratio": self.fixed_ratio,
                "discarded_throttled": self.discarded, "sustained_cap": self.sustained}

    def hold_us(self):
        return self.hold_cycles / self.cycles_per_us if self.cycles_per_us else 0.0

    def time_batch(self, fn, batch, busy_us=0.0):
        """One sample; busy_us is the sample's expected GPU time, which the
        power guard's cool-down is a multiple of. Queued: [launch hold]
        [probe spin between two events] [L2 flush] start fn*batch end; the
        launch hold covers the host's enqueue of everything after it, so
        the probe's events time the GPU's spin and not the host."""
        torch = self.torch
        h0 = time.perf_counter()
        hold = self.hold_cycles
        probe = 0
        if self.guard:
            probe = int(self.cycles_per_us * min(max(self.MIN_PROBE_US, self.cool_ratio * busy_us),
                                                 50000.0))  # 50 ms at most
            if self.recover:  # after the ratio grew: let the power controller catch up
                hold += int(self.cycles_per_us * 20000)
                self.recover = False
        if hold and self.cuda:
            torch.cuda._sleep(hold)
        if probe:
            p0 = torch.cuda.Event(enable_timing=True)
            p1 = torch.cuda.Event(enable_timing=True)
            p0.record()
            torch.cuda._sleep(probe)
            p1.record()
        if self.flush is not None:
            self.fills += 1
            self.flush.fill_(self.fills % 127)
        if self.cuda:
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
            for _ in range(batch):
                fn()
            e1.record()
            if self.cycles_per_us:  # next hold: 1.5x the slowest of the last 16 enqueues
                self.enqueue_us.append((time.perf_counter() - h0) * 1e6)
                del self.enqueue_us[:-16]
                # capped at 10 ms: a one-off host stall (lazy init, GC) must not make
                # the next 16 samples spin for seconds
                hold_us = min(1.5 * max(self.enqueue_us) + 20, 10000.0)
                self.hold_cycles = int(self.cycles_per_us * hold_us)
            e1.synchronize()
            if probe:
                us = p0.elapsed_time(p1) * 1000 - self.spin_overhead_us
                self.last_mhz = probe / us if us > 0 else 0.0
            return e0.elapsed_time(e1)
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            fn()
        return (time.perf_counter_ns() - t0) / 1e6


class Sampler:
    def __init__(self, timer, fn, cfg):
        self.timer, self.fn, self.cfg = timer, fn, cfg
        self.samples, self.sum_ms, self.mean, self.m2 = [], 0.0, 0.0, 0.0
        self.reason = ""
        self.batch = 1
        self.graph = None  # CUDA graph of `batch` calls (short kernels)
        self.graph_note = ""
        self.nhist = []  # last noise estimates, for NVBench's plateau test
        self.clocks = []  # SM clock before each kept sample (power guard)
        self.rule = ""  # sequential compare: the stop rule's reason, deferred to a look
        self.looks = 0
        self.seq = None  # the last look
        self.warmup_s = 0.0

    def warmup(self):
        t0, best, it = time.monotonic(), math.inf, 0
        while True:
            ms = self.timer.time_batch(self.fn, 1)
            if 0 < ms < best:
                best = ms
            it += 1
            if it >= 1000 or time.monotonic() - t0 >= self.cfg.get("warmup_s", 0.1):
                break
        if best < 0.020:
            self.batch = min(1000, int(math.ceil(0.020 / best)))
            if self.timer.cuda and not os.environ.get("MAGPIE_NO_CUDA_GRAPH"):
                self.capture()

    def capture(self):
        """Short kernels: one sample replays a CUDA graph of `batch` calls, so
        the host's per-call launch cost is not what gets timed."""
        torch = self.timer.torch
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for _ in range(3):
                    self.fn()
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(self.batch):
                    self.fn()
            g.replay()
            torch.cuda.synchronize()
            self.graph = g
        except Exception as e:  # capture-unsafe code (syncs, host reads): time plain launches
            self.graph_note = "no CUDA graph (%s: %s)" % (type(e).__name__, str(e)[:200])
            try:
                torch.cuda.synchronize()
            except Exception:
                pass

    def noise(self):
        n = len(self.samples)
        if n < 5 or self.mean <= 0:
            return math.inf
        return math.sqrt(self.m2 / (n - 1)) / self.mean

    def take(self):
        busy_us = self.mean * self.batch * 1000
        if self.graph is not None:
            ms = self.timer.time_batch(self.graph.replay, 1, busy_us)
        else:
            ms = self.timer.time_batch(self.fn, self.batch, busy_us)
        timer = self.timer
        keep = timer.judge()
        if timer.drop_prev:
            timer.pending.drop_last()
            timer.pending = None
        if not keep:
            return
        if timer.guard:
            self.clocks.append(round(timer.last_mhz, 1))
            timer.pending = self
        v = ms / self.batch
        self.samples.append(v)
        self.sum_ms += ms
        d = v - self.mean
        self.mean += d / len(self.samples)
        self.m2 += d * (v - self.mean)

    def drop_last(self):
        """Removes the last sample (its probe turned out to be the start of a cap)."""
        if not self.samples:
            return
        v = self.samples.pop()
        if self.clocks:
            self.clocks.pop()
        self.sum_ms -= v * self.batch
        n = len(self.samples)
        self.mean = sum(self.samples) / n if n else 0.0
        self.m2 = sum((x - self.mean) ** 2 for x in self.samples)

    def plateau(self, nz):
        if not math.isfinite(nz):
            return False
        self.nhist.append(nz)
        if len(self.nhist) > 512:
            del self.nhist[0]
        m = len(self.nhist)
        if m <= 64 or len(self.samples) % 16:
            return False
        mean = sum(self.nhist) / m
        sd = math.sqrt(sum((x - mean) ** 2 for x in self.nhist) / (m - 1))
        return mean > 0 and sd / mean < 0.05

    def check(self, elapsed):
        c, n, nz = self.cfg, len(self.samples), self.noise()
        enough = n >= c.get("min_samples", 10) and self.sum_ms >= c.get("min_time_s", 0.5) * 1000
        if enough and nz <= c.get("max_noise", 0.005):
            self.reason = "noise %.3f%% <= %.3f%% after %d samples" % (
                nz * 100, c.get("max_noise", 0.005) * 100, n)
        elif self.plateau(nz) and enough:
            self.reason = "noise plateaued at %.3f%% after %d samples" % (nz * 100, n)
        elif n >= c.get("max_samples", 10000):
            self.reason = "max_samples %d reached (noise %.3f%%)" % (n, nz * 100)
        elif elapsed >= c.get("max_time_s", 15) and n >= c.get("min_samples", 10):
            self.reason = "timeout %.1f s reached (noise %.3f%%, %d samples)" % (
                c.get("max_time_s", 15), nz * 100, n)
        elif elapsed >= c.get("max_time_s", 15) * MIN_SAMPLES_GRACE and n >= 2:
            self.reason = ("min_samples %d not reached: %d samples in %.1f s (max_time_s %.1f, "
                           "extended %dx for min_samples)") % (
                c.get("min_samples", 10), n, elapsed, c.get("max_time_s", 15), MIN_SAMPLES_GRACE)
        return bool(self.reason)


def high_precision(torch, rule, ref_model, ref_out, inputs, seed, figures):
    """The reference's outputs computed in float64 (float32 if float64
    fails), or None: turned off (hp_reference: false), no floating output,
    or nothing more precise than the outputs to run in. Notes into figures."""
    if not rule["hp"]:
        figures["hp_reference"] = "off"
        return None
    fl = [t for t in mc.to_list(ref_out) if isinstance(t, torch.Tensor) and t.is_floating_point()]
    if not fl or all(t.dtype == torch.float64 for t in fl):
        figures.setdefault("hp_reference", "not needed (no output below float64)")
        return None
    # a float32/float64 problem (nothing below float32 in the outputs, inputs,
    # parameters, buffers or the declared dtype) keeps the table alone, at no cost
    ts = fl + [t for t in inputs if isinstance(t, torch.Tensor)]
    if hasattr(ref_model, "parameters"):
        ts += list(ref_model.parameters()) + list(ref_model.buffers())
    low = [t for t in ts if t.is_floating_point() and t.dtype not in (torch.float32, torch.float64)]
    declared = mc.dtype_name(rule["declared"]) if rule["declared"] else None
    if not low and mc.UNIT.get(declared, 0.0) < mc.LOW_PRECISION_UNIT:
        figures.setdefault("hp_reference", "not needed (a float32/float64 problem)")
        return None
    hi, dt, note = mc.run_high_precision(torch, ref_model, clone(torch, inputs),
                                         lambda: seed_all(torch, seed))
    if hi is None:
        figures["hp_reference"] = "unavailable: " + note
    else:
        figures["hp_reference"] = dt + ("" if not note else " (%s)" % note)
    return hi


def check(torch, rule, out, ref_out, ref_hi, figures):
    """magpie_check.compare with the job's rule; the largest figures over
    seeds and outputs go into figures."""
    cr = mc.compare(torch, out, ref_out, ref_hi, rule["declared"], rule["atol"], rule["rtol"],
                    rule["factor"], rule["rms_factor"])
    for o in cr["outputs"]:
        figures.setdefault("tolerance", {k: o[k] for k in ("dtype", "atol", "rtol", "rule",
                                                           "explicit_tolerance") if k in o})
        for k in ("hp_ratio", "rms_ratio", "ref_ratio"):
            if k in o:
                figures[k] = max(figures.get(k, 0.0), o[k])
        if "hp_ratio" in o:
            figures.setdefault("hp_factor", o["hp_factor"])
            figures.setdefault("rms_factor", o["rms_factor"])
    return cr


def sync(torch, dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


# The reference's inputs and outputs per seed, computed once per process for
# all the candidates of a compare that share a reference: key (reference
# file, input functions, seed, tolerance rule), value (inputs, ref_out,
# ref_hi, hp note). Same seed, same inputs, same outputs (the reference runs
# under the same seeding); each candidate gets its own clone of the inputs.
REF_CACHE = {}


def fn_origin(f):
    """Where an input function is defined: a candidate may bring its own
    get_inputs, and then its inputs are its own, not the reference's."""
    if f is None:
        return None
    code = getattr(f, "__code__", None)
    # the file and line, not the module: every candidate loads the reference
    # file as a module of its own
    return (getattr(f, "__qualname__", None), code.co_filename if code else id(f),
            code.co_firstlineno if code else None)


# the loop mode (serve): files' digests per job, and the REF_CACHE keys a
# job used (the others are dropped after it)
FILE_DIGEST = {}
REF_USED = set()


def file_digest(path):
    """SHA-256 of a file's bytes, once per job (the memory cache of a warm
    process must not serve the outputs of a reference edited since)."""
    if path not in FILE_DIGEST:
        try:
            with open(path, "rb") as f:
                FILE_DIGEST[path] = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            FILE_DIGEST[path] = None
    return FILE_DIGEST[path]


def ref_key(ref_src, gi, gii, seed, rule):
    files = sorted({ref_src} | {o[1] for o in (fn_origin(gi), fn_origin(gii))
                                if o and isinstance(o[1], str)})
    key = (ref_src, fn_origin(gi), fn_origin(gii), seed, rule["hp"], str(rule["declared"]),
           tuple(file_digest(f) for f in files))
    REF_USED.add(key)
    return key


class DiskCache:
    """The reference's inputs and outputs per seed on disk, across runs (an
    analyze, then a compare of the same problem): job key ref_cache_dir
    (magpie passes OUTPUT_ROOT/.magpie_ref_cache). The file name is a hash of
    the reference file's and the input functions' files' bytes, the
    functions' names, the seed, the tolerance rule, torch's version and the
    device type. An entry over MAGPIE_REF_CACHE_ENTRY_MB (default 2048) is
    not stored; past MAGPIE_REF_CACHE_MB in all (default 8192) the oldest
    entries go. Any failure just means no cache."""

    WRITE_BPS = 2e9  # a guess at the disk's write speed: entries cheaper to make are not kept

    def __init__(self, torch, dev, d):
        self.torch, self.dev, self.dir = torch, dev, d
        self.entry_max = float(os.environ.get("MAGPIE_REF_CACHE_ENTRY_MB", 2048)) * (1 << 20)
        self.total_max = float(os.environ.get("MAGPIE_REF_CACHE_MB", 8192)) * (1 << 20)
        if self.total_max <= 0:
            self.dir = None

    def path(self, key):
        h = hashlib.sha256()
        for f in sorted({key[0]} | {o[1] for o in key[1:3] if o and isinstance(o[1], str)}):
            with open(f, "rb") as fh:
                h.update(fh.read())
        h.update(repr((key, self.torch.__version__, self.dev.type, INPUTS_ON)).encode())
        return os.path.join(self.dir, h.hexdigest() + ".pt")

    def get(self, key):
        if not self.dir or key is None:
            return None
        try:
            p = self.path(key)
            if not os.path.exists(p):
                return None
            try:
                v = self.torch.load(p, map_location=self.dev, weights_only=True)
            except TypeError:  # a torch without weights_only
                v = self.torch.load(p, map_location=self.dev)
            os.utime(p)
            return (v["inputs"], v["ref_out"], v["ref_hi"], v["hf"])
        except Exception:
            return None

    def nbytes(self, x):
        if isinstance(x, self.torch.Tensor):
            return x.numel() * x.element_size()
        if isinstance(x, (list, tuple)):
            return sum(self.nbytes(y) for y in x)
        return 0

    def put(self, key, v, made_s):
        """Stores v unless it is too large, or it took less time to make
        (made_s: inputs and reference) than it would take to write."""
        n = self.nbytes(v[:3])
        if not self.dir or key is None or n > self.entry_max or made_s < n / self.WRITE_BPS:
            return
        try:
            os.makedirs(self.dir, exist_ok=True)
            p = self.path(key)
            tmp = "%s.%d.tmp" % (p, os.getpid())
            self.torch.save({"inputs": v[0], "ref_out": v[1], "ref_hi": v[2], "hf": v[3]}, tmp)
            os.replace(tmp, p)
            ents = [os.path.join(self.dir, f) for f in os.listdir(self.dir) if f.endswith(".pt")]
            ents.sort(key=os.path.getmtime)
            total = sum(os.path.getsize(f) for f in ents)
            for f in ents[:-1]:
                if total <= self.total_max:
                    break
                total -= os.path.getsize(f)
                os.unlink(f)
        except Exception:
            pass


DISK = None  # the DiskCache of this job (main)


def ref_lookup(key):
    """(entry, where): the memory cache, else the disk cache, else None."""
    if key is None:
        return None, None
    if key in REF_CACHE:
        return REF_CACHE[key], "memory"
    v = DISK.get(key) if DISK is not None else None
    if v is not None:
        REF_CACHE[key] = v
        return v, "disk"
    return None, None


def own_copy(torch, x):
    """x with every tensor in it cloned: a reference may return a buffer of
    its module that its next call (another seed's, the timing's) rewrites,
    and a cached output must not change under the cache."""
    if isinstance(x, torch.Tensor):
        return x.detach().clone()
    if isinstance(x, (list, tuple)):
        return type(x)(own_copy(torch, y) for y in x)
    if isinstance(x, dict):
        return {k: own_copy(torch, v) for k, v in x.items()}
    return x


def ref_run(torch, dev, key, ref_model, inputs, seed, rule, figures, t_made):
    """(ref_out, ref_hi) of ref_model on inputs, cached under key; t_made:
    when making the inputs began (perf_counter)."""
    with torch.no_grad():
        ref_out = ref_model(*clone(torch, inputs))
        hf = {}
        ref_hi = high_precision(torch, rule, ref_model, ref_out, inputs, seed, hf)
    sync(torch, dev)
    figures.update(hf)
    if key is not None:
        ref_out, ref_hi = own_copy(torch, ref_out), own_copy(torch, ref_hi)
        REF_CACHE[key] = (inputs, ref_out, ref_hi, hf)
        if DISK is not None:
            DISK.put(key, REF_CACHE[key], time.perf_counter() - t_made)
    return ref_out, ref_hi


def correctness_seeds(torch, dev, e, cls, ref_mod, gi, gii, rule, c, ph, ref_src=None):
    """Candidate cls against ref_mod on the job's seeds (fresh seeded inputs
    for each, the allocator poisoned before the candidate's call). Fills c;
    returns (ok, model, ref_model). Times go into ph["seeds"]."""
    ok, msg, mx_a, mx_r, mism, checks, mutated = True, "", 0.0, 0.0, 0, 0, False
    figures = {}
    seeds = e.get("seeds", 3) if ref_mod else 1
    model = ref_model = None
    ph["seeds"] = []
    for s in range(seeds):
        seed = 42 + s
        t0 = time.perf_counter()
        key = ref_key(ref_src, gi, gii, seed, rule) if ref_mod and ref_src else None
        hit, where = ref_lookup(key)
        seed_all(torch, seed)
        init = to_list(gii()) if gii else []
        seed_all(torch, seed)
        model = cls(*init)
        if hasattr(model, "to"):
            model = model.to(dev).eval()
        if ref_mod:
            seed_all(torch, seed)
            ref_model = ref_mod.Model(*init)
            if hasattr(ref_model, "to"):
                ref_model = ref_model.to(dev).eval()
        if hit:
            inputs = hit[0]
        else:
            inputs = make_inputs(torch, gi, dev, seed)
        sync(torch, dev)
        t1 = time.perf_counter()
        with torch.no_grad():
            ref_out = ref_hi = None
            if hit:
                ref_out, ref_hi = hit[1], hit[2]
                figures.update(hit[3])
            elif ref_mod:
                ref_out, ref_hi = ref_run(torch, dev, key, ref_model, inputs, seed, rule, figures,
                                          t0)
            t2 = time.perf_counter()
            mine = clone(torch, inputs)
            if dev.type == "cuda":  # poison what the allocator hands out next
                p = torch.empty(64 << 20, dtype=torch.float32, device=dev)
                p.fill_(float("nan"))
                del p
            out = model(*mine)
            sync(torch, dev)
        t3 = time.perf_counter()
        for a, b in zip(mine, inputs):
            if isinstance(a, torch.Tensor) and not torch.equal(a, b):
                mutated = True
        if mutated:
            ok, msg = False, "the kernel modified its inputs"
        else:
            checks += 1
            if ref_mod:
                cr = check(torch, rule, out, ref_out, ref_hi, figures)
                ok, msg, mism = cr["ok"], cr["message"], cr["mismatches"]
                mx_a, mx_r = max(mx_a, cr["max_abs_err"]), max(mx_r, cr["max_rel_err"])
            else:
                for t in to_list(out):
                    if isinstance(t, torch.Tensor) and not torch.isfinite(
                            t.detach().double()).all():
                        ok, msg = False, "output contains NaN/Inf"
        ph["seeds"].append({"seed": s, "inputs_s": t1 - t0, "reference_s": t2 - t1,
                            "candidate_s": t3 - t2, "check_s": time.perf_counter() - t3,
                            "reference_cached": bool(hit), "reference_from": where or "run"})
        if mutated:
            break
        if not ok:
            msg = "seed %d: %s" % (seed, msg)
            break
    c.update(ran=True, ok=ok, verified=bool(ok and ref_mod), checks=checks,
             mode="reference" if ref_mod else "finite_check", max_abs_err=mx_a,
             max_rel_err=mx_r, mismatches=mism, input_mutated=mutated, **figures)
    if not ok:
        c["message"] = msg
    elif not ref_mod:
        c["message"] = "unverified: no reference implementation to compare with"
    return ok, model, ref_model


def resolve_entry(e, cand_mod, mods, ref_i):
    """(cls, get_inputs, get_init_inputs, ref_mod, error) of a kernel entry."""
    ref_mod = mods.get(ref_i) if ref_i >= 0 else None
    if (ref_i < 0 and hasattr(cand_mod, "ModelNew") and hasattr(cand_mod, "Model")
            and hasattr(cand_mod, "get_inputs")):
        ref_mod = cand_mod  # KernelBench files that carry their own reference Model
    if ref_i >= 0 and ref_mod is None:
        return None, None, None, None, "the reference did not load"
    cls = getattr(cand_mod, "ModelNew", None) or getattr(cand_mod, "Model", None)
    src_mod = ref_mod or cand_mod
    gi = getattr(cand_mod, e.get("get_inputs", "get_inputs"), None) or getattr(
        src_mod, e.get("get_inputs", "get_inputs"), None)
    gii = getattr(cand_mod, e.get("get_init_inputs", "get_init_inputs"), None) or getattr(
        src_mod, e.get("get_init_inputs", "get_init_inputs"), None)
    if cls is None or gi is None:
        return None, None, None, None, "the kernel file needs ModelNew (or Model) and get_inputs"
    return cls, gi, gii, ref_mod, None


# mode "profile": the NVTX range around the candidate's profiled calls; magpie
# runs this process under `ncu --nvtx --nvtx-include magpie_profile/`, so
# only kernels launched inside it are profiled (not the inputs' set-up, the
# warm-up with Triton's JIT and autotuning, nor any reference)
PROFILE_RANGE = "magpie_profile"


def profile_one(torch, dev, job, i, entries, mods, outs, load_s):
    """The candidate of entry i called job["profile"]["calls"] times (3) on
    seed 42's inputs (a fresh clone per call, made before the range), inside
    the NVTX range; models, inputs and one warm-up call outside it. No
    reference runs: the verdict came from the timed process."""
    e, o = entries[i], outs[i]
    ph = o.setdefault("phases", {})
    pj = job.get("profile") or {}
    rng = pj.get("nvtx_range") or PROFILE_RANGE
    calls = max(1, int(pj.get("calls", 3)))
    ph["load_s"] = load_s.get(i, 0.0) + load_s.get(e.get("ref", -1), 0.0)
    pr = o["profile"] = {"ran": True, "ok": False, "nvtx_range": rng, "calls": 0}
    cls, gi, gii, _, err = resolve_entry(e, mods[i], mods, e.get("ref", -1))
    if err:
        pr["message"] = err
        return
    try:
        t0 = time.perf_counter()
        seed_all(torch, 42)
        init = to_list(gii()) if gii else []
        seed_all(torch, 42)
        model = cls(*init)
        if hasattr(model, "to"):
            model = model.to(dev).eval()
        inputs = make_inputs(torch, gi, dev, 42)
        sync(torch, dev)
        t1 = time.perf_counter()
        with torch.no_grad():
            model(*clone(torch, inputs))  # JIT compile and autotuning, outside the range
            sync(torch, dev)
            t2 = time.perf_counter()
            xs = [clone(torch, inputs) for _ in range(calls)]
            sync(torch, dev)
            torch.cuda.nvtx.range_push(rng)
            try:
                for x in xs:
                    model(*x)
                    pr["calls"] += 1
                sync(torch, dev)
            finally:
                torch.cuda.nvtx.range_pop()
        ph.update(inputs_s=t1 - t0, warmup_s=t2 - t1, profiled_s=time.perf_counter() - t2)
        pr["ok"] = True
    except Exception:
        pr["message"] = "raised: " + traceback.format_exc(limit=6)


def device_ok(torch, dev):
    """Whether the device still runs work correctly after a kernel raised
    (recorded as device_ok_after): magpie keeps a shared job's results when
    a kernel failed by an exception only if the device answered this; a
    sticky CUDA error (an illegal address, a trap) fails it and the job's
    kernels are checked again each in a process of its own."""
    if dev.type == "cpu":
        return True
    try:  # .item() waits for the sum, and for everything queued before it
        sync(torch, dev)
        x = torch.arange(4096, device=dev, dtype=torch.float32)
        return float((x * 2 + 1).sum().item()) == 4096.0 * 4096.0
    except Exception:
        return False


def prepare(torch, dev, tcfg, i, entries, mods, outs, timer, timed, load_s):
    """Correctness of entry i, then (timing on) its Sampler into timed."""
    e = entries[i]
    o, c = outs[i], outs[i]["correctness"]
    ph = o.setdefault("phases", {})
    ref_i = e.get("ref", -1)
    ph["load_s"] = load_s.get(i, 0.0) + load_s.get(ref_i, 0.0)
    cand_mod = mods[i]
    cls, gi, gii, ref_mod, err = resolve_entry(e, mods[i], mods, ref_i)
    if err:
        c.update(ran=True, ok=False, message=err)
        return
    try:
        rule = {"declared": e.get("dtype"), "atol": e.get("atol"), "rtol": e.get("rtol"),
                "factor": e.get("hp_factor") or mc.HP_FACTOR,
                "rms_factor": e.get("rms_factor") or mc.RMS_FACTOR,
                "hp": e.get("hp_reference", True)}
        ref_src = (entries[ref_i]["source"] if ref_i >= 0 else
                   e["source"] if ref_mod is cand_mod else None)
        ok, model, ref_model = correctness_seeds(torch, dev, e, cls, ref_mod, gi, gii, rule, c,
                                                 ph, ref_src)
        if not ok or not tcfg.get("enabled"):
            return
        t0 = time.perf_counter()
        key = ref_key(ref_src, gi, gii, 7, rule) if ref_mod and ref_src else None
        hit, _ = ref_lookup(key)
        if hit:  # the inputs of another candidate's timing: a clone of its own
            t_inputs = clone(torch, hit[0])
            t_ref = (hit[1], hit[2])
        else:
            t_inputs = make_inputs(torch, gi, dev, 7)
            t_ref = None
            if ref_mod:
                t_ref = ref_run(torch, dev, key, ref_model, clone(torch, t_inputs), 7, rule, {},
                                t0)
        sync(torch, dev)
        ph["timing_inputs_s"] = time.perf_counter() - t0
        holder = {}

        def call(m=model, x=t_inputs, h=holder):
            with torch.no_grad():
                h["out"] = m(*x)
        timed.append((i, Sampler(timer, call, tcfg), holder, t_ref, rule))
    except Exception:
        c.update(ran=True, ok=False, message="raised: " + traceback.format_exc(limit=6),
                 device_ok_after=device_ok(torch, dev))


def sample_loop(job, tcfg, live, entries):
    """Samples the live kernels: round-robin in compare (sequentially
    decided when the job asks and the baseline is among them), else one
    after the other."""
    t0 = time.monotonic()
    if not job.get("interleave"):
        for t in live:
            t1 = time.monotonic()
            while True:
                t[1].take()
                if t[1].check(time.monotonic() - t1):
                    break
        return None
    seq = Seq(job, tcfg, [entries[t[0]]["id"] for t in live])
    base = live[seq.base][1] if seq.on else None
    rnd = 0
    while live:
        el = time.monotonic() - t0
        # fixed: every kernel keeps sampling until all stopped, so the rounds
        # stay interleaved; sequential: a decided candidate stops
        act = [t for t in live if not (seq.on and t[1].reason)]
        for j in range(len(act)):
            act[(j + rnd) % len(act)][1].take()
        for k, t in enumerate(live):
            if t[1].reason:
                continue
            if not seq.on:
                t[1].check(el / len(live))
            elif k != seq.base:
                seq.check(base, t[1], el / len(live))
        if seq.on and all(t[1].reason for k, t in enumerate(live) if k != seq.base):
            if not base.reason:
                base.reason = "the candidates were decided (%d samples)" % len(base.samples)
            break
        if all(t[1].reason for t in live) or el > tcfg.get(
                "max_time_s", 15) * MIN_SAMPLES_GRACE * len(live) + 1:
            break
        rnd += 1
    return seq if seq.on else None


def finish_timing(torch, tcfg, timer, live, outs, entries, result, seq, loop_s):
    """Each timed kernel's timing object, then the re-check of its timed output."""
    for k, (i, smp, holder, t_ref, rule) in enumerate(live):
        tj = {"ran": True, "ok": True, "samples_ms": smp.samples, "batch": smp.batch,
              "cuda_graph": smp.graph is not None, "launch_hold_us": timer.hold_us(),
              "stop_reason": (smp.reason or smp.rule or "stopped with the other candidates") + (
                  "; " + smp.graph_note if smp.graph_note else ""),
              "l2_flush_bytes": timer.flush_bytes, "device": result["device"],
              "min_samples_met": len(smp.samples) >= tcfg.get("min_samples", 10)}
        if seq is not None and k != seq.base:
            tj["sequential"] = seq.info(smp)
        if timer.guard:
            g = timer.guard_info()
            if smp.clocks:
                g["sample_clock_mhz_median"] = sorted(smp.clocks)[len(smp.clocks) // 2]
            tj["power_guard"] = g
            tj["sample_clock_mhz"] = smp.clocks
        outs[i]["timing"] = tj
        ph = outs[i].setdefault("phases", {})
        ph.update(warmup_s=smp.warmup_s, timing_loop_s=loop_s, timed_device_s=smp.sum_ms / 1000)
        t0 = time.perf_counter()
        if t_ref is not None:
            cr = check(torch, rule, holder.get("out"), t_ref[0], t_ref[1], {})
            ok, msg = cr["ok"], cr["message"]
            c = outs[i]["correctness"]
            c["recheck_done"] = True
            c["recheck_ok"] = ok
            if not ok:
                c["ok"] = False
                c["message"] = "output of the timed calls is wrong: " + msg
        ph["recheck_s"] = time.perf_counter() - t0
        print("MAGPIE_LATENCY_JSON: " + json.dumps(mc.strict_json({
            "mode": "magpie_runner", "kernel": entries[i]["id"], "samples_ms": smp.samples,
            "batch": smp.batch, "stop_reason": tj["stop_reason"]}), allow_nan=False))


def run_timing(torch, job, tcfg, timer, timed, outs, entries, result):
    timer.setup_flush(tcfg.get("l2_flush", True))
    timer.setup_hold(tcfg.get("hold_cycles", 0), tcfg.get("power_guard", True),
                     tcfg.get("cool_ratio"))
    for t in timed:
        t0 = time.perf_counter()
        try:
            t[1].warmup()
        except Exception:
            outs[t[0]]["timing"] = {"ran": True, "ok": False,
                                    "message": traceback.format_exc(limit=4)}
        t[1].warmup_s = time.perf_counter() - t0
    live = [t for t in timed if not outs[t[0]]["timing"]]
    t0 = time.perf_counter()
    seq = sample_loop(job, tcfg, live, entries)
    finish_timing(torch, tcfg, timer, live, outs, entries, result, seq,
                  time.perf_counter() - t0)


def watchdog(limit_s, what, result, out_path):
    """A timer that, if not cancelled within limit_s, writes the result so far
    with a device_error saying what hung and ends the process: magpie then
    discards this process's result and checks each kernel in a process of
    its own (a hung GPU kernel cannot be interrupted from Python)."""
    import threading

    def fire():
        result["device_error"] = "%s did not finish in %.0f s (hung?)" % (what, limit_s)
        try:
            write_result(result, out_path)
        finally:
            os._exit(3)
    t = threading.Timer(limit_s, fire)
    t.daemon = True
    t.start()
    return t


def write_result(result, out_path):
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        mc.dump_strict(result, f)
    os.replace(tmp, out_path)


def job_process(job, proc, warm):
    """The process figures of a job: cold, the process's start; warm (the
    loop mode's later jobs), how long the job waited to be picked up."""
    if warm is None:
        if job.get("spawned_at"):
            proc["start_s"] = max(0.0, T_START - job["spawned_at"])
    else:
        proc.update(warm=True, jobs_before=warm)
        if job.get("spawned_at"):
            proc["dispatch_s"] = max(0.0, time.time() - job["spawned_at"])


def run_job(job, torch, dev, result):
    """One job, torch imported and the device known; fills result."""
    out_path = job["output"]
    result["device"] = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    tcfg = job.get("timing", {})
    entries = job["kernels"]
    global DISK
    DISK = DiskCache(torch, dev, job.get("ref_cache_dir"))
    mods, outs, load_s = {}, [], {}
    for i, e in enumerate(entries):
        o = {"id": e["id"], "build": {"ok": True, "log": ""}, "correctness": {}, "timing": {}}
        outs.append(o)
        result["kernels"].append(o)
        t0 = time.perf_counter()
        try:
            mods[i] = lang_load(e, "magpie_k%d" % i)
        except Exception:
            o["build"] = {"ok": False, "log": traceback.format_exc(limit=4),
                          "device_ok_after": device_ok(torch, dev)}
        load_s[i] = time.perf_counter() - t0
    if job.get("mode") == "profile":
        for i, e in enumerate(entries):
            if not e.get("is_reference") and i in mods:
                profile_one(torch, dev, job, i, entries, mods, outs, load_s)
        return
    timer = Timer(torch, dev)
    timed = []
    for i, e in enumerate(entries):
        if e.get("is_reference") or i not in mods:
            continue
        wd = watchdog(job["correctness_timeout_s"], "the correctness checks of " + e["id"],
                      result, out_path) if job.get("correctness_timeout_s") else None
        prepare(torch, dev, tcfg, i, entries, mods, outs, timer, timed, load_s)
        if wd is not None:
            wd.cancel()
    if timed:
        run_timing(torch, job, tcfg, timer, timed, outs, entries, result)


def import_torch(result, proc):
    """(torch, device), or (None, None) with the result's device_error."""
    t0 = time.perf_counter()
    try:
        import torch
    except ImportError:
        result["device_error"] = "PyTorch is not installed for %s" % sys.executable
        return None, None
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if dev.type == "cuda":
        torch.cuda.init()
    proc["imports_s"] = time.perf_counter() - t0
    return torch, dev


def main():
    if sys.argv[1:] == ["-"]:
        return serve()
    job = json.load(open(sys.argv[1]))
    result = {"kernels": []}
    proc = result["process"] = {}
    job_process(job, proc, None)
    torch, dev = import_torch(result, proc)
    if torch is not None:
        run_job(job, torch, dev, result)
    write_result(result, job["output"])
    return 0


def trusted(result):
    """Whether the process may run the next job (the loop mode): no device
    error, every kernel loaded (a kernel file's import runs its code), and
    every check that ran passed. A kernel that failed may have left the
    process in any state (a dead CUDA context, patched modules, a broken
    allocator); a fresh process is cheap next to a wrong verdict."""
    if result.get("device_error"):
        return False
    for o in result.get("kernels", []):
        c = o.get("correctness", {})
        if not o.get("build", {}).get("ok", False) or (c.get("ran") and not c.get("ok")):
            return False
        if o.get("timing", {}).get("ran") and not o["timing"].get("ok", True):
            return False
    return True


def user_modules(dirs):
    """Modules loaded from files under dirs (a kernel's own helpers)."""
    out = []
    for name, m in list(sys.modules.items()):
        f = getattr(m, "__file__", None)
        if f and any(os.path.abspath(f).startswith(d + os.sep) for d in dirs):
            out.append(name)
    return out


def serve():
    """The loop mode (`magpie_runner.py -`, a warm runner of magpie's pool,
    src/kernel/warm.c): jobs as lines of JSON {seq, job, log, cwd} on stdin;
    "start SEQ" and "done SEQ keep|retire" on fd 3. torch stays imported and
    the reference's outputs stay in REF_CACHE between jobs (keyed by the
    files' contents, so an edited reference is run again); each job loads
    its kernel files afresh (a candidate edited in place is the new one),
    and the modules its kernels imported from their own directories are
    dropped after it. After a job that is not trusted() the process ends."""
    rep = os.fdopen(os.dup(3), "w", buffering=1)
    os.close(3)
    first = {}
    torch = dev = None
    served = 0
    path0 = list(sys.path)
    for line in sys.stdin:
        req = json.loads(line)
        rep.write("start %s\n" % req["seq"])
        sys.stdout.flush()
        sys.stderr.flush()
        fd = os.open(req["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        result = {"kernels": []}
        proc = result["process"] = {}
        job = None
        try:
            os.chdir(req["cwd"])
            job = json.load(open(req["job"]))
            job_process(job, proc, served if torch is not None else None)
            if torch is None:
                torch, dev = import_torch(result, first)
                proc.update(first)
            if torch is not None:
                FILE_DIGEST.clear()
                REF_USED.clear()
                before = set(sys.modules)
                try:
                    run_job(job, torch, dev, result)
                finally:
                    dirs = {os.path.dirname(os.path.abspath(e["source"]))
                            for e in job["kernels"] if e.get("source")}
                    for name in user_modules(dirs):
                        if name not in before:
                            del sys.modules[name]
                    for k in [k for k in REF_CACHE if k not in REF_USED]:
                        del REF_CACHE[k]  # another problem's, or an edited file's
                    sys.path[:] = path0
        except Exception:
            result["device_error"] = "the runner failed: " + traceback.format_exc(limit=4)
        if job is not None and "output" in job:
            write_result(result, job["output"])
        sys.stdout.flush()
        sys.stderr.flush()
        keep = trusted(result)
        rep.write("done %s %s\n" % (req["seq"], "keep" if keep else "retire"))
        served += 1
        if not keep:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
