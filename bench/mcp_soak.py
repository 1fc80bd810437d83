#!/usr/bin/env python3
"""Soak test of `magpie mcp` (issue 27): one streamable-HTTP server with 16
client threads (one legacy session each) and one stdio server with one
client make N tool calls in all (default 20000): cheap real tools, bad
arguments, a tool failure, calls cancelled while they run or wait, and
bursts that overflow the wait queue. Both server processes are sampled
every second (RSS, open fds, threads, child processes and zombies among
them); at the end the script checks that nothing grew and nothing was left
behind. Python 3 standard library only; builds nothing.

    python3 bench/mcp_soak.py [MAGPIE] [--calls N] [--seed S] [--out DIR]
    bash bench/mcp_soak.sh build/release/magpie --calls 2000     # a quick one

Exit status 0 when every check passed, 1 otherwise (what failed is printed),
2 when the servers could not be started. bench/README.md ("mcp_soak") has
the method, the thresholds and why they are what they are, and results.
"""
import argparse
import bisect
import http.client
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PROTO = "2025-06-18"

# --------------------------------------------------------------- call mix
# kind -> (weight, expected outcome). The weights are per 100 calls.
#   ok: a result with isError false; tool_error: a result with isError true
#   from the tool itself; bad_args: isError true from the server's argument
#   check, or (unknown tool) JSON-RPC -32602; cancel: cancelled while it runs
#   (or waits), so no answer, unless it ended before the cancel took.
MIX = [
    ("list_benchmark_images", 12, "ok"),
    ("list_benchmark_results", 11, "ok"),
    ("create_kernel_config", 11, "ok"),
    ("discover_kernels", 10, "ok"),
    ("trace_report", 10, "ok"),            # small bundled trace (86 KB gz)
    ("find_kernel_sources", 10, "ok"),      # kernel_names only: classification
    ("hardware_spec", 4, "ok"),             # runs the GPU/toolchain probes (~0.3 s)
    ("tool_error", 4, "tool_error"),        # trace_report on a missing file
    ("bad_unknown_param", 5, "bad_args"),
    ("bad_wrong_type", 5, "bad_args"),
    ("bad_missing_required", 5, "bad_args"),
    ("bad_unknown_tool", 4, "bad_args"),
    ("cancel_trace", 5, "cancel"),          # trace_report of the 25.9 MB Mixtral trace
    ("cancel_sleep", 4, "cancel"),          # analyze whose testcase sleeps ~7 days
]
EXPECT = {k: e for k, _, e in MIX}
EXPECT["burst"] = "ok"  # list_benchmark_images sent in bursts on stdio: ok or busy
CUM = []
_acc = 0
for _k, _w, _e in MIX:
    _acc += _w
    CUM.append(_acc)

OUTCOMES = ["ok", "tool_error", "bad_args", "busy", "cancelled", "cancel_late", "lost",
            "cancel_hung", "http_error", "unexpected"]


def kind_of(seed, i):
    r = random.Random(seed * 1000003 + i)
    return MIX[bisect.bisect_right(CUM, r.randrange(_acc))][0], r


class Ctx:
    def __init__(self, a, work):
        self.a = a
        self.work = work
        # cancel_sleep's testcase is `sleep 6PPPPP.IIIIII` (P: this script's
        # pid, I: the call): found in /proc by its command line, per call
        self.nonce = "6%05d." % (os.getpid() % 100000)
        self.sleep_stats = {"running_at_cancel": 0, "not_started_at_cancel": 0,
                            "left_after_cancel": 0}
        self.small_trace = os.path.join(REPO, "tests/fixtures/traces/h200_train/train_plain.json.gz")
        self.big_trace = os.path.join(REPO, "examples/traces/serving/mixtral_shape_l8_bs16_p256_d12.json.gz")
        self.kernels = os.path.join(REPO, "examples/kernels")
        self.empty = os.path.join(work, "empty-results")
        os.makedirs(self.empty, exist_ok=True)
        self.kpy = os.path.join(work, "kernel", "k.py")
        os.makedirs(os.path.dirname(self.kpy), exist_ok=True)
        with open(self.kpy, "w") as f:
            f.write("# stand-in kernel for the soak's analyze calls\n")
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.gate_at = None     # calls stop being handed out here until a checkpoint is taken
        self.next_i = 0
        self.results = []       # (i, transport, kind, outcome, latency_s or None)
        self.done = {"http": 0, "stdio": 0}
        self.t0 = time.monotonic()

    def claim(self, k=1):
        """The next k call indices (fewer at a checkpoint or the end), None
        when all are handed out; waits while a checkpoint is pending."""
        with self.cond:
            while self.gate_at is not None and self.gate_at <= self.next_i < self.a.calls:
                self.cond.wait()
            if self.next_i >= self.a.calls:
                return None
            i = self.next_i
            hi = min(self.a.calls, i + k)
            if self.gate_at is not None:
                hi = min(hi, self.gate_at)
            self.next_i = hi
            return range(i, hi)

    def open_gate(self, at):
        with self.cond:
            self.gate_at = at
            self.cond.notify_all()

    def record(self, i, transport, kind, outcome, lat):
        with self.lock:
            self.results.append((i, transport, kind, outcome, lat))
            self.done[transport] += 1

    def ndone(self):
        with self.lock:
            return self.done["http"] + self.done["stdio"], dict(self.done)

    def outdir(self, i):
        return os.path.join(self.work, "out", "c%d" % i)

    def request(self, i, kind, r):
        """(tool name, arguments, with progress token?) of call i."""
        if kind == "list_benchmark_images" or kind == "burst":
            return "list_benchmark_images", ({} if r.random() < 0.5 else {"framework": "vllm"}), False
        if kind == "list_benchmark_results":
            return "list_benchmark_results", {"output_dir": self.empty, "limit": 5}, False
        if kind == "create_kernel_config":
            return "create_kernel_config", {"kernel_id": "k%d" % i, "kernel_path": self.kpy,
                                            "testcase_command": "true", "kernel_type": "pytorch"}, False
        if kind == "discover_kernels":
            return "discover_kernels", {"project_path": self.kernels, "kernel_type": "all"}, False
        if kind == "trace_report":
            return "trace_report", {"trace_path": self.small_trace, "output_dir": self.outdir(i)}, \
                r.random() < 0.5
        if kind == "find_kernel_sources":
            return "find_kernel_sources", {"kernel_names": [
                "ampere_sgemm_128x64_nn", "void at::native::vectorized_elementwise_kernel<4>",
                "_ZN7cutlass6KernelI%dEEvT_" % (i % 7), "triton_poi_fused_add_%d" % (i % 13)]}, False
        if kind == "hardware_spec":
            return "hardware_spec", {} if r.random() < 0.7 else {"include_all": True}, False
        if kind == "tool_error":
            return "trace_report", {"trace_path": os.path.join(self.work, "missing-%d.json" % i),
                                    "output_dir": self.outdir(i)}, False
        if kind == "bad_unknown_param":
            return r.choice(["hardware_spec", "list_benchmark_images", "trace_report"]), \
                {"no_such_parameter": i}, False
        if kind == "bad_wrong_type":
            return r.choice([("hardware_spec", {"device_id": "zero"}),
                             ("list_benchmark_results", {"limit": "many"}),
                             ("find_kernel_sources", {"kernel_names": "not-a-list"})]) + (False,)
        if kind == "bad_missing_required":
            return r.choice([("trace_report", {"output_dir": self.outdir(i)}),
                             ("create_kernel_config", {"kernel_id": "x"}),
                             ("discover_kernels", {})]) + (False,)
        if kind == "bad_unknown_tool":
            return "no_such_tool_%d" % (i % 5), {}, False
        if kind == "cancel_trace":
            return "trace_report", {"trace_path": self.big_trace, "output_dir": self.outdir(i)}, True
        if kind == "cancel_sleep":
            return "analyze", {"kernel_path": self.kpy, "kernel_type": "pytorch",
                               "testcase_command": "sleep %s" % self.sleep_arg(i),
                               "check_performance": False, "output_dir": self.outdir(i)}, True
        raise ValueError(kind)

    def sleep_arg(self, i):
        return "%s%06d" % (self.nonce, i)

    def sleep_running(self, i):
        return bool(scan_cmd(("sleep\0%s" % self.sleep_arg(i)).encode()))

    def note_sleep(self, key):
        with self.lock:
            self.sleep_stats[key] += 1

    def cancel_delay(self, kind, r):
        # after the request is out: long enough that most calls have started
        # (some are still waiting for a slot, some trace reports finish first)
        return r.uniform(0.02, 0.25) if kind == "cancel_trace" else r.uniform(0.05, 0.6)


def classify(kind, msg):
    """Outcome of an answered call from its JSON-RPC response."""
    if "error" in msg:
        e = msg["error"]
        if e.get("code") == -32000 and "busy" in e.get("message", ""):
            return "busy"
        if e.get("code") == -32602 and kind == "bad_unknown_tool":
            return "bad_args"
        return "unexpected"
    res = msg.get("result")
    if not isinstance(res, dict) or not isinstance(res.get("content"), list):
        return "unexpected"
    exp = EXPECT[kind]
    if res.get("isError"):
        if exp in ("bad_args", "tool_error"):
            return exp
        return "unexpected"
    if exp in ("ok", "cancel"):
        return "ok" if exp == "ok" else "cancel_late"
    return "unexpected"


def rpc(i, name, args, progress):
    p = {"name": name, "arguments": args}
    if progress:
        p["_meta"] = {"progressToken": "p%d" % i}
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": p}


# --------------------------------------------------------------- HTTP client
class HttpClient(threading.Thread):
    def __init__(self, ctx, port, n):
        super().__init__(daemon=True)
        self.ctx, self.port, self.n = ctx, port, n
        self.sid = None
        self.conn = None
        self.errors = []

    def headers(self, sse):
        h = {"Content-Type": "application/json", "MCP-Protocol-Version": PROTO,
             "Accept": "application/json, text/event-stream" if sse else "application/json"}
        if self.sid:
            h["Mcp-Session-Id"] = self.sid
        return h

    def connect(self):
        if self.conn:
            self.conn.close()
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.ctx.a.call_timeout)

    def post(self, conn, body, sse):
        conn.request("POST", "/mcp", json.dumps(body).encode(), self.headers(sse))

    def read(self, conn):
        r = conn.getresponse()
        data = r.read()
        return r.status, r.getheader("Content-Type") or "", r.getheader("Mcp-Session-Id"), data

    def open_session(self):
        self.connect()
        init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": PROTO, "capabilities": {},
                           "clientInfo": {"name": "mcp_soak-%d" % self.n, "version": "1"}}}
        self.post(self.conn, init, False)
        st, _, sid, data = self.read(self.conn)
        if st != 200 or not sid or json.loads(data)["result"]["protocolVersion"] != PROTO:
            raise RuntimeError("initialize: %d %r" % (st, data[:200]))
        self.sid = sid
        self.post(self.conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, False)
        st, _, _, _ = self.read(self.conn)
        if st != 202:
            raise RuntimeError("notifications/initialized: %d" % st)

    def send_cancel(self, i):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            h = self.headers(False)
            h["Connection"] = "close"
            c.request("POST", "/mcp", json.dumps({
                "jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": i, "reason": "mcp_soak"}}).encode(), h)
            r = c.getresponse()
            r.read()
            return r.status
        finally:
            c.close()

    def one(self, i):
        ctx = self.ctx
        kind, r = kind_of(ctx.a.seed, i)
        name, args, prog = ctx.request(i, kind, r)
        sse = r.random() < 0.5
        t0 = time.monotonic()
        try:
            self.post(self.conn, rpc(i, name, args, prog), sse)
            cancelled = False
            if EXPECT[kind] == "cancel":
                time.sleep(ctx.cancel_delay(kind, r))
                if kind == "cancel_sleep":
                    ctx.note_sleep("running_at_cancel" if ctx.sleep_running(i) else
                                   "not_started_at_cancel")
                st = self.send_cancel(i)
                cancelled = True
                if st != 202:
                    self.errors.append("notifications/cancelled answered %d" % st)
            st, ctype, _, data = self.read(self.conn)
        except (OSError, http.client.HTTPException) as e:
            # no answer: a timeout, or the connection was closed
            ctx.record(i, "http", kind, "cancel_hung" if EXPECT[kind] == "cancel" else "lost", None)
            self.errors.append("call %d (%s): %s: %s" % (i, kind, type(e).__name__, e))
            self.connect()
            return
        lat = time.monotonic() - t0
        if st == 202 and not data:
            out = "cancelled" if cancelled else "lost"
        elif st != 200:
            out = "http_error"
            self.errors.append("call %d (%s): HTTP %d %r" % (i, kind, st, data[:200]))
        else:
            msgs = []
            text = data.decode("utf-8", "replace")
            try:
                if ctype.startswith("text/event-stream"):
                    for ln in text.split("\n"):
                        if ln.startswith("data:"):
                            msgs.append(json.loads(ln[5:]))
                else:
                    msgs.append(json.loads(text))
                resp = [m for m in msgs if m.get("id") == i]
            except (ValueError, AttributeError):
                resp = [{"not JSON-RPC": text[:300]}]
            if resp:
                out = classify(kind, resp[0])
                if out == "unexpected":
                    self.errors.append("call %d (%s): %s" % (i, kind, json.dumps(resp[0])[:300]))
            else:  # an SSE stream that ended without the result
                out = "cancelled" if cancelled else "lost"
        ctx.record(i, "http", kind, out, lat if out not in ("cancelled", "lost") else None)
        if out == "cancelled" and kind == "cancel_sleep" and ctx.sleep_running(i):
            # the server ends the request only after the worker's tree is reaped
            ctx.note_sleep("left_after_cancel")
            self.errors.append("call %d: its testcase still runs after the cancellation ended" % i)
        if out != "cancelled":  # a cancelled worker may still be writing: removed at the end
            shutil.rmtree(ctx.outdir(i), ignore_errors=True)

    def run(self):
        try:
            while True:
                rg = self.ctx.claim()
                if rg is None:
                    break
                self.one(rg[0])
        except Exception as e:  # a bug of the client: reported, counted as lost below
            self.errors.append("client %d died: %r" % (self.n, e))

    def close_session(self):
        try:
            self.conn.request("DELETE", "/mcp", headers=self.headers(False))
            r = self.conn.getresponse()
            r.read()
            st = r.status
        except (OSError, http.client.HTTPException) as e:
            st = str(e)
        self.conn.close()
        return st


# --------------------------------------------------------------- stdio client
class StdioClient:
    def __init__(self, ctx, proc):
        self.ctx, self.p = ctx, proc
        self.wlock = threading.Lock()
        self.slots = threading.Semaphore(ctx.a.stdio_inflight)
        self.pending = {}   # id -> [kind, t0, holds_slot, cancel_sent]
        self.plock = threading.Lock()
        self.late = []      # answers to ids no longer pending
        self.notifications = 0
        self.errors = []
        self.reader = threading.Thread(target=self.read_loop, daemon=True)
        self.timers = []
        self.init_done = threading.Event()

    def send(self, m):
        b = (json.dumps(m) + "\n").encode()
        with self.wlock:
            self.p.stdin.write(b)
            self.p.stdin.flush()

    def read_loop(self):
        for ln in self.p.stdout:
            try:
                m = json.loads(ln)
            except ValueError:
                self.errors.append("stdout line that is not JSON: %r" % ln[:200])
                continue
            if "id" not in m:
                self.notifications += 1
                continue
            if m["id"] == 0:
                self.init_done.set()
                continue
            i = m["id"]
            with self.plock:
                ent = self.pending.pop(i, None)
            if ent is None:
                self.late.append(m)
                continue
            kind, t0, slot, cancel_sent = ent
            out = classify(kind, m)
            if out == "unexpected":
                self.errors.append("call %d (%s): %s" % (i, kind, json.dumps(m)[:300]))
            self.ctx.record(i, "stdio", kind, out, time.monotonic() - t0)
            shutil.rmtree(self.ctx.outdir(i), ignore_errors=True)
            if slot:
                self.slots.release()

    def start(self):
        self.reader.start()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": PROTO, "capabilities": {},
                              "clientInfo": {"name": "mcp_soak-stdio", "version": "1"}}})
        if not self.init_done.wait(60):
            raise RuntimeError("stdio initialize not answered")
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def cancel_later(self, i, delay):
        def fire():
            with self.plock:
                ent = self.pending.get(i)
                if ent is None:
                    return  # answered before the cancel was due: cancel_late
                ent[3] = True
            if ent[0] == "cancel_sleep":
                self.ctx.note_sleep("running_at_cancel" if self.ctx.sleep_running(i) else
                                    "not_started_at_cancel")
            try:
                self.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": i, "reason": "mcp_soak"}})
            except OSError as e:  # the server is gone: reported by the main thread
                self.errors.append("cancel of %d: %s" % (i, e))
            # its slot is free once the cancel is out (no answer will come)
            with self.plock:
                ent = self.pending.get(i)
                hold = ent is not None and ent[2]
                if hold:
                    ent[2] = False
            if hold:
                self.slots.release()
        t = threading.Timer(delay, fire)
        t.daemon = True
        t.start()
        self.timers.append(t)

    def issue(self, i, kind, r, slot):
        name, args, prog = self.ctx.request(i, kind, r)
        with self.plock:
            self.pending[i] = [kind, time.monotonic(), slot, False]
        self.send(rpc(i, name, args, prog))
        if EXPECT[kind] == "cancel":
            self.cancel_later(i, self.ctx.cancel_delay(kind, r))

    def run(self):
        a = self.ctx.a
        next_burst = a.burst_every
        try:
            while True:
                self.slots.acquire()
                with self.ctx.lock:
                    due = a.burst > 0 and self.ctx.next_i >= next_burst
                if due:
                    next_burst += a.burst_every
                    rg = self.ctx.claim(a.burst)
                    if rg is None:
                        self.slots.release()
                        break
                    for i in rg:
                        self.issue(i, "burst", random.Random(i), False)
                rg = self.ctx.claim()
                if rg is None:
                    self.slots.release()
                    break
                i = rg[0]
                kind, r = kind_of(a.seed, i)
                self.issue(i, kind, r, True)
        except Exception as e:
            self.errors.append("stdio client died: %r" % e)

    def finish(self, deadline):
        """Waits for every answer that must come; then the cancelled ids
        that got none are 'cancelled'."""
        while time.monotonic() < deadline and self.p.poll() is None:
            with self.plock:
                waiting = [i for i, e in self.pending.items() if not e[3]]
            if not waiting:
                break
            time.sleep(0.1)
        with self.plock:
            left = dict(self.pending)
            self.pending.clear()
        for i, (kind, t0, slot, cancel_sent) in left.items():
            if cancel_sent:
                self.ctx.record(i, "stdio", kind, "cancelled", None)
            else:
                self.ctx.record(i, "stdio", kind, "lost", None)
                self.errors.append("call %d (%s): no answer" % (i, kind))
        return left


# --------------------------------------------------------------- sampling
def read_status(pid):
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for ln in f:
            k, _, v = ln.partition(":")
            if k in ("VmRSS", "Threads"):
                out[k] = int(v.split()[0])
    return out


def children(pid):
    kids = set()
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            try:
                with open("/proc/%d/task/%s/children" % (pid, t)) as f:
                    kids.update(int(x) for x in f.read().split())
            except OSError:
                pass
    except OSError:
        pass
    return sorted(kids)


def proc_state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None


def sample(pid):
    st = read_status(pid)
    kids = children(pid)
    return {"rss_kib": st.get("VmRSS", 0), "threads": st.get("Threads", 0),
            "fds": len(os.listdir("/proc/%d/fd" % pid)), "children": len(kids),
            "zombies": sum(1 for c in kids if proc_state(c) == "Z")}


def live_workers(pid):
    """Children of pid that are tool workers and not zombies."""
    n = 0
    for c in children(pid):
        try:
            with open("/proc/%d/cmdline" % c, "rb") as f:
                if b"\0--worker\0" in f.read() and proc_state(c) != "Z":
                    n += 1
        except OSError:
            pass
    return n


class WorkerWatch(threading.Thread):
    """Peak of live tool workers per server, every 20 ms (the 1-s samples
    would miss short peaks): checked against --max-calls and, for the one
    stdio session, --max-calls-per-session."""
    def __init__(self, procs):
        super().__init__(daemon=True)
        self.procs = procs
        self.peak = {n: 0 for n in procs}
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(0.02):
            for n, p in self.procs.items():
                self.peak[n] = max(self.peak[n], live_workers(p.pid))


class Sampler(threading.Thread):
    def __init__(self, ctx, procs, period):
        super().__init__(daemon=True)
        self.ctx, self.procs, self.period = ctx, procs, period
        self.rows = []
        self.phase = "idle"
        self.stop = threading.Event()
        self.lock = threading.Lock()

    def take(self):
        total, per = self.ctx.ndone()
        row = {"t": round(time.monotonic() - self.ctx.t0, 3), "phase": self.phase, "calls_done": total}
        for name, p in self.procs.items():
            try:
                s = sample(p.pid)
            except OSError:
                continue
            s["own_done"] = per[name]
            row[name] = s
        with self.lock:
            self.rows.append(row)
        return row

    def run(self):
        while not self.stop.wait(self.period):
            self.take()


# --------------------------------------------------------------- analysis
def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(-(-q * len(xs) // 100)) - 1))  # nearest rank
    return xs[k]


def slope(points):
    """Least-squares slope of (x, y) points."""
    n = len(points)
    if n < 3:
        return None
    mx = sum(p[0] for p in points) / n
    my = sum(p[1] for p in points) / n
    sxx = sum((p[0] - mx) ** 2 for p in points)
    if sxx == 0:
        return None
    return sum((p[0] - mx) * (p[1] - my) for p in points) / sxx


def scan_cmd(needle):
    """Processes anywhere whose command line contains needle (bytes)."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                if needle in f.read():
                    found.append(int(d))
        except OSError:
            pass
    return found


def sha256(path):
    import hashlib
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("magpie", nargs="?", default=os.path.join(REPO, "build/release/magpie"))
    ap.add_argument("--calls", type=int, default=20000, help="tool calls in all (default 20000)")
    ap.add_argument("--http-clients", type=int, default=16)
    ap.add_argument("--stdio-inflight", type=int, default=8,
                    help="calls the stdio client keeps outstanding (default 8 = the per-session limit)")
    ap.add_argument("--burst", type=int, default=96,
                    help="list_benchmark_images calls the stdio client sends at once (default 96)")
    ap.add_argument("--burst-every", type=int, default=2500, help="calls between bursts (default 2500)")
    ap.add_argument("--seed", type=int, default=27)
    ap.add_argument("--period", type=float, default=1.0, help="sampling period, s (default 1)")
    ap.add_argument("--settle", type=float, default=3.0,
                    help="quiet seconds before a checkpoint or the end sample (default 3)")
    ap.add_argument("--call-timeout", type=float, default=300.0,
                    help="an answer later than this counts as lost (default 300 s)")
    ap.add_argument("--warmup", type=float, default=0.10, help="warm-up fraction of the calls (default 0.10)")
    ap.add_argument("--fd-tol", type=int, default=0,
                    help="fds allowed at the end above the warm-up checkpoint (default 0)")
    ap.add_argument("--thread-tol", type=int, default=0,
                    help="threads allowed at the end above the warm-up checkpoint (default 0)")
    ap.add_argument("--rss-growth-kib", type=int, default=1024,
                    help="allowed RSS growth from the 25%% checkpoint to the end, KiB (default 1024)")
    ap.add_argument("--rss-slope-kib", type=float, default=128.0,
                    help="allowed RSS slope over the second half, KiB per 1000 calls (default 128)")
    ap.add_argument("--out", default=None, help="result directory (default $BENCH_DIR/mcp_soak/<UTC stamp>)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    a = ap.parse_args()

    magpie = os.path.abspath(a.magpie)
    if not os.access(magpie, os.X_OK):
        print("mcp_soak: %s is not an executable (build it: cmake --preset release && "
              "cmake --build --preset release)" % magpie, file=sys.stderr)
        return 2
    exe_sum = sha256(magpie)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    out = a.out or os.path.join(os.environ.get("BENCH_DIR", "/tmp/magpie-bench"), "mcp_soak", stamp)
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="mcp-soak-")
    ctx = Ctx(a, work)
    srv_tmp = {n: os.path.join(work, "tmp-" + n) for n in ("http", "stdio")}
    for d in srv_tmp.values():
        os.makedirs(d)

    def env(name):
        e = dict(os.environ)
        e["TMPDIR"] = srv_tmp[name]                  # the servers' call files live here
        e["XDG_CACHE_HOME"] = os.path.join(work, "cache")
        e.pop("MAGPIE_MCP_TOKEN", None)
        return e

    pf = os.path.join(work, "port")
    logs = {n: open(os.path.join(out, "server-%s.log" % n), "wb") for n in ("http", "stdio")}
    hp = subprocess.Popen([magpie, "mcp", "--transport", "streamable-http", "--port", "0",
                           "--port-file", pf], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=logs["http"], cwd=work, env=env("http"))
    sp = subprocess.Popen([magpie, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=logs["stdio"], cwd=work, env=env("stdio"))
    procs = {"http": hp, "stdio": sp}
    fails = []
    hcs = []
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and not (os.path.exists(pf) and os.path.getsize(pf)):
            if hp.poll() is not None:
                break
            time.sleep(0.05)
        try:
            port = int(open(pf).read().strip())
        except (OSError, ValueError):
            print("mcp_soak: the HTTP server did not start (see %s)" % logs["http"].name, file=sys.stderr)
            return 2
        hcs = [HttpClient(ctx, port, n) for n in range(a.http_clients)]
        for c in hcs:
            c.open_session()
        sc = StdioClient(ctx, sp)
        sc.start()

        def quiesce(deadline):
            """Until every worker of both servers is reaped, then a.settle s."""
            while time.monotonic() < deadline and any(children(p.pid) for p in procs.values()):
                time.sleep(0.1)
            time.sleep(a.settle)

        def outstanding():
            with ctx.lock:
                n = ctx.next_i - len(ctx.results)
            with sc.plock:
                n -= sum(1 for e in sc.pending.values() if e[3])  # cancelled: no answer due
            return n

        sampler = Sampler(ctx, procs, a.period)
        time.sleep(a.settle)
        sampler.phase = "start"
        start_row = sampler.take()          # sessions open, no call yet
        sampler.phase = "calls"
        sampler.start()
        ww = WorkerWatch(procs)
        ww.start()
        cps = sorted({f for f in (a.warmup, 0.25, 0.50, 0.75) if 0 < int(f * a.calls) < a.calls})
        ctx.open_gate(int(cps[0] * a.calls) if cps else None)
        print("mcp_soak: %d calls, %d HTTP sessions (port %d) + 1 stdio session, seed %d; "
              "HTTP pid %d, stdio pid %d; checkpoints at %s; results in %s"
              % (a.calls, a.http_clients, port, a.seed, hp.pid, sp.pid,
                 ", ".join("%d %%" % (f * 100) for f in cps), out), flush=True)
        t_calls = time.monotonic()
        for c in hcs:
            c.start()
        st = threading.Thread(target=sc.run, daemon=True)
        st.start()
        cp_rows = {}
        paused = 0.0
        last = [time.monotonic()]

        def alive():
            return any(c.is_alive() for c in hcs) or st.is_alive()

        def gone():
            """Servers that exited during the run (a crash): noted once."""
            g = [n for n, p in procs.items() if p.poll() is not None]
            for n in g:
                if n not in died:
                    died[n] = procs[n].returncode
                    print("mcp_soak: the %s server exited during the run (%s)"
                          % (n, procs[n].returncode), flush=True)
            return g
        died = {}

        def progress():
            if time.monotonic() - last[0] >= 30:
                last[0] = time.monotonic()
                print("  %6.0f s  %d/%d calls answered or cancelled"
                      % (last[0] - t_calls, ctx.ndone()[0], a.calls), flush=True)

        for k, f in enumerate(cps):
            at = int(f * a.calls)
            end = time.monotonic() + a.call_timeout
            while alive() and time.monotonic() < end and not gone() and \
                    not (ctx.next_i >= at and outstanding() <= 0):
                time.sleep(0.05)
                progress()
            tp = time.monotonic()
            sampler.phase = "checkpoint"
            quiesce(time.monotonic() + 30)
            cp_rows[f] = sampler.take()
            cp_rows[f]["phase"] = "cp%d" % round(f * 100)
            sampler.phase = "calls"
            paused += time.monotonic() - tp
            ctx.open_gate(int(cps[k + 1] * a.calls) if k + 1 < len(cps) else None)
        while alive():
            time.sleep(0.2)
            progress()
            if gone():
                ctx.open_gate(None)  # nothing to wait for at a checkpoint now
        for c in hcs:
            c.join()
        st.join()
        sc.finish(time.monotonic() + a.call_timeout)
        gone()
        t_calls_end = time.monotonic()
        sampler.phase = "settle"
        quiesce(time.monotonic() + 30)
        sampler.phase = "end"
        end_row = sampler.take()
        late = list(sc.late)  # answers to stdio ids already counted (should be none)
        tmp_left = {}
        for n, d in srv_tmp.items():
            tmp_left[n] = sum(len(fs) for _, _, fs in os.walk(d))
        nonce_left = scan_cmd(("sleep\0%s" % ctx.nonce).encode())
        # end the sessions; what remains is the servers' idle state
        deletes = [c.close_session() for c in hcs]
        sampler.phase = "closed"
        time.sleep(a.settle)
        closed_row = sampler.take()
        sampler.stop.set()
        sampler.join()
        ww.stop.set()
        ww.join()
        # shutdown: SIGTERM for HTTP, end of input for stdio; both must exit 0
        hp.send_signal(signal.SIGTERM)
        try:
            sp.stdin.close()
        except OSError:
            pass
        rc = {}
        for n, p in procs.items():
            try:
                rc[n] = p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                rc[n] = "hung (killed)"
        tmp_gone = {n: not any(e.startswith("magpie-mcp-") for e in os.listdir(d))
                    for n, d in srv_tmp.items()}
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()

    # ------------------------------------------------------------ report
    rows = sampler.rows
    busy_s = t_calls_end - t_calls - paused
    calls_s = a.calls / busy_s
    counts = {o: 0 for o in OUTCOMES}
    by_transport = {"http": {o: 0 for o in OUTCOMES}, "stdio": {o: 0 for o in OUTCOMES}}
    lat = {}
    by_kind = {}
    for i, tr, kind, o, l in ctx.results:
        by_kind.setdefault(kind, {}).setdefault(o, 0)
        by_kind[kind][o] += 1
        counts[o] += 1
        by_transport[tr][o] += 1
        if l is not None and o in ("ok", "tool_error", "bad_args", "cancel_late"):
            lat.setdefault(kind, []).append(l)
        elif l is not None and o == "busy":
            lat.setdefault("(busy, any kind)", []).append(l)
    answered_ids = {r[0] for r in ctx.results}
    missing = a.calls - len(answered_ids)
    errors = [e for c in hcs for e in c.errors] + sc.errors
    for m in late:
        errors.append("stdio: an answer to %r after it was counted" % m.get("id"))
    exe_same = sha256(magpie) == exe_sum

    procs_report = {}
    metrics = ("rss_kib", "fds", "threads", "children", "zombies")
    for name in procs:
        total = ctx.done[name]
        cr = [r for r in rows if r["phase"] == "calls" and name in r]
        peak = {k: max(r[name][k] for r in rows if name in r) for k in metrics}
        half = [(r[name]["own_done"], r[name]["rss_kib"]) for r in cr
                if r[name]["own_done"] >= 0.5 * total]
        sl = slope(half)
        cpv = {("cp%d" % round(f * 100)): cp_rows[f].get(name) for f in cps}
        warm = cpv.get("cp%d" % round(a.warmup * 100))
        e = end_row.get(name)
        c25 = cpv.get("cp25")
        procs_report[name] = {
            "pid": procs[name].pid, "calls": total,
            "start": start_row.get(name), "warmup": warm, "checkpoints": cpv, "peak": peak,
            "end": e, "closed": closed_row.get(name),
            "rss_growth_25_end_kib": None if not c25 or not e else e["rss_kib"] - c25["rss_kib"],
            "rss_slope_kib_per_1000_calls": None if sl is None else round(sl * 1000, 2),
            "rss_slope_samples": len(half), "peak_live_workers": ww.peak[name],
            "server_tmp_files_left": tmp_left[name], "server_tmpdir_removed": tmp_gone[name],
            "exit": rc[name],
        }
        pr = procs_report[name]
        if e is None or warm is None:
            fails.append("%s: no samples (end %s, warm-up %s)" % (name, e, warm))
            continue
        if e["children"] != 0:
            fails.append("%s: %d child processes at the end" % (name, e["children"]))
        if e["zombies"] != 0:
            fails.append("%s: %d zombies at the end" % (name, e["zombies"]))
        if e["fds"] > warm["fds"] + a.fd_tol:
            fails.append("%s: %d fds at the end > %d at warm-up + %d"
                         % (name, e["fds"], warm["fds"], a.fd_tol))
        if e["threads"] > warm["threads"] + a.thread_tol:
            fails.append("%s: %d threads at the end > %d at warm-up + %d"
                         % (name, e["threads"], warm["threads"], a.thread_tol))
        g = pr["rss_growth_25_end_kib"]
        if g is not None and g > a.rss_growth_kib:
            fails.append("%s: RSS grew %d KiB from the 25%% checkpoint to the end (> %d)"
                         % (name, g, a.rss_growth_kib))
        if sl is not None and len(half) >= 30 and sl * 1000 > a.rss_slope_kib:
            fails.append("%s: RSS slope %.1f KiB per 1000 calls over the second half (> %.0f)"
                         % (name, sl * 1000, a.rss_slope_kib))
        if tmp_left[name]:
            fails.append("%s: %d call files left in the server's temporary directory"
                         % (name, tmp_left[name]))
        if not tmp_gone[name]:
            fails.append("%s: the server's temporary directory was not removed at exit" % name)
        if rc[name] != 0:
            fails.append("%s: the server exited %s" % (name, rc[name]))
        lim = 16 if name == "http" else 8  # the defaults of --max-calls, --max-calls-per-session
        if ww.peak[name] > lim:
            fails.append("%s: %d tool workers alive at once (limit %d)" % (name, ww.peak[name], lim))
        cl = pr["closed"]
        if cl and (cl["children"] or cl["zombies"]):
            fails.append("%s: children after the sessions were closed" % name)
    for n, code in died.items():
        fails.append("the %s server exited during the run (status %s)" % (n, code))
    for o in ("lost", "cancel_hung", "http_error", "unexpected"):
        if counts[o]:
            fails.append("%d calls: %s" % (counts[o], o))
    if missing:
        fails.append("%d calls have no outcome at all" % missing)
    if late:
        fails.append("%d stdio answers came after their call was counted" % len(late))
    if ctx.sleep_stats["left_after_cancel"]:
        fails.append("%d cancelled HTTP calls whose testcase still ran when the request ended"
                     % ctx.sleep_stats["left_after_cancel"])
    if nonce_left:
        fails.append("%d cancelled testcase processes (sleep %s) still running: %s"
                     % (len(nonce_left), ctx.nonce + "*", nonce_left[:10]))
    if any(d not in (200, 204) for d in deletes):
        fails.append("DELETE of a session answered %s" % [d for d in deletes if d not in (200, 204)][:4])
    if not exe_same:
        fails.append("%s was replaced during the run (rebuilt?): the workers mixed two builds" % magpie)

    lat_report = {k: {"n": len(v), "median_ms": round(statistics.median(v) * 1000, 2),
                      "p99_ms": round(pct(v, 99) * 1000, 2), "max_ms": round(max(v) * 1000, 2)}
                  for k, v in sorted(lat.items())}
    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = None
    doc = {"magpie": magpie, "magpie_sha256": exe_sum, "date_utc": stamp, "calls": a.calls,
           "seed": a.seed, "http_clients": a.http_clients, "stdio_inflight": a.stdio_inflight,
           "burst": a.burst, "burst_every": a.burst_every,
           "call_phase_s": round(t_calls_end - t_calls, 2), "checkpoint_pauses_s": round(paused, 2),
           "calls_per_s": round(calls_s, 1),
           "outcomes": counts, "outcomes_by_transport": by_transport, "outcomes_by_kind": by_kind,
           "cancel_sleep_testcase": ctx.sleep_stats,
           "stdio_notifications": sc.notifications, "latency_by_kind": lat_report,
           "processes": procs_report, "nonce_processes_left": nonce_left,
           "thresholds": {"fd_tol": a.fd_tol, "thread_tol": a.thread_tol,
                          "rss_growth_kib": a.rss_growth_kib, "rss_slope_kib_per_1000": a.rss_slope_kib,
                          "warmup": a.warmup, "settle_s": a.settle},
           "loadavg_end": load, "errors": errors[:200], "failures": fails}
    with open(os.path.join(out, "soak.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out, "samples.jsonl"), "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")

    cols = ["start"] + ["cp%d" % round(f * 100) for f in cps] + ["peak", "end", "closed"]
    print("\n== server processes: start = sessions open, no call yet; cpN = quiet checkpoint "
          "after N %% of the calls (cp%d = warm-up); peak = highest 1-s sample; end = after "
          "the last call; closed = sessions deleted (quiet = no worker left, then %.0f s)"
          % (round(a.warmup * 100), a.settle))
    print("%-6s %-9s" % ("proc", "metric") + "".join("%9s" % c for c in cols))
    for name, pr in procs_report.items():
        for k, label in (("rss_kib", "RSS KiB"), ("fds", "fds"), ("threads", "threads"),
                         ("children", "children"), ("zombies", "zombies")):
            v = []
            for c in cols:
                src = pr["peak"] if c == "peak" else pr["checkpoints"].get(c) if c.startswith("cp") else pr[c]
                v.append(src[k] if src else "-")
            print("%-6s %-9s" % (name, label) + "".join("%9s" % x for x in v))
    print("\n%-6s %7s %22s %33s %14s %11s %5s" % (
        "proc", "calls", "RSS growth cp25->end", "RSS slope, 2nd half (KiB/1000)", "peak workers",
        "files left", "exit"))
    for name, pr in procs_report.items():
        print("%-6s %7d %18s KiB %33s %14s %11s %5s" % (
            name, pr["calls"], pr["rss_growth_25_end_kib"],
            "-" if pr["rss_slope_kib_per_1000_calls"] is None else
            "%.1f (%d samples)" % (pr["rss_slope_kib_per_1000_calls"], pr["rss_slope_samples"]),
            "%d (max %d)" % (pr["peak_live_workers"], 16 if name == "http" else 8),
            pr["server_tmp_files_left"], pr["exit"]))
    print("\n== calls: %d in %.1f s of calls (+ %.1f s of checkpoint pauses) = %.1f calls/s; "
          "load average at the end: %s" % (a.calls, busy_s, paused, calls_s, " ".join(load or [])))
    print("%-8s " % "" + " ".join("%11s" % o for o in OUTCOMES))
    for tr in ("http", "stdio"):
        print("%-8s " % tr + " ".join("%11d" % by_transport[tr][o] for o in OUTCOMES))
    print("%-8s " % "all" + " ".join("%11d" % counts[o] for o in OUTCOMES))
    print("\ncancel_sleep (analyze whose testcase sleeps): testcase running when the cancel was "
          "sent %d, not started yet %d; still running after an HTTP cancellation ended %d"
          % tuple(ctx.sleep_stats[k] for k in ("running_at_cancel", "not_started_at_cancel",
                                                "left_after_cancel")))
    print("\n%-24s %6s %6s %10s %10s %10s  %s" % ("kind", "calls", "timed", "median ms", "p99 ms",
                                                 "max ms", "outcomes"))
    for k in sorted(by_kind):
        v = lat_report.get(k)
        oc = ", ".join("%s %d" % (o, n) for o, n in sorted(by_kind[k].items(), key=lambda x: -x[1]))
        print("%-24s %6d %6s %10s %10s %10s  %s" % (
            k, sum(by_kind[k].values()), v["n"] if v else 0,
            "%.1f" % v["median_ms"] if v else "-", "%.1f" % v["p99_ms"] if v else "-",
            "%.1f" % v["max_ms"] if v else "-", oc))
    v = lat_report.get("(busy, any kind)")
    if v:
        print("%-24s %6s %6d %10.1f %10.1f %10.1f" % ("(busy answers)", "", v["n"], v["median_ms"],
                                                    v["p99_ms"], v["max_ms"]))
    if errors:
        print("\n%d client-side notes (first 10):" % len(errors))
        for e in errors[:10]:
            print("  " + e)
    print("\nresults: %s/soak.json, %s/samples.jsonl" % (out, out))
    if fails:
        print("\nFAIL:")
        for f in fails:
            print("  " + f)
    else:
        print("\nPASS: every call answered or cancelled; no child, zombie or leftover process; "
              "fds, threads and RSS flat")
    for pid in scan_cmd(("sleep\0%s" % ctx.nonce).encode()):  # ours: reported above, now ended
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("work directory kept: %s" % work)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
