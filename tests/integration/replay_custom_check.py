#!/usr/bin/env python3
"""Checks the references `magpie trace replay` writes for vLLM custom ops
when vLLM is importable (its `vllm._C` registers `_C::rms_norm` and
`_C::rotary_embedding`): each ref's output is what the op computes, worked
out here from the op's definition (RMS norm; the NeoX rotary embedding),
on the tensors the ref itself builds; the tensors the op writes are the
module's own (the inputs stay unmodified, two calls give the same output).

usage: replay_custom_check.py DIR:OP:KIND [DIR:OP:KIND ...]
       OP: the op's name in DIR/replay_summary.json (its first row);
       KIND: rms_norm | rotary_neox
Exit 0 when all hold, 1 otherwise; 77 when vllm._C is not importable.
"""
import importlib.util
import os
import sys

try:
    import torch
    import vllm._C  # noqa: F401  (registers torch.ops._C.*)
except Exception as e:  # noqa: BLE001  (any import failure: skip)
    print("SKIP: vllm._C not importable: %s" % str(e)[:200])
    sys.exit(77)


def load(path):
    spec = importlib.util.spec_from_file_location("ref_%d" % abs(hash(path)), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def rms_norm(args):
    _, x, w, eps = args
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return (y * w.float()).to(x.dtype)


def rotary_neox(args):
    pos, q, k, head, cache, neox = args
    assert neox is True
    half = cache.shape[1] // 2
    cos = cache[pos, :half].float().unsqueeze(1)
    sin = cache[pos, half:].float().unsqueeze(1)

    def rot(x):
        xs = x.float().reshape(x.shape[0], -1, head)
        x1, x2 = xs[..., :half], xs[..., half:2 * half]
        out = torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin, xs[..., 2 * half:]], -1)
        return out.reshape(x.shape).to(x.dtype)
    return rot(q), rot(k)


def check(d, op, kind):
    import json
    with open(os.path.join(d, "replay_summary.json")) as f:
        n = next(o["n"] for o in json.load(f)["ops"] if o["op"] == op)
    mod = load(os.path.join(d, "ref_%d.py" % n))
    torch.manual_seed(0)
    model = mod.Model()
    inputs = mod.get_inputs()
    before = [t.clone() for t in inputs]
    # the arguments as the op sees them: the module's written tensors, then inputs
    it = iter(inputs)
    args = []
    for i, (k, _) in enumerate(mod._ARGS):
        if i in mod._WRITES:
            args.append(getattr(model, "m0_%d" % i).clone())
        else:
            args.append(next(it) if k == "tensor" else mod._VALUES[i])
    want = {"rms_norm": rms_norm, "rotary_neox": rotary_neox}[kind](args)
    want = want if isinstance(want, tuple) else (want,)
    with torch.no_grad():
        got1 = model(*inputs)
        got2 = model(*inputs)
    got1 = got1 if isinstance(got1, tuple) else (got1,)
    got2 = got2 if isinstance(got2, tuple) else (got2,)
    errs = []
    if len(got1) != len(want):
        errs.append("%d outputs, expected %d" % (len(got1), len(want)))
    for i, (g, w) in enumerate(zip(got1, want)):
        # the op's own kernel may round differently from this float32 formula
        if g.shape != w.shape or not torch.allclose(g.float(), w.float(), atol=2e-2, rtol=2e-2):
            errs.append("output %d differs from the formula (max abs %.3g)" % (
                i, (g.float() - w.float()).abs().max().item() if g.shape == w.shape else -1))
    if any(not torch.equal(a, b) for a, b in zip(got1, got2)):
        errs.append("two calls gave different outputs (the written tensors not restored)")
    if any(not torch.equal(a, b) for a, b in zip(inputs, before)):
        errs.append("the inputs were modified")
    print("%s ref_%d.py %s: %s" % (d, n, kind, "; ".join(errs) if errs else
                                   "ok (%d outputs, writes %s)" % (len(got1), mod._WRITES)))
    return not errs


ok = True
for spec in sys.argv[1:]:
    d, kind = spec.rsplit(":", 1)
    d, op = d.split(":", 1)
    ok = check(d, op, kind) and ok
sys.exit(0 if ok else 1)
