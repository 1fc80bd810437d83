#!/usr/bin/env python3
"""Cold vs warm wall time of MCP analyze calls on the CPU path (issue 33,
docs/kernel-timing.md "Warm runners").

    python3 bench/kernel_warm.py [--magpie build/release/magpie] [-n 10]
        [--python ~/.cache/magpie/torch-venv/bin/python] [--max-time 0.2]

Two `magpie mcp` stdio servers at once, one with the warm runner pool
(the default) and one without (MAGPIE_WARM_RUNNERS=0); the same analyze
call goes to each in turn, n times, so drift and other load fall on both
alike. Problems: vadd.cl on the OpenCL ICD (PoCL) at 2000003 elements, and
a KernelBench a + b on 1M floats on CPU PyTorch (skipped without torch).
The first call of each server is dropped (the warm server's first call is
cold too). Prints per problem the median wall per call, its spread
(min..max and the interquartile range) for each server, and the ratio
cold / warm of the medians; also the median of the timed process's own
figures (start, imports or device open), which the warm calls do not have.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)


class Server:
    def __init__(self, magpie, env, cwd):
        e = dict(os.environ)
        e.update(env)
        self.p = subprocess.Popen([magpie, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=e, text=True, cwd=cwd)
        self.n = 0
        self.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0",
                                       "method": "notifications/initialized"}) + "\n")

    def rpc(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            m = json.loads(self.p.stdout.readline())
            if m.get("id") == self.n:
                return m

    def analyze(self, args):
        t0 = time.perf_counter()
        m = self.rpc("tools/call", {"name": "analyze", "arguments": args})
        wall = time.perf_counter() - t0
        return wall, json.loads(m["result"]["content"][0]["text"])

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def spread(xs):
    q = statistics.quantiles(xs, n=4) if len(xs) > 1 else [xs[0]] * 3
    return "median %.3f s, min %.3f, max %.3f, IQR %.3f..%.3f" % (
        statistics.median(xs), min(xs), max(xs), q[0], q[2])


def proc_cost(res):
    tp = (res.get("time_breakdown") or {}).get("timed_process") or {}
    return sum(tp.get(k, 0) for k in ("start_s", "imports_s", "device_open_s"))


def bench(name, args, magpie, n, tmp, env):
    warm = Server(magpie, env, tmp)
    cold = Server(magpie, dict(env, MAGPIE_WARM_RUNNERS="0"), tmp)
    w, c, wp, cp, verdicts = [], [], [], [], set()
    for i in range(n + 1):
        for srv, walls, pc in ((warm, w, wp), (cold, c, cp)):
            t, r = srv.analyze(args)
            verdicts.add((r.get("correctness_state"), r.get("latency_state")))
            if i > 0:
                walls.append(t)
                pc.append(proc_cost(r))
    warm.close()
    cold.close()
    print("%s (%d calls each, verdicts %s)" % (name, n, sorted(verdicts)))
    print("  cold: %s; start+imports/open median %.3f s" % (spread(c), statistics.median(cp)))
    print("  warm: %s; start+imports/open median %.3f s" % (spread(w), statistics.median(wp)))
    print("  ratio cold/warm of the medians: %.2f" % (statistics.median(c) / statistics.median(w)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--magpie", default=os.path.join(SRC, "build/release/magpie"))
    ap.add_argument("-n", type=int, default=10)
    ap.add_argument("--python", default=os.path.expanduser("~/.cache/magpie/torch-venv/bin/python"))
    ap.add_argument("--max-time", type=float, default=0.2)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="kwarm.")
    env = {"MAGPIE_RUNTIME_DIR": os.path.join(SRC, "runtime"),
           "ASAN_OPTIONS": "detect_leaks=0"}
    ex = os.path.join(SRC, "examples/kernels/opencl")
    bench("opencl vadd.cl (PoCL, 2000003 elements)",
          {"kernel_path": ex + "/vadd.cl", "kernel_type": "opencl",
           "reference": ex + "/vadd_ref.cl", "size": 2000003, "max_time_s": a.max_time,
           "check_performance": False, "output_dir": os.path.join(tmp, "r")},
          a.magpie, a.n, tmp, env)
    if subprocess.run([a.python, "-c", "import torch"], capture_output=True).returncode != 0:
        print("pytorch: skipped (no torch for %s)" % a.python)
        return 0
    kd = os.path.join(tmp, "k")
    os.makedirs(kd)
    with open(os.path.join(kd, "ref.py"), "w") as f:
        f.write("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                "    def forward(self, a, b):\n        return a + b\n\n\n"
                "def get_inputs():\n    return [torch.randn(1 << 20), torch.randn(1 << 20)]\n\n\n"
                "def get_init_inputs():\n    return []\n")
    with open(os.path.join(kd, "cand.py"), "w") as f:
        f.write("import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                "    def forward(self, a, b):\n        return torch.add(a, b)\n")
    bench("pytorch a + b (CPU torch, 1M floats)",
          {"kernel_path": os.path.join(kd, "cand.py"), "kernel_type": "pytorch",
           "reference": os.path.join(kd, "ref.py"), "max_time_s": a.max_time,
           "check_performance": False, "output_dir": os.path.join(tmp, "r")},
          a.magpie, a.n, tmp, dict(env, MAGPIE_PYTHON=a.python))
    return 0


if __name__ == "__main__":
    sys.exit(main())
