"""Warm runners between MCP calls (issue 33), driven by test_mcp_warm.sh.

    python3 mcp_warm.py MAGPIE TMP opencl|torch|http

opencl: PoCL through the C harness: two analyze calls of vadd.cl, the second
    on a warm harness child (no process start, no device open), verdicts as
    on a cold server (MAGPIE_WARM_RUNNERS=0); a compare of examples/kernels/
    opencl with three wrong kernels, warm and cold, the same correctness
    verdicts; a wrong kernel retires the warm child.
torch: the Python runner on the CPU torch venv (MAGPIE_PYTHON): the second
    call of the same problem reports no start or imports and the reference
    from memory; hostile candidates (garbage on stdout, crash, exit, wrong,
    hang then cancel) and the warm runner killed between calls: the server
    answers, each next call gets a fresh runner and the right verdict; a
    compare warm and cold, the same verdicts; no runner left at the end.
http: the streamable HTTP transport, two analyze calls, the second warm.
"""
import http.client
import json
import os
import signal
import subprocess
import sys
import time

MAGPIE, TMP, PART = sys.argv[1], sys.argv[2], sys.argv[3]
SRC = os.environ["MP_SRC"]
FAILS = []


def ok(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what, flush=True)
    return cond


class Stdio:
    def __init__(self, env=None):
        e = dict(os.environ)
        e.update(env or {})
        self.p = subprocess.Popen([MAGPIE, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(os.path.join(TMP, "server.err"), "a"), env=e,
                                  text=True, cwd=TMP)
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "warm", "version": "1"}}})
        self.recv(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.n = 0

    def send(self, m):
        self.p.stdin.write(json.dumps(m) + "\n")
        self.p.stdin.flush()

    def recv(self, rid):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("FAIL: the server is gone")
            m = json.loads(line)
            if m.get("id") == rid:
                return m

    def start(self, tool, args):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": "tools/call",
                   "params": {"name": tool, "arguments": args}})
        return self.n

    def call(self, tool, args):
        r = self.recv(self.start(tool, args))
        return json.loads(r["result"]["content"][0]["text"])

    def close(self):
        self.p.stdin.close()
        return self.p.wait(timeout=120)


def descendants(pid):
    """pids under pid (from /proc's parent links)."""
    par = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    par[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                pass
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c, pp in par.items():
            if pp == p:
                out.append(c)
                todo.append(c)
    return out


def cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def out_of(pid):
    """where pid's stdout goes"""
    try:
        return os.readlink("/proc/%d/fd/1" % pid)
    except OSError:
        return ""


def warm_children(server):
    """the pool's runners: children started with '-' for the job"""
    return [p for p in descendants(server) if cmdline(p)[-2:] == [b"-", b""]]


def proc_of(res, what="timed_process"):
    return (res.get("time_breakdown") or {}).get(what) or {}


def is_warm(pr):
    return pr.get("warm") is True and "start_s" not in pr and "imports_s" not in pr and \
        "device_open_s" not in pr


def is_cold(pr):
    return not pr.get("warm") and "start_s" in pr


def opencl():
    ex = os.path.join(SRC, "examples/kernels/opencl")
    a = {"kernel_path": ex + "/vadd.cl", "kernel_type": "opencl", "reference": ex + "/vadd_ref.cl",
         "size": 200003, "max_time_s": 0.3, "check_performance": False,
         "output_dir": os.path.join(TMP, "r")}
    ids = ["vadd_slow", "vadd", "vadd_chain32", "vadd_offbyone", "vadd_nowrite", "vadd_race"]
    c = {"kernel_paths": ["%s/%s.cl" % (ex, k) for k in ids], "kernel_type": "opencl",
         "reference": ex + "/vadd_ref.cl", "size": 200003, "max_time_s": 0.3,
         "check_performance": False, "output_dir": os.path.join(TMP, "r")}
    cold = Stdio({"MAGPIE_WARM_RUNNERS": "0"})
    ca = cold.call("analyze", a)
    cc = cold.call("compare", c)
    ok(is_cold(proc_of(ca)), "cold server: a fresh harness child %s" % proc_of(ca))
    cold.close()
    s = Stdio()
    r1 = s.call("analyze", a)
    r2 = s.call("analyze", a)
    for r in (r1, r2):
        ok(r["correctness_state"] == ca["correctness_state"] == "SUCCESS",
           "opencl analyze verdict %s (cold %s)" % (r["correctness_state"],
                                                    ca["correctness_state"]))
    ok(is_cold(proc_of(r1, "build_process")), "first call: a fresh child for the build")
    ok(is_warm(proc_of(r1)), "first call's timed job on the build's warm child")
    ok(is_warm(proc_of(r2, "build_process")) and is_warm(proc_of(r2)),
       "second call warm, no start or device open: %s" % r2.get("time_breakdown"))
    corr = []
    for _ in range(2):
        rc = s.call("compare", c)
        corr.append(rc["comparison_metrics"]["correctness"])
    ok(corr[0] == corr[1] == cc["comparison_metrics"]["correctness"] ==
       [True, True, True, False, False, False],
       "compare correctness warm %s, cold %s" % (corr, cc["comparison_metrics"]["correctness"]))
    # the compare had failing kernels: its child retired, the next is fresh
    r3 = s.call("analyze", a)
    ok(r3["correctness_state"] == "SUCCESS" and is_cold(proc_of(r3, "build_process")),
       "after a failed kernel: a fresh child %s" % r3.get("time_breakdown"))
    server = s.p.pid
    ok(s.close() == 0, "server exit")
    ok(not warm_children(server), "no warm child left")


KERNELS = {
    "ref.py": "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
              "    def forward(self, a, b):\n        return a + b\n\n\n"
              "def get_inputs():\n    return [torch.randn(65536), torch.randn(65536)]\n\n\n"
              "def get_init_inputs():\n    return []\n",
    "good.py": "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
               "    def forward(self, a, b):\n        return a + b\n",
    "good2.py": "import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                "    def forward(self, a, b):\n        return torch.add(b, a)\n",
    "wrong.py": "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                "    def forward(self, a, b):\n        return a - b\n",
    "garbage.py": "import os\nimport sys\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                  "    def forward(self, a, b):\n"
                  "        sys.stdout.write('done 0 keep\\nstart 1\\n\\x00\\xff' * 100)\n"
                  "        os.write(1, b'\\xff\\xfe garbage\\n' * 100)\n"
                  "        os.write(2, b'more garbage\\n')\n        return a + b\n",
    "crash.py": "import os\nimport signal\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                "    def forward(self, a, b):\n        os.kill(os.getpid(), signal.SIGSEGV)\n",
    "exit.py": "import os\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
               "    def forward(self, a, b):\n        os._exit(0)\n",
    "hang.py": "import time\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
               "    def forward(self, a, b):\n        time.sleep(100000)\n",
}


def torch_part():
    kd = os.path.join(TMP, "k")
    os.makedirs(kd, exist_ok=True)
    for n, t in KERNELS.items():
        with open(os.path.join(kd, n), "w") as f:
            f.write(t)

    def args(k):
        return {"kernel_path": os.path.join(kd, k), "kernel_type": "pytorch",
                "reference": os.path.join(kd, "ref.py"), "max_time_s": 0.2,
                "check_performance": False, "output_dir": os.path.join(TMP, "r")}
    cmp = {"kernel_paths": [os.path.join(kd, k) for k in ("good.py", "good2.py", "wrong.py")],
           "kernel_type": "pytorch", "reference": os.path.join(kd, "ref.py"), "max_time_s": 0.2,
           "check_performance": False, "output_dir": os.path.join(TMP, "r")}
    cold = Stdio({"MAGPIE_WARM_RUNNERS": "0"})
    cg, cw = cold.call("analyze", args("good.py")), cold.call("analyze", args("wrong.py"))
    cc = cold.call("compare", cmp)
    cold.close()
    ok(cg["correctness_state"] == "SUCCESS" and cw["correctness_state"] == "FAILED",
       "cold verdicts %s %s" % (cg["correctness_state"], cw["correctness_state"]))
    ok(is_cold(proc_of(cg)) and "imports_s" in proc_of(cg), "cold server: a fresh runner")
    s = Stdio()

    def good(warm, what):
        r = s.call("analyze", args("good.py"))
        pr = proc_of(r)
        ok(r["correctness_state"] == "SUCCESS", "%s: good verdict %s %s" %
           (what, r["correctness_state"], r.get("errors")))
        ok(is_warm(pr) if warm else (is_cold(pr) and "imports_s" in pr),
           "%s: %s runner expected: %s" % (what, "a warm" if warm else "a fresh", pr))
        return r
    good(False, "first call")
    r = good(True, "second call")
    seeds = proc_of(r).get("phases", {}).get("seeds", [])
    ok(seeds and all(x["reference_from"] == "memory" for x in seeds),
       "second call: the reference from the warm runner's memory %s" % seeds)
    r = s.call("analyze", args("garbage.py"))
    ok(r["correctness_state"] == "SUCCESS" and is_warm(proc_of(r)),
       "garbage on stdout: verdict %s, warm %s" % (r["correctness_state"], proc_of(r)))
    good(True, "after garbage on stdout")
    # the warm runner killed between calls
    kids = warm_children(s.p.pid)
    ok(len(kids) == 1, "one warm runner %s" % kids)
    for k in kids:
        os.kill(k, signal.SIGKILL)
    good(False, "after the runner was killed")
    for bad, why in (("crash.py", "signal"), ("exit.py", "exit"), ("wrong.py", "mismatch")):
        r = s.call("analyze", args(bad))
        ok(r["correctness_state"] == "FAILED", "%s: verdict %s" % (bad, r["correctness_state"]))
        good(False, "after " + bad)
    # files edited in place between calls: a candidate made wrong is
    # judged as it now is; a reference edited under the same path is run
    # again (its outputs in memory are keyed by the file's bytes)
    with open(os.path.join(kd, "edit.py"), "w") as f:
        f.write(KERNELS["good.py"])
    r = s.call("analyze", args("edit.py"))
    ok(r["correctness_state"] == "SUCCESS" and is_warm(proc_of(r)), "edit.py as written")
    with open(os.path.join(kd, "edit.py"), "w") as f:
        f.write(KERNELS["wrong.py"])
    r = s.call("analyze", args("edit.py"))
    ok(r["correctness_state"] == "FAILED", "edit.py made wrong: %s" % r["correctness_state"])
    with open(os.path.join(kd, "ref2.py"), "w") as f:
        f.write(KERNELS["ref.py"])
    a2 = dict(args("good.py"), reference=os.path.join(kd, "ref2.py"))
    for _ in range(2):
        r = s.call("analyze", a2)
        ok(r["correctness_state"] == "SUCCESS", "good against ref2.py")
    with open(os.path.join(kd, "ref2.py"), "w") as f:
        f.write(KERNELS["ref.py"].replace("return a + b", "return a - b"))
    r = s.call("analyze", a2)
    seeds = proc_of(r).get("phases", {}).get("seeds", [])
    ok(r["correctness_state"] == "FAILED" and is_warm(proc_of(r)) and seeds and
       seeds[0]["reference_from"] == "run",
       "ref2.py edited: the warm runner runs it again: %s %s" % (r["correctness_state"], seeds))
    good(False, "after the edits")
    # a hang: the call is cancelled; its runner goes with it
    rid = s.start("analyze", args("hang.py"))
    end = time.time() + 120
    hung = []
    while time.time() < end and not hung:  # the runner writing the hang's log
        time.sleep(0.5)
        hung = [k for k in warm_children(s.p.pid) if "analyze_hang" in out_of(k)]
    time.sleep(2)
    s.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": rid, "reason": "test"}})
    s.send({"jsonrpc": "2.0", "id": 999, "method": "ping"})
    ok("result" in s.recv(999), "ping after a cancelled hang")
    end = time.time() + 60
    while time.time() < end and any(os.path.exists("/proc/%d" % k) and
                                    cmdline(k) for k in hung):
        time.sleep(0.2)
    ok(hung and not any(cmdline(k) for k in hung), "the hung runner was killed %s" % hung)
    good(False, "after a cancelled hang")
    corr = []
    for _ in range(2):
        rc = s.call("compare", cmp)
        corr.append(rc["comparison_metrics"]["correctness"])
    ok(corr[0] == corr[1] == cc["comparison_metrics"]["correctness"] == [True, True, False],
       "compare correctness warm %s, cold %s" % (corr, cc["comparison_metrics"]["correctness"]))
    server = s.p.pid
    ok(s.close() == 0, "server exit")
    ok(not warm_children(server), "no runner left")


def http_part():
    pf = os.path.join(TMP, "port")
    p = subprocess.Popen([MAGPIE, "mcp", "--transport", "streamable-http", "--port", "0",
                          "--port-file", pf], stdout=subprocess.DEVNULL,
                         stderr=open(os.path.join(TMP, "http.err"), "w"), cwd=TMP)
    HTTP.append(p)
    end = time.time() + 120
    while time.time() < end and not (os.path.exists(pf) and os.path.getsize(pf)):
        time.sleep(0.1)
    port = int(open(pf).read())

    def post(body, sid=None):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if sid:
            h["Mcp-Session-Id"] = sid
        c.request("POST", "/mcp", json.dumps(body), h)
        r = c.getresponse()
        data = r.read().decode()
        sid = r.getheader("Mcp-Session-Id") or sid
        c.close()
        if not data.strip():
            return None, sid  # 202: a notification
        if not data.lstrip().startswith("{"):
            data = [ln[6:] for ln in data.split("\n") if ln.startswith("data: ")][-1]
        return json.loads(data), sid
    _, sid = post({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                              "clientInfo": {"name": "warm", "version": "1"}}})
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
    ex = os.path.join(SRC, "examples/kernels/opencl")
    a = {"kernel_path": ex + "/vadd.cl", "kernel_type": "opencl", "reference": ex + "/vadd_ref.cl",
         "size": 200003, "max_time_s": 0.3, "check_performance": False,
         "output_dir": os.path.join(TMP, "rh")}
    res = []
    for i in range(2):
        m, _ = post({"jsonrpc": "2.0", "id": 2 + i, "method": "tools/call",
                     "params": {"name": "analyze", "arguments": a}}, sid)
        res.append(json.loads(m["result"]["content"][0]["text"]))
    ok(all(r["correctness_state"] == "SUCCESS" for r in res), "http verdicts")
    ok(is_warm(proc_of(res[1], "build_process")) and is_warm(proc_of(res[1])),
       "http: the second call warm %s" % res[1].get("time_breakdown"))
    p.send_signal(signal.SIGTERM)
    ok(p.wait(timeout=120) == 0, "http server exit")
    ok(not warm_children(p.pid), "no warm child left")


HTTP = []


def http_part_guarded():
    """http_part, with its server stopped whatever happens (a stdio server
    ends with this script's end of its stdin; an HTTP one would not)"""
    try:
        http_part()
    finally:
        for p in HTTP:
            if p.poll() is None:
                p.kill()
                p.wait()


{"opencl": opencl, "torch": torch_part, "http": http_part_guarded}[PART]()
print("%s: %s" % (PART, "%d failed" % len(FAILS) if FAILS else "ok"))
sys.exit(1 if FAILS else 0)
