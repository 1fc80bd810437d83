"""Times the references `magpie trace replay --run` wrote (docs/replay.md).

Usage: magpie_replay.py JOB.json. The job names the ref_<n>.py files (each
with the state to replay it in: "flushed", "warm", "idle" or "cold") and the output
path; the result is one JSON object:
  {"device", "device_error", "clocks", "ops": [{"n", "ok", "error",
   "samples_ms", "l2", "l2_flushed_us", "l2_warm_us", "idle_us", "cold_us", "after_us",
   "after_wired", "calls_profiled",
   "kernels", "kernels_per_call", "graph_samples_ms", "batch", "cuda_graph",
   "stop_reason", "sm_clock_mhz", "clocks_before", "clocks_after",
   "prof_note"}]}

What is timed is the kernels, as the trace timed them: the op is called
many times under torch.profiler (CUPTI kernel records, the same records a
Kineto trace holds) and each call's kernel durations are summed, giving
one sample per call ("samples_ms"; the trace's "kernel time per call" is
the same sum). Two L2 states are profiled: "flushed" (L2 emptied by
reading a buffer twice its size, then as many bytes as the op's inputs
written, so the op reads its inputs from HBM and evicts as many dirty lines
as the kernels that wrote those inputs left: next to nothing after a decode
step's small activations, all of L2 after a prefill's large ones) and "warm"
(calls back to back, so inputs that fit in L2 are there, as an op reading
what the op before it just wrote finds them). A third state, "idle", drains
the GPU before each call (L2 as the previous call left it): in a launch-bound
workload (the host launching slower than the GPU runs, as in eager decode
steps) each short kernel starts on an idle GPU instead of queued behind the
one before it. A fourth, "cold", empties L2 by reading, reads the op's
inputs back into it (but those the ref lists in PARAMETER_INPUTS: weights,
norm weights, which a forward pass reads from HBM) and drains the GPU
before each call: inputs in L2, the op's own kernel code and constants not
(a short op in a forward pass, whose kernel last ran a layer earlier). The
job says which one is the op's figure; all are returned. The records' names give the kernels
that ran. Another figure is the analyze runner's (magpie_runner.Timer and
Sampler beside this file): CUDA events around a CUDA graph of many calls
("graph_samples_ms"), which includes the gaps between kernels in a graph.
Clocks: the SM clock the runner's spin probe measures, and nvidia-smi's
clocks, power and throttle reasons before and after each op.

Where the job gives an op a "prev_ref" (prev_<n>.py: the op that ran just
before it in the trace) and its "gap_us", a fifth figure, "after_us", is
the op timed right after that producer (profile_after), with the input the
producer's output stands for ("after_wired": an input's index, "buffer
NAME" for the module's own tensor such as an in-place op's self, or null).

Without a CUDA device nothing is timed ("device_error"), unless the job
sets allow_cpu (plumbing tests): then the calls run on the CPU, timed by
the Sampler alone, and the figures mean nothing for the GPU.
"""
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

GPU_CATS = ("kernel", "gpu_memset", "gpu_memcpy")
# A TraceLens-split row (OP->KERNEL, the job's "kernel_only"): while an op
# of that kind is timed, only that kernel's records are its records, and a
# call's figure is their mean per launch (the row's calls count launches).
KEEP = None


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(mod)
    return mod


def smi_clocks(torch, dev):
    """nvidia-smi's view of the device: SM/memory clocks, max SM clock,
    power, temperature, active throttle reasons ("" when absent)."""
    q = "clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu," \
        "clocks_throttle_reasons.active"
    cmd = ["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader,nounits"]
    out = None
    try:
        uuid = getattr(torch.cuda.get_device_properties(dev), "uuid", None)
        if uuid is not None:
            u = str(uuid)
            out = subprocess.run(cmd + ["-i", u if u.startswith(("GPU-", "MIG-")) else "GPU-" + u],
                                 capture_output=True, text=True, timeout=15)
        if out is None or out.returncode != 0 or not out.stdout.strip():
            # the first visible device (nvidia-smi numbers ignore CUDA_VISIBLE_DEVICES)
            vis = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
            out = subprocess.run(cmd + (["-i", vis] if vis else []), capture_output=True,
                                 text=True, timeout=15)
    except Exception:
        return ""
    if out.returncode != 0 or not out.stdout.strip():
        return ""
    v = [x.strip() for x in out.stdout.strip().splitlines()[0].split(",")]
    if len(v) < 6:
        return ""
    return "sm %s MHz (max %s), mem %s MHz, %s W, %s C, throttle %s" % (
        v[0], v[2], v[1], v[3], v[4], v[5])


def gpu_records(torch, run):
    """The GPU activity records (start us, duration us, name) of run(), in
    device order, from the profiler's Kineto trace: the records, names and
    categories a torch-profiler trace holds."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            evs = json.load(f)
    finally:
        os.unlink(path)
    if isinstance(evs, dict):
        evs = evs.get("traceEvents", [])
    recs = [(float(e["ts"]), float(e.get("dur", 0)), e.get("name", ""))
            for e in evs if e.get("ph") == "X" and e.get("cat") in GPU_CATS
            and (KEEP is None or e.get("name") == KEEP)]
    recs.sort(key=lambda r: r[0])
    return recs


def per_call(recs, calls, skip):
    """Splits the records into `calls` equal chunks (each call launches the
    same kernels; `skip` leading records of each chunk are the L2 flush)
    and returns (per-call kernel us, the names of one call), or None when
    the records do not split evenly."""
    if calls <= 0 or len(recs) % calls:
        return None
    k = len(recs) // calls - skip
    if k <= 0:
        return None
    names = [r[2] for r in recs[skip:skip + k]]
    us = []
    for c in range(calls):
        chunk = recs[c * (k + skip):(c + 1) * (k + skip)]
        if [r[2] for r in chunk[skip:]] != names:
            return None
        us.append(sum(r[1] for r in chunk[skip:]) / (k if KEEP is not None else 1))
    return us, names


def per_launch(recs, calls):
    """The mean of records that do not split per call: per call, or per
    launch for a split row's kernel (KEEP)."""
    return sum(r[1] for r in recs) / max(len(recs) if KEEP is not None else calls, 1)


def kernel_base(name):
    """A kernel's name without its template arguments and parameters."""
    for i, ch in enumerate(name):
        if ch in "<(":
            return name[:i].strip()
    return name.strip()


def pick_kernel(want, every):
    """The kernel of a split row among those its op launched in the replay
    (every, one name per launch): (name, "") when it ran by its exact name;
    (name, why) when it did not but exactly one kernel of the same name with
    other template arguments did (another build of the library); else
    (None, why)."""
    if want in every:
        return want, ""
    same = sorted({n for n in every if kernel_base(n) == kernel_base(want)})
    if len(same) == 1:
        return same[0], ("the row's kernel did not run by its exact name; timed the one "
                         "kernel of the same name with other template arguments")
    return None, ("the row's kernel did not run in the replay: the op launched %d kernels, "
                  "%s (another algorithm pick for this shape, or another library "
                  "version?)" % (len(every), "%d of the same name with other template "
                                 "arguments" % len(same) if same else "none of its name"))


def make_touch(torch, tensors):
    """A function that reads every byte of the given tensors' storages (each
    storage once, through a uint8 view of it: one small reduction kernel per
    storage), bringing them into L2 without running any of the op's kernels;
    its nbytes attribute is the bytes read. None when there is nothing to read."""
    views, seen = [], set()

    def walk(x):
        if isinstance(x, torch.Tensor):
            if x.numel() == 0 or x.device.type == "meta":
                return
            st = x.untyped_storage()
            key = (x.device, st.data_ptr(), st.nbytes())
            if key in seen or st.nbytes() == 0:
                return
            seen.add(key)
            v = torch.empty(0, dtype=torch.uint8, device=x.device)
            v.set_(st)
            views.append(v)
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)
    walk(tensors)
    if not views:
        return None

    def touch():
        for v in views:
            torch.amax(v)
    touch.nbytes = sum(v.numel() for v in views)
    return touch


def cooled(torch, call, cool_s):
    """call, followed (cool_s > 0) by a drained GPU left idle cool_s seconds."""
    if cool_s <= 0:
        return call

    def run():
        call()
        torch.cuda.synchronize()
        time.sleep(cool_s)
    return run


def time_state(torch, call, pre, drain, calls):
    """One replay state: `calls` calls, each after pre(i) (its own records,
    counted once alone, are skipped) and, with drain, a drained GPU. Returns
    the records and their per_call split (None when they do not split)."""
    skip = len(gpu_records(torch, lambda: pre(1)))

    def run():
        for i in range(calls):
            pre(i)
            if drain:
                torch.cuda.synchronize()
            call()
    recs = gpu_records(torch, run)
    return recs, per_call(recs, calls, skip)


def profile_op(torch, call, flush, calls, touch=None, dirty_bytes=0, cool_s=0.0, levels=None):
    """Per-call kernel time (us) in the four states, with the kernel names.
    Returns a dict; "note" says what could not be split per call.
    "warm": calls back to back (queued, L2 as the previous call left it);
    "idle": the GPU drained before each call (a synchronize between calls),
    L2 as the previous call left it: a launch-bound workload, where the host
    launches slower than the GPU runs and each short kernel starts on an idle
    GPU; "flushed": L2 emptied by reading a buffer twice its size, then
    dirty_bytes (the op's inputs, at most the L2) of it rewritten;
    "cold" (with touch, the reader of the op's inputs but its parameters):
    before each call L2 emptied by reading, those inputs read back into L2 by
    touch() and the GPU drained, so they are in L2 but the parameters, the
    op's own kernel code, constants and outputs are not: a short op of a
    forward pass, whose inputs the op before it just wrote and whose kernels
    last ran a layer earlier, with a layer's weights streamed through L2
    since. Probes: "flushed_write" (all of L2 dirty), "flushed_read" (all
    clean), "cold_write" (cold after a rewrite). Why reads: a rewrite leaves
    L2 full of dirty lines, and an op reading weights from HBM then also
    writes all of them back (decode GEMMs 1.13-1.21x the trace on an H200,
    0.95-1.0x after a read; docs/replay.md).
    levels ([[bytes, share], ...], the trace's dirty L2 before the op's calls,
    dirty_levels()): "flushed" and "cold" leave that many bytes dirty instead
    (calls in proportion to the shares, dirty_samples()); the inputs-sized
    rewrite and the all-clean cold are then probes ("flushed_inputs",
    "cold_read"). A decode GEMM ran 14 us after an RMSNorm and 17 us after
    the KV-cache concatenation in one trace: its inputs are the same, what
    the ops before it left dirty is not (docs/replay.md).
    cool_s > 0 (ops of a millisecond and more): after every call the GPU is
    drained and left idle that long, in every state, so that tens of calls
    of a large GEMM do not hold the GPU at its power cap (an LM-head GEMM's
    back-to-back calls ran at 1410 MHz under a power cap on an H200, where
    the workload's single call ran at full clock)."""
    out = {"calls_profiled": calls, "note": ""}
    call = cooled(torch, call, cool_s)

    def drained():
        for _ in range(calls):
            torch.cuda.synchronize()
            call()
    idle = per_call(gpu_records(torch, drained), calls, 0)
    if idle is not None:
        out["idle"] = idle[0]
    warm = gpu_records(torch, lambda: [call() for _ in range(calls)])
    w = per_call(warm, calls, 0)
    if w is None:  # kernels differ between calls (a one-off workspace memset, ...)
        names = []
        for r in warm:
            if r[2] not in names:
                names.append(r[2])
        out["warm"] = [per_launch(warm, calls)]
        out["names"] = names
        out["note"] = "%d kernel records over %d calls do not split per call: mean only" % (
            len(warm), calls)
    else:
        out["warm"], out["names"] = w
    if flush is None:
        return out
    touch = touch or (lambda: None)
    dirty = min(max(int(dirty_bytes), 0), flush.numel() // 2)

    def empty_l2(i):  # reads, not writes: L2 left holding clean lines
        torch.amax(flush)
    # Each state: what runs before every call (its records are skipped) and
    # whether the GPU is drained before the call.
    preludes = {
        # L2 emptied, then as many bytes as the op's inputs (what the kernels
        # before it wrote) left dirty: write-backs the op pays as it evicts them
        "flushed": (lambda i: (empty_l2(i), dirty and flush[:dirty].fill_(i % 127 + 1)),
                    False),
        # inputs in L2 (clean), parameters, code and constants not; GPU idle
        "cold": (lambda i: (empty_l2(i), touch()), True),
        # probes (replay_run.json): the flush buffer rewritten (all of L2
        # dirty); read only (all clean); cold after the rewrite
        "flushed_write": (lambda i: flush.fill_(i % 127 + 1), False),
        "flushed_read": (empty_l2, False),
        "cold_write": (lambda i: (flush.fill_(i % 127 + 1), touch()), True),
    }
    if levels:  # the trace's dirty L2 decides; the inputs' rule and all-clean are probes
        preludes["flushed_inputs"] = preludes.pop("flushed")
        preludes["cold_read"] = preludes.pop("cold")
        for state, tch in (("flushed", None), ("cold", touch)):
            v = dirty_samples(torch, call, flush, calls, levels, tch)
            if v:
                out[state] = v
    for state, (pre, drain) in preludes.items():
        recs, c = time_state(torch, call, pre, drain, calls)
        if c is not None:
            out[state] = c[0]
        elif state == "flushed":  # the op's own records by name (the flush's differ)
            pn = set(r[2] for r in gpu_records(torch, lambda: pre(1)))
            op = [r for r in recs if r[2] not in pn] if not (pn & set(out["names"])) else recs
            out[state] = [per_launch(op, calls)]
            out["note"] += ("; " if out["note"] else "") + "flushed: mean only"
        elif state == "cold":
            out["note"] += ("; " if out["note"] else "") + "cold: records do not split per call"
    for state, old in (("flushed", "flushed_inputs"), ("cold", "cold_read")):
        if levels and state not in out and old in out:  # the levels' records did not split
            out[state] = out[old]
            out["note"] += ("; " if out["note"] else "") + \
                "%s: the trace's dirty levels did not split per call, the inputs' rule used" % state
    return out


def first_tensor(torch, x):
    """The first tensor in x (a tensor, or nested tuples/lists), None if none."""
    if isinstance(x, torch.Tensor):
        return x
    for y in x if isinstance(x, (list, tuple)) else ():
        t = first_tensor(torch, y)
        if t is not None:
            return t
    return None


def wire(torch, out, inputs, params, model=None):
    """Where the producer's output goes in the op: the first of the op's
    inputs that is not a parameter, then of the module's own tensors (an
    in-place op's self, which the ref keeps as a buffer; not the m0_ copies
    that restore it), with the output's dtype and device and either its
    shape and strides or its number of elements with both contiguous (a
    view, as a reshape between the two ops). Returns (label: the input's
    index or "buffer NAME", a function installing an output there) or
    (None, None)."""
    if out is None:
        return None, None
    cands = [(i, x, None) for i, x in enumerate(inputs) if i not in params]
    if model is not None and hasattr(model, "_buffers"):
        cands += [("buffer " + k, t, k) for k, t in model._buffers.items()
                  if t is not None and not k.startswith("m0_")]
    for label, x, buf in cands:
        if not isinstance(x, torch.Tensor) or x.dtype != out.dtype or x.device != out.device:
            continue
        if x.shape == out.shape and x.stride() == out.stride():
            conv = (lambda o: o)
        elif x.numel() == out.numel() and x.is_contiguous() and out.is_contiguous():
            conv = (lambda o, shape=x.shape: o.view(shape))
        else:
            continue
        if buf is None:
            return label, (lambda o, i=label, conv=conv: inputs.__setitem__(i, conv(o)))
        return label, (lambda o, k=buf, conv=conv: model._buffers.__setitem__(k, conv(o)))
    return None, None


def profile_after(torch, dev, op, call, inputs, params, flush, calls, cool_s, model=None):
    """The "after" state: before every call L2 is emptied by reading, the
    op's producer in the trace (the ref prev_<n>.py: what ran last on its
    stream before it, trace_prev_op) is called, its output put in place of
    the op's matching input or own tensor (wire()), and, when the trace
    shows the op starting on an idle GPU (median gap over 2 us), the GPU
    drained; then the op. So the op finds its input where its producer just
    wrote it, dirty in L2, and its own code as cold as one op back. Returns
    the per-call kernel us of the op's records and where the output went."""
    pm, pin, _ = make_model(torch, dev, {"ref": op["prev_ref"], "n": 100000 + op["n"]})

    def produce():
        with torch.no_grad():
            return pm(*pin)
    w, put = wire(torch, first_tensor(torch, produce()), inputs, params, model)
    drain = float(op.get("gap_us") or 0) > 2.0
    saved = list(inputs)
    saved_bufs = dict(model._buffers) if model is not None and hasattr(model, "_buffers") else {}

    def pre(i):
        torch.amax(flush)
        o = produce()
        if put is not None:
            put(first_tensor(torch, o))

    try:
        _, c = time_state(torch, cooled(torch, call, cool_s), pre, drain, calls)
    finally:
        inputs[:] = saved
        if saved_bufs:
            model._buffers.update(saved_bufs)
    return (c[0] if c else None), w


def dirty_levels(op, l2_bytes):
    """The trace's dirty-L2 levels before the op ([[bytes, share], ...]) for
    the grid's largest L2 size not above this GPU's (the smallest when all
    are above), None when the job has none."""
    grid = op.get("dirty") or []
    mib = l2_bytes / 2**20
    fit = [e for e in grid if e[0] <= mib + 1e-6]
    pick = max(fit, key=lambda e: e[0]) if fit else (min(grid, key=lambda e: e[0]) if grid else None)
    return pick[1] if pick and pick[1] else None


def dirty_samples(torch, call, flush, calls, levels, touch=None):
    """Per-call us of `call` with L2 left as dirty as the trace's levels say:
    for each level (bytes, share), L2 emptied by reading and that many bytes
    of it rewritten before every call (with touch: the inputs read back
    after and the GPU drained, the cold state's prelude), calls in
    proportion to the shares (a level of less than half a call's share is
    left out). None when a level's records do not split per call."""
    cap = flush.numel() // 2
    out = []
    for b, share in levels:
        n = int(round(calls * share))
        if n <= 0:
            continue
        d = min(max(int(b), 0), cap)

        def pre(i, d=d):
            torch.amax(flush)
            if d:
                flush[:d].fill_(i % 127 + 1)
            if touch:
                touch()
        _, c = time_state(torch, call, pre, touch is not None, n)
        if not c:
            return None
        out += c[0]
    return out or None


def profile_spread(torch, dev, call, inputs, params, flush, calls, cool_s):
    """Probes of where a workload's weights live: "rotate" (before each call
    L2 emptied by reading and the op's tensor inputs swapped for the next of
    k copies, the copies together about 2 GiB: each call reads its operands
    at addresses no recent call used, as a model's layers each read their own
    weights) and "tlb" (the same inputs every call, but before each call one
    byte of every 64 KiB of a 4 GiB buffer read: address translations the
    op's operands had are evicted, the data is not). Returns {name: per-call
    us list}; a probe that does not fit in half the free memory is left out."""
    out = {}
    idx = [i for i, x in enumerate(inputs) if isinstance(x, torch.Tensor) and x.numel() > 0]
    nbytes = sum(inputs[i].untyped_storage().nbytes() for i in idx)
    free = torch.cuda.mem_get_info(dev)[0]
    saved = list(inputs)
    call = cooled(torch, call, cool_s)
    if nbytes > 0:
        k = int(min(max((2 << 30) // nbytes, 2), 256))
        if k * nbytes < free // 2:
            copies = [[inputs[i].clone() for i in idx] for _ in range(k)]

            def pre(i):
                torch.amax(flush)
                for j, t in zip(idx, copies[i % k]):
                    inputs[j] = t
            try:
                _, c = time_state(torch, call, pre, False, calls)
            finally:
                inputs[:] = saved
                del copies
            if c:
                out["rotate"] = c[0]
    big = 4 << 30
    if big < free // 2:
        buf = torch.empty(big, dtype=torch.uint8, device=dev)
        stride = buf[::65536]

        def pre_tlb(i):
            torch.amax(stride)
            torch.amax(flush)
        _, c = time_state(torch, call, pre_tlb, False, calls)
        del buf, stride
        if c:
            out["tlb"] = c[0]
    return out


def pick_state(op, p, in_bytes, l2_bytes):
    """The state whose figure is the op's: the job's, except that an op the
    job timed "warm" by its own rule (auto) whose inputs are more than half
    the L2 is timed "flushed": a working set that size does not stay in L2
    between the ops of a step, whatever wrote it (the producer's write, the
    op's own output and the ops between evict it). A state not measured
    falls back to "warm". Notes go to p["note"]."""
    l2 = op.get("l2", "flushed")

    def note(t):
        p["note"] += ("; " if p["note"] else "") + t
    if op.get("auto") and l2 == "warm" and l2_bytes > 0 and in_bytes > l2_bytes // 2 \
            and "flushed" in p:
        note("inputs %.1f MiB, more than half the L2 (%.0f MiB): flushed, not warm" % (
            in_bytes / 2**20, l2_bytes / 2**20))
        l2 = "flushed"
    if l2 not in p:  # no flush buffer, or records that did not split
        note("no %s figure: warm used" % l2)
        l2 = "warm"
    return l2


def make_model(torch, dev, op):
    mod = load(op["ref"], "magpie_replay_ref_%d" % op["n"])
    torch.manual_seed(42)
    model = mod.Model(*mod.get_init_inputs())
    if hasattr(model, "to"):
        model = model.to(dev).eval()
    if hasattr(model, "restore"):
        model.restore = False  # time the op alone, not the restoring copy
    if hasattr(model, "clone_out"):
        model.clone_out = False  # nor the copy of its output
    inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]
    return model, inputs, set(getattr(mod, "PARAMETER_INPUTS", ()))


def graph_sample(torch, mr, dev, call, tcfg):
    """The analyze runner's figure: events around CUDA-graph batches."""
    timer = mr.Timer(torch, dev)
    timer.setup_flush(tcfg.get("l2_flush", True))
    timer.setup_hold(0, tcfg.get("power_guard", True), None)
    smp = mr.Sampler(timer, call, tcfg)
    smp.warmup()
    t0 = time.monotonic()
    while True:
        smp.take()
        if smp.check(time.monotonic() - t0):
            break
    return timer, smp


def run_one(torch, mr, dev, op, tcfg, flush):
    global KEEP
    out = {"n": op["n"], "ok": False}
    try:
        return time_one(torch, mr, dev, op, tcfg, flush, out)
    finally:
        KEEP = None


def time_one(torch, mr, dev, op, tcfg, flush, out):
    global KEEP
    try:
        model, inputs, params = make_model(torch, dev, op)

        def call():
            with torch.no_grad():
                model(*inputs)

        call()
        cuda = dev.type == "cuda"
        if cuda:
            out["clocks_before"] = smi_clocks(torch, dev)
        smp = None
        try:  # the runner's figure; on a GPU the kernel records below are the op's
            timer, smp = graph_sample(torch, mr, dev, call, tcfg)
            out.update(graph_samples_ms=smp.samples, batch=smp.batch,
                       cuda_graph=smp.graph is not None,
                       stop_reason=smp.reason + ("; " + smp.graph_note if smp.graph_note else ""),
                       sm_clock_mhz=round(timer.ref_mhz, 1))
        except Exception as e:
            if not cuda:
                raise
            out["stop_reason"] = "no CUDA-graph figure (%s: %s)" % (type(e).__name__, str(e)[:300])
        every = None
        if cuda and op.get("kernel_only"):  # a split row: its kernel among the op's
            every = [r[2] for r in gpu_records(torch, call)]
            k, why = pick_kernel(op["kernel_only"], every)
            if k is None:
                out["kernels"] = list(dict.fromkeys(every))
                out["error"] = why
                return out
            KEEP = k
            if why:
                out["kernel_timed"] = k
        if not cuda:
            out.update(samples_ms=smp.samples, l2="none")
        else:
            per = statistics.median(smp.samples) * 1000 if smp and smp.samples else 10.0
            calls = int(min(max(tcfg.get("profile_calls", 200) * 10.0 / max(per, 10.0), 20),
                            tcfg.get("profile_calls", 200)))
            # what the op reads and the op before it wrote: its inputs but the
            # parameters (weights, per-channel vectors: from HBM at every pass)
            # and the module's own tensors (not the m0_ copies that restore them)
            state = [[x for i, x in enumerate(inputs) if i not in params]]
            if hasattr(model, "named_buffers"):
                state += [list(model.parameters()),
                          [t for k, t in model.named_buffers() if not k.startswith("m0_")]]
            touch = make_touch(torch, state)
            # an op with no tensor to read back is still timed cold (flush, drain)
            # a millisecond op: twice its time idle after each call (a third
            # of the power); 20 calls of it take a second or more
            cool = 2 * per / 1e6 if per >= 1000.0 else 0.0  # per: us
            lv = dirty_levels(op, flush.numel() // 2) if flush is not None else None
            p = profile_op(torch, call, flush, calls, touch, touch.nbytes if touch else 0, cool,
                           lv)
            if lv:
                out["dirty_levels"] = lv
                p["note"] += ("; " if p["note"] else "") + \
                    "L2 dirty before the calls as the trace's ops left it: " + ", ".join(
                        "%.1f MiB (%.0f %%)" % (b / 2**20, 100 * w) for b, w in lv)
            if cool:
                p["note"] += ("; " if p["note"] else "") + \
                    "%.0f ms idle after each call (power)" % (cool * 1000)
            l2 = pick_state(op, p, touch.nbytes if touch else 0,
                            flush.numel() // 2 if flush is not None else 0)
            if every is not None:
                p["note"] += ("; " if p["note"] else "") + (
                    "only the row's kernel timed, per launch: %d of the op's %d launches per "
                    "call" % (every.count(KEEP), len(every)))
                if out.get("kernel_timed"):
                    p["note"] += " (%s)" % why
            out.update(samples_ms=[u / 1000 for u in p[l2]], l2=l2,
                       l2_warm_us=statistics.median(p["warm"]),
                       # distinct, launch order (a split row: all its op launched)
                       kernels=list(dict.fromkeys(every if every is not None else p["names"])),
                       kernels_per_call=len(every if every is not None else p["names"]),
                       calls_profiled=p["calls_profiled"], prof_note=p["note"])
            if "flushed" in p:
                out["l2_flushed_us"] = statistics.median(p["flushed"])
            if "idle" in p:
                out["idle_us"] = statistics.median(p["idle"])
            if "cold" in p:
                out["cold_us"] = statistics.median(p["cold"])
            for k in ("flushed_read", "flushed_write", "cold_write", "flushed_inputs",
                      "cold_read"):  # probes, not in the summary
                if k in p:
                    out[k + "_us"] = statistics.median(p[k])
            if op.get("prev_ref") and flush is not None:
                try:
                    a, w = profile_after(torch, dev, op, call, inputs, params, flush, calls,
                                         cool, model)
                    out["after_wired"] = w
                    if a:
                        out["after_us"] = statistics.median(a)
                    else:
                        out["after_error"] = "the after state's records do not split per call"
                except Exception as e:  # the op's own figures stand
                    out["after_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
            if flush is not None and os.environ.get("MAGPIE_REPLAY_SPREAD"):
                try:  # probes (bench/replay_fidelity.sh), not in the summary
                    for k, v in profile_spread(torch, dev, call, inputs, params, flush,
                                               calls, cool).items():
                        out[k + "_us"] = statistics.median(v)
                except Exception as e:
                    out["spread_error"] = "%s: %s" % (type(e).__name__, str(e)[:300])
            out["clocks_after"] = smi_clocks(torch, dev)
        out["ok"] = True
    except Exception as e:
        out["error"] = "%s: %s" % (type(e).__name__, str(e)[:600])
        out["traceback"] = traceback.format_exc(limit=4)
    return out


def main():
    job = json.load(open(sys.argv[1]))
    res = {"ops": []}
    try:
        import torch
    except ImportError as e:
        res["device_error"] = "PyTorch is not importable for %s (%s)" % (sys.executable, e)
        return finish(job, res)
    import magpie_runner as mr
    if torch.cuda.is_available():
        dev = torch.device("cuda")
        res["device"] = torch.cuda.get_device_name(dev)
    elif job.get("allow_cpu"):
        dev = torch.device("cpu")
        res["device"] = "cpu"
    else:
        res["device_error"] = "no CUDA device visible to torch %s" % torch.__version__
        return finish(job, res)
    tcfg = dict(job.get("timing", {}))
    flush = None
    if dev.type == "cuda":
        try:
            l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 0) or (64 << 20)
            res["l2_bytes"] = l2
            flush = torch.empty(2 * l2, dtype=torch.int8, device=dev)
            res["clocks"] = smi_clocks(torch, dev)
            res["torch"] = torch.__version__
        except Exception as e:  # a broken driver, no memory: say so, keep the files
            res["setup_error"] = "CUDA setup failed on %s: %s: %s" % (
                res["device"], type(e).__name__, str(e)[:400])
            return finish(job, res)
    for op in job["ops"]:
        res["ops"].append(run_one(torch, mr, dev, op, tcfg, flush))
        finish(job, res)  # after every op: a helper stopped later leaves these
    return finish(job, res)


def finish(job, res):
    tmp = job["output"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, allow_nan=False, default=str)
    os.replace(tmp, job["output"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
