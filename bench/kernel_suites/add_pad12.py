"""add_pad.py with PAD = 12: correct, about 1 % slower (measured by the
fixed-mode run of bench/kernel_eval_speed.sh, which prints the ratio)."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "magpie_bench_add_pad", os.path.join(os.path.dirname(__file__), "add_pad.py"))
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
_mod.PAD = 12
ModelNew = _mod.ModelNew
