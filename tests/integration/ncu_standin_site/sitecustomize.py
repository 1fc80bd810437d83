"""Part of the ncu stand-in (../ncu_standin.py): in a process it runs, the
NVTX push/pop calls of torch.cuda.nvtx are written to NCU_STANDIN_EVENTS
(`push NAME` / `pop`) and then passed on to torch's own functions, as ncu's
NVTX injection sees them. Only active when the stand-in set that variable."""
import os

if os.environ.get("NCU_STANDIN_EVENTS"):
    try:
        import torch.cuda.nvtx as _nvtx
    except ImportError:
        _nvtx = None
    if _nvtx is not None:
        _push, _pop = _nvtx.range_push, _nvtx.range_pop

        def _log(line):
            with open(os.environ["NCU_STANDIN_EVENTS"], "a") as f:
                f.write(line + "\n")

        def range_push(msg):
            _log("push " + msg)
            return _push(msg)

        def range_pop():
            _log("pop")
            return _pop()

        _nvtx.range_push, _nvtx.range_pop = range_push, range_pop
