"""Runs every ref_<n>.py of a `magpie trace replay` directory once, the way
the analyze runner does (seed, Model(*get_init_inputs()), get_inputs(),
one call under no_grad), on whatever device torch has (MAGPIE_REPLAY_DEVICE
is honoured by the refs). Checks that each input has the recorded shape,
dtype and strides (from the IR or the docstring), and that a custom op's ref
fails with "not importable here" when its package is missing.

Prints one line per ref and a summary; exit 1 when a ref fails for another
reason than an op with no kernel for this device (then: "no kernel here"),
which is expected on a CPU for CUDA-only ops (cuDNN attention, ...).

Usage: replay_refs.py DIR
"""
import ast
import importlib.util
import json
import os
import re
import sys

import torch


def recorded(path):
    """(shapes, strides) of the tensor inputs, from the ref's docstring."""
    doc = ast.get_docstring(ast.parse(open(path).read())) or ""
    dims = re.search(r"^Input Dims: (.*)$", doc, re.M)
    strides = re.search(r"^Input Strides: (.*)$", doc, re.M)
    return (ast.literal_eval(dims.group(1)) if dims else None,
            ast.literal_eval(strides.group(1)) if strides else None)


def flatten_tensors(dims, strides, types):
    """The recorded tensors in argument order (tensor lists flattened)."""
    out = []
    for d, s, t in zip(dims, strides, types):
        if t == "TensorList":
            out.extend(zip(d, s))
        elif t and t not in ("Scalar", "ScalarList", "String") and isinstance(d, tuple):
            out.append((d, s))
    return out


NO_KERNEL = ("could not run", "not implemented for", "no kernel", "not supported on cpu",
             "is only supported on cuda", "only supports cuda", "requires cuda",
             "expected all tensors to be on the same device")


def main():
    d = sys.argv[1]
    summary = json.load(open(os.path.join(d, "replay_summary.json")))
    fails = ok = nokernel = custom = 0
    for op in summary["ops"]:
        if not op["rebuilt"]:
            continue
        path = os.path.join(d, "ref_%d.py" % op["n"])
        name = "ref_%d.py" % op["n"]
        try:
            spec = importlib.util.spec_from_file_location("rr_%d" % op["n"], path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
        except RuntimeError as e:
            if "not importable here" in str(e):
                print("%s %s: custom op, as expected: %s" % (name, op["op"], str(e)[:160]))
                custom += 1
                continue
            print("FAIL %s %s: import: %s" % (name, op["op"], e))
            fails += 1
            continue
        torch.manual_seed(42)
        model = mod.Model(*mod.get_init_inputs())
        inputs = mod.get_inputs()
        # inputs and module buffers together are the recorded tensors
        dims, strides = recorded(path)
        types = ast.literal_eval(op.get("types", "None") or "None") if "types" in op else None
        bufs = [b for n, b in model.named_buffers() if not n.startswith("m0_")]
        got = [(tuple(t.shape), tuple(t.stride())) for t in bufs + [
            x for x in inputs if isinstance(x, torch.Tensor)]]
        if dims is not None and strides is not None:
            want_types = ast.literal_eval(re.search(
                r"^Input type: (.*)$", ast.get_docstring(ast.parse(open(path).read())),
                re.M).group(1))
            want = flatten_tensors(dims, strides, want_types)
            if sorted(map(str, got)) != sorted(map(str, want)):
                print("FAIL %s %s: tensors %s, recorded %s" % (name, op["op"], got, want))
                fails += 1
                continue
        try:
            with torch.no_grad():
                out = model(*inputs)
        except Exception as e:
            msg = str(e).lower()
            if any(k in msg for k in NO_KERNEL):
                print("%s %s: no kernel here (%s: %s)" % (name, op["op"], type(e).__name__,
                                                        str(e).splitlines()[0][:160]))
                nokernel += 1
                continue
            print("FAIL %s %s: call: %s: %s" % (name, op["op"], type(e).__name__, e))
            fails += 1
            continue
        shape = tuple(out.shape) if hasattr(out, "shape") else type(out).__name__
        print("%s %s: ok on %s, output %s" % (name, op["op"], mod.DEVICE, shape))
        ok += 1
    print("refs: %d ran, %d without a kernel on this device, %d custom ops not importable, "
          "%d failed" % (ok, nokernel, custom, fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
