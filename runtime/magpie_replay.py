"""Times the references `magpie trace replay --run` wrote (docs/replay.md).

Usage: magpie_replay.py JOB.json. The job names the ref_<n>.py files and
the output path; the result is one JSON object:
  {"device": ..., "device_error": ..., "ops": [{"n", "ok", "error",
   "samples_ms", "batch", "cuda_graph", "stop_reason", "profiler_us",
   "kernels"}]}

Timing is the analyze runner's own (magpie_runner.Timer and Sampler beside
this file): CUDA events around a batch of calls, captured in a CUDA graph
when a call is short, so what is timed is the kernels and not Python's
launch path; L2 flushed between samples unless the job turns it off. A
second measurement reads the kernels of 20 calls from the profiler's kernel
records (names and device time per call), which is how the trace itself
timed them.

Without a CUDA device nothing is timed ("device_error"), unless the job
sets allow_cpu (plumbing tests): then the calls run on the CPU and the
figures mean nothing for the GPU.
"""
import importlib.util
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(mod)
    return mod


def profile_kernels(torch, fn, calls=20):
    """Kernel names (in launch order of one call) and device microseconds
    per call, from the profiler's kernel records."""
    from torch.profiler import ProfilerActivity, profile
    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    names, total = [], 0.0
    for ev in prof.events():
        dev = getattr(ev, "device_type", None)
        if dev is None or "CUDA" not in str(dev):
            continue
        total += ev.time_range.elapsed_us()
        if ev.name not in names:
            names.append(ev.name)
    return names, total / calls


def run_one(torch, mr, dev, op, tcfg):
    out = {"n": op["n"], "ok": False}
    try:
        mod = load(op["ref"], "magpie_replay_ref_%d" % op["n"])
        torch.manual_seed(42)
        model = mod.Model(*mod.get_init_inputs())
        if hasattr(model, "to"):
            model = model.to(dev).eval()
        if hasattr(model, "restore"):
            model.restore = False  # time the op alone, not the restoring copy
        inputs = [x.to(dev) if isinstance(x, torch.Tensor) else x for x in mod.get_inputs()]

        def call():
            with torch.no_grad():
                model(*inputs)

        call()
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
        out.update(samples_ms=smp.samples, batch=smp.batch, cuda_graph=smp.graph is not None,
                   stop_reason=smp.reason + ("; " + smp.graph_note if smp.graph_note else ""))
        if dev.type == "cuda":
            names, us = profile_kernels(torch, call)
            out.update(kernels=names, profiler_us=us)
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
    for op in job["ops"]:
        res["ops"].append(run_one(torch, mr, dev, op, tcfg))
    return finish(job, res)


def finish(job, res):
    tmp = job["output"] + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, allow_nan=False, default=str)
    os.replace(tmp, job["output"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
