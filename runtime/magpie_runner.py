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

The result is strict JSON: a non-finite number is written as null, with
its value under "nonfinite" beside it (magpie_check.dump_strict).
"""
import importlib.util
import json
import math
import os
import sys
import time
import traceback

import magpie_check as mc  # beside this file (the script's directory is on sys.path)

# max_time_s stops sampling only once min_samples are in; sampling may run
# this many times max_time_s to get them (K_MIN_SAMPLES_GRACE in the C harness)
MIN_SAMPLES_GRACE = 4


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(mod)
    return mod


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


def main():
    job = json.load(open(sys.argv[1]))
    out_path = job["output"]
    result = {"kernels": []}
    try:
        import torch
    except ImportError:
        result["device_error"] = "PyTorch is not installed for %s" % sys.executable
        with open(out_path, "w") as f:
            mc.dump_strict(result, f)
        return 0
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    result["device"] = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    tcfg = job.get("timing", {})
    entries = job["kernels"]
    mods = {}
    outs = []
    for i, e in enumerate(entries):
        o = {"id": e["id"], "build": {"ok": True, "log": ""}, "correctness": {}, "timing": {}}
        outs.append(o)
        result["kernels"].append(o)
        try:
            mods[i] = load_module(e["source"], "magpie_k%d" % i)
        except Exception:
            o["build"] = {"ok": False, "log": traceback.format_exc(limit=4)}
    timer = Timer(torch, dev)
    timed = []
    for i, e in enumerate(entries):
        if e.get("is_reference") or i not in mods:
            continue
        o, c = outs[i], outs[i]["correctness"]
        ref_i = e.get("ref", -1)
        cand_mod = mods[i]
        ref_mod = mods.get(ref_i) if ref_i >= 0 else None
        if (ref_i < 0 and hasattr(cand_mod, "ModelNew") and hasattr(cand_mod, "Model")
                and hasattr(cand_mod, "get_inputs")):
            ref_mod = cand_mod  # KernelBench files that carry their own reference Model
        if ref_i >= 0 and ref_mod is None:
            c.update(ran=True, ok=False, message="the reference did not load")
            continue
        cls = getattr(cand_mod, "ModelNew", None) or getattr(cand_mod, "Model", None)
        src_mod = ref_mod or cand_mod
        gi = getattr(cand_mod, e.get("get_inputs", "get_inputs"), None) or getattr(
            src_mod, e.get("get_inputs", "get_inputs"), None)
        gii = getattr(cand_mod, e.get("get_init_inputs", "get_init_inputs"), None) or getattr(
            src_mod, e.get("get_init_inputs", "get_init_inputs"), None)
        if cls is None or gi is None:
            c.update(ran=True, ok=False,
                     message="the kernel file needs ModelNew (or Model) and get_inputs")
            continue
        try:
            rule = {"declared": e.get("dtype"), "atol": e.get("atol"), "rtol": e.get("rtol"),
                    "factor": e.get("hp_factor") or mc.HP_FACTOR,
                    "rms_factor": e.get("rms_factor") or mc.RMS_FACTOR,
                    "hp": e.get("hp_reference", True)}
            ok, msg, mx_a, mx_r, mism, checks, mutated = True, "", 0.0, 0.0, 0, 0, False
            figures = {}
            seeds = e.get("seeds", 3) if ref_mod else 1
            model = ref_model = None
            for s in range(seeds):
                seed = 42 + s
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
                seed_all(torch, seed)
                inputs = move(torch, to_list(gi()), dev)
                with torch.no_grad():
                    ref_out = ref_model(*clone(torch, inputs)) if ref_mod else None
                    ref_hi = high_precision(torch, rule, ref_model, ref_out, inputs, seed,
                                            figures) if ref_mod else None
                    mine = clone(torch, inputs)
                    if dev.type == "cuda":  # poison what the allocator hands out next
                        p = torch.empty(64 << 20, dtype=torch.float32, device=dev)
                        p.fill_(float("nan"))
                        del p
                    out = model(*mine)
                    if dev.type == "cuda":
                        torch.cuda.synchronize()
                for a, b in zip(mine, inputs):
                    if isinstance(a, torch.Tensor) and not torch.equal(a, b):
                        mutated = True
                if mutated:
                    ok, msg = False, "the kernel modified its inputs"
                    break
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
                if not ok:
                    msg = "seed %d: %s" % (seed, msg)
                    break
            c.update(ran=True, ok=ok, verified=bool(ok and ref_mod), checks=checks,
                     mode="reference" if ref_mod else "finite_check", max_abs_err=mx_a,
                     max_rel_err=mx_r, mismatches=mism, input_mutated=mutated, **figures)
            if not ok:
                c["message"] = msg
                continue
            if not ref_mod:
                c["message"] = "unverified: no reference implementation to compare with"
            if tcfg.get("enabled"):
                seed_all(torch, 7)
                t_inputs = move(torch, to_list(gi()), dev)
                t_ref = None
                if ref_mod:
                    with torch.no_grad():
                        t_ref = ref_model(*clone(torch, t_inputs))
                        t_ref = (t_ref, high_precision(torch, rule, ref_model, t_ref, t_inputs,
                                                       7, {}))
                holder = {}

                def call(m=model, x=t_inputs, h=holder):
                    with torch.no_grad():
                        h["out"] = m(*x)
                timed.append((i, Sampler(timer, call, tcfg), holder, t_ref, rule))
        except Exception:
            c.update(ran=True, ok=False, message="raised: " + traceback.format_exc(limit=6))
    if timed:
        timer.setup_flush(tcfg.get("l2_flush", True))
        timer.setup_hold(tcfg.get("hold_cycles", 0), tcfg.get("power_guard", True),
                         tcfg.get("cool_ratio"))
        for t in timed:
            try:
                t[1].warmup()
            except Exception:
                outs[t[0]]["timing"] = {"ran": True, "ok": False,
                                        "message": traceback.format_exc(limit=4)}
        live = [t for t in timed if not outs[t[0]]["timing"]]
        t0 = time.monotonic()
        if job.get("interleave"):
            rnd = 0
            while live:
                el = time.monotonic() - t0
                for j in range(len(live)):
                    live[(j + rnd) % len(live)][1].take()
                for t in live:
                    if not t[1].reason:
                        t[1].check(el / len(live))
                if all(t[1].reason for t in live) or el > tcfg.get(
                        "max_time_s", 15) * MIN_SAMPLES_GRACE * len(
                        live) + 1:
                    break
                rnd += 1
        else:
            for t in live:
                t1 = time.monotonic()
                while True:
                    t[1].take()
                    if t[1].check(time.monotonic() - t1):
                        break
        for i, smp, holder, t_ref, rule in live:
            tj = {"ran": True, "ok": True, "samples_ms": smp.samples, "batch": smp.batch,
                  "cuda_graph": smp.graph is not None, "launch_hold_us": timer.hold_us(),
                  "stop_reason": (smp.reason or "stopped with the other candidates") + (
                      "; " + smp.graph_note if smp.graph_note else ""),
                  "l2_flush_bytes": timer.flush_bytes, "device": result["device"],
                  "min_samples_met": len(smp.samples) >= tcfg.get("min_samples", 10)}
            if timer.guard:
                g = timer.guard_info()
                if smp.clocks:
                    g["sample_clock_mhz_median"] = sorted(smp.clocks)[len(smp.clocks) // 2]
                tj["power_guard"] = g
                tj["sample_clock_mhz"] = smp.clocks
            outs[i]["timing"] = tj
            if t_ref is not None:
                cr = check(torch, rule, holder.get("out"), t_ref[0], t_ref[1], {})
                ok, msg = cr["ok"], cr["message"]
                c = outs[i]["correctness"]
                c["recheck_done"] = True
                c["recheck_ok"] = ok
                if not ok:
                    c["ok"] = False
                    c["message"] = "output of the timed calls is wrong: " + msg
            print("MAGPIE_LATENCY_JSON: " + json.dumps(mc.strict_json({
                "mode": "magpie_runner", "kernel": entries[i]["id"], "samples_ms": smp.samples,
                "batch": smp.batch, "stop_reason": tj["stop_reason"]}), allow_nan=False))
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        mc.dump_strict(result, f)
    os.replace(tmp, out_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
