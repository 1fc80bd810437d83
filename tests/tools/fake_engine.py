#!/usr/bin/env python3
"""A small OpenAI-compatible streaming server that stands in for an engine
in magpie's serving-benchmark tests (stdlib only; loopback only).

It accepts the command lines magpie builds for the engines, so the tests
put it on PATH under the engine's name:
  vllm serve MODEL --host H --port P [--profiler-config.torch_profiler_dir DIR] ...
  python3 -m sglang.launch_server --model-path M --host=H --port P ...   (not used yet)
and listens on the address --host names (127.0.0.1 without it).
It serves GET /health, /v1/models, /version, POST /v1/completions and
/v1/chat/completions (SSE, one token per event, then a usage chunk and
[DONE]), POST /start_profile and /stop_profile (on stop it writes a small
gzip Kineto trace with kernel events into the profiler dir), and it starts a
child process, as vLLM starts its engine core, so tests can check that the
whole process group goes away. On SIGTERM the main process stops that child
itself and exits 0, as vLLM and SGLang do; both record who sent their
SIGTERM (FAKE_ENGINE_SIGLOG), so a test can tell "magpie signalled the main
process and the main process its child" from "magpie signalled the group".

Behaviour knobs (environment):
  FAKE_ENGINE_TTFT_MS (5), FAKE_ENGINE_ITL_MS (1)   timing
  FAKE_ENGINE_READY_S (0.5)   /health answers 503 until then
  FAKE_ENGINE_FAULT           exit_at_start | never_ready | stall
  FAKE_ENGINE_FAULT_AFTER (0) requests served normally before 'stall'
  FAKE_ENGINE_MAX_S (120)     the server exits by itself after this long
  FAKE_ENGINE_DONE_LOG        file a line is appended to after each completed request
  FAKE_ENGINE_TAG             appended to the child's argv, for orphan checks
  FAKE_ENGINE_STOP            on SIGTERM the main process: stop_child (default: stops
                              the child, waits for it, exits 0) | leave_child (exits
                              0 at once, the child stays) | ignore (carries on)
  FAKE_ENGINE_SIGLOG          file the main process and the child append one line to
                              per SIGTERM: "main TERM from magpie", "core TERM from
                              main", ... (sender by pid: magpie, main or other)
  FAKE_ENGINE_TRACE           a recorded .json.gz trace written on /stop_profile
                              instead of the small synthetic one; several paths
                              joined by ':' are written as ranks 0, 1, ...
  FAKE_ENGINE_STEPPED         1: the synthetic trace has vLLM's native step
                              annotations (execute_context_N(T)_generation_M(K) on
                              the CPU and GPU timelines: 4 prefill, 17 decode, 3
                              mixed steps), so the stage split finds every stage
  FAKE_ENGINE_PROFLOG         file one line is appended to per profiler call, in
                              order: "start" (" steps=N" when the request body
                              asked for N steps, as SGLang's), "stop" (wrote a
                              trace) or "stop-idle" (the capture had ended itself)
  FAKE_ENGINE_STEP_MS         with --profiler-config.max_iterations N (vLLM) or a
                              start body {"num_steps": N} (SGLang), a capture ends
                              by itself (trace written) N steps of this many ms
                              after /start_profile (unset: it never does)
"""
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ENV = os.environ
TTFT = float(ENV.get("FAKE_ENGINE_TTFT_MS", "5")) / 1000
ITL = float(ENV.get("FAKE_ENGINE_ITL_MS", "1")) / 1000
READY_S = float(ENV.get("FAKE_ENGINE_READY_S", "0.5"))
FAULT = ENV.get("FAKE_ENGINE_FAULT", "")
FAULT_AFTER = int(ENV.get("FAKE_ENGINE_FAULT_AFTER", "0"))
MAX_S = float(ENV.get("FAKE_ENGINE_MAX_S", "120"))
DONE_LOG = ENV.get("FAKE_ENGINE_DONE_LOG", "")
STOP = ENV.get("FAKE_ENGINE_STOP", "stop_child")
SIGLOG = ENV.get("FAKE_ENGINE_SIGLOG", "")
T0 = time.monotonic()
LOCK = threading.Lock()
STATE = {"served": 0, "profiling": False, "prof_t0": 0.0, "capture": 0}
PROFLOG = ENV.get("FAKE_ENGINE_PROFLOG", "")
STEP_S = float(ENV.get("FAKE_ENGINE_STEP_MS", "0")) / 1000


def parse_args(argv):
    a = {"model": "fake-model", "port": 8888, "host": "127.0.0.1",
         "trace_dir": ENV.get("VLLM_TORCH_PROFILER_DIR")}
    i = 0
    if argv and argv[0] == "serve":
        a["model"] = argv[1]
        i = 2
    while i < len(argv):
        w = argv[i]
        val = argv[i + 1] if i + 1 < len(argv) else None
        if "=" in w and w.startswith("--"):
            w, val = w.split("=", 1)
        elif val is not None and not val.startswith("-"):
            i += 1
        if w in ("--port", "--server-port"):
            a["port"] = int(val)
        elif w == "--host":
            a["host"] = val
        elif w in ("--model", "--model-path"):
            a["model"] = val
        elif w in ("--profiler-config.torch_profiler_dir", "--torch-profiler-dir"):
            a["trace_dir"] = val
        elif w == "--profiler-config.max_iterations":
            a["max_iterations"] = int(val)
        i += 1
    return a


ARGS = parse_args(sys.argv[1:])


def stepped_events():
    """Steps as vLLM annotates them without detailed annotations: a CPU
    user_annotation and a GPU gpu_user_annotation per step around its
    launches (cpu_op, cudaLaunchKernel) and kernels, linked by correlation."""
    ev, ts, corr = [], 1000.0, 1
    for step in range(24):
        if step < 4:
            name = "execute_context_4(128)_generation_0(0)"
        elif step % 6 == 0:
            name = "execute_context_1(32)_generation_3(3)"
        else:
            name = "execute_context_0(0)_generation_4(4)"
        t0, first = ts, None
        for kn, dur in (("ampere_bf16_gemm_128x64", 40.0), ("flash_attn_fwd", 25.0),
                        ("rms_norm_kernel", 5.0)):
            ids = {"correlation": corr, "External id": corr}
            ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1,
                       "ts": ts, "dur": 8, "args": {"External id": corr}})
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                       "tid": 1, "ts": ts + 1, "dur": 5, "args": ids})
            ev.append({"ph": "X", "cat": "kernel", "name": kn, "pid": 0, "tid": 7, "ts": ts + 10,
                       "dur": dur, "args": ids})
            first = ts + 10 if first is None else first
            last = ts + 10 + dur
            ts += dur + 12
            corr += 1
        ev.append({"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1,
                   "ts": t0 - 1, "dur": ts - t0 + 1})
        ev.append({"ph": "X", "cat": "gpu_user_annotation", "name": name, "pid": 0, "tid": 7,
                   "ts": first - 0.5, "dur": last - first + 1})
        ts += 20
    return ev


def write_trace(d):
    os.makedirs(d, exist_ok=True)
    rec = ENV.get("FAKE_ENGINE_TRACE")
    if rec:  # recorded traces of a real engine, named as vLLM names rank 0, 1, ...
        for rank, src in enumerate(rec.split(os.pathsep)):
            path = os.path.join(d, "fake-host_%d-rank-%d.%d.pt.trace.json.gz" % (
                os.getpid(), rank, int(time.time())))
            shutil.copyfile(src, path + ".tmp")
            os.rename(path + ".tmp", path)
        return
    ev = stepped_events() if ENV.get("FAKE_ENGINE_STEPPED") == "1" else []
    ts = 1000.0
    for step in range(0 if ev else 20):
        for name, dur, ext in (("ampere_bf16_gemm_128x64", 40.0, 1), ("flash_attn_fwd", 25.0, 2),
                               ("rms_norm_kernel", 5.0, 3)):
            ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::op%d" % ext, "pid": 1, "tid": 1,
                       "ts": ts, "dur": dur + 2, "args": {"External id": ext + 10 * step,
                                                          "Input Dims": [[4, 64], [64, 64]]}})
            ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": ts + 1,
                       "dur": dur, "args": {"External id": ext + 10 * step}})
            ts += dur + 3
    path = os.path.join(d, "fake-host_%d-rank-0.%d.pt.trace.json.gz" % (os.getpid(), int(time.time())))
    tmp = path + ".tmp"
    with gzip.open(tmp, "wt") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f)
    os.rename(tmp, path)


def prof_log(line):
    if PROFLOG:
        with open(PROFLOG, "a") as f:
            f.write(line + "\n")


def end_capture(n):
    """vLLM's max_iterations: the capture ends itself and its trace is written."""
    with LOCK:
        if STATE["profiling"] and STATE["capture"] == n:
            STATE["profiling"] = False
            if ARGS["trace_dir"]:
                write_trace(ARGS["trace_dir"])


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        sys.stdout.write("fake-engine: " + (fmt % args) + "\n")
        sys.stdout.flush()

    def reply(self, code, obj):
        body = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        ready = time.monotonic() - T0 >= READY_S and FAULT != "never_ready"
        if self.path == "/health":
            self.reply(200 if ready else 503, {})
        elif self.path == "/v1/models":
            self.reply(200 if ready else 503, {"object": "list", "data": [{"id": ARGS["model"],
                                                                          "object": "model"}]})
        elif self.path == "/version":
            self.reply(200, {"version": "0.0.1-fake"})
        else:
            self.reply(404, {"error": "not found"})

    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n) if n else b""
        if self.path == "/start_profile":
            body = json.loads(raw) if raw.strip() else {}
            steps = body.get("num_steps") or ARGS.get("max_iterations")
            with LOCK:
                STATE["profiling"] = True
                STATE["capture"] += 1
                prof_log("start" + (" steps=%d" % body["num_steps"] if "num_steps" in body else ""))
                if steps and STEP_S > 0:
                    threading.Timer(steps * STEP_S, end_capture, (STATE["capture"],)).start()
            return self.reply(200, {})
        if self.path == "/stop_profile":
            with LOCK:
                was = STATE["profiling"]
                STATE["profiling"] = False
                prof_log("stop" if was else "stop-idle")
                if was and ARGS["trace_dir"]:
                    write_trace(ARGS["trace_dir"])
            return self.reply(200, {})
        if self.path not in ("/v1/completions", "/v1/chat/completions"):
            return self.reply(404, {"error": "not found"})
        req = json.loads(raw or b"{}")
        max_tokens = int(req.get("max_tokens") or req.get("max_completion_tokens") or 16)
        prompt = req.get("prompt")
        plen = len(prompt) if isinstance(prompt, list) else len(str(prompt or req.get("messages")).split())
        with LOCK:
            STATE["served"] += 1
            k = STATE["served"]
        stall = FAULT == "stall" and k > FAULT_AFTER
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if stall:
            time.sleep(MAX_S)
            return
        time.sleep(TTFT)
        chat = "chat" in self.path
        for i in range(max_tokens):
            if i:
                time.sleep(ITL)
            if chat:
                choice = {"index": 0, "delta": {"content": " w%d" % (1000 + i)}}
            else:
                choice = {"index": 0, "text": " w%d" % (1000 + i)}
            self.chunk(b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n")
        usage = {"prompt_tokens": plen, "completion_tokens": max_tokens,
                 "total_tokens": plen + max_tokens}
        self.chunk(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
        self.chunk(b"data: [DONE]\n\n")
        self.chunk(b"")
        if DONE_LOG:
            with LOCK, open(DONE_LOG, "a") as f:
                f.write("done\n")


# The "engine core": waits for SIGTERM (or MAX_S), says who sent it, exits.
CORE = """
import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
main, magpie, log, max_s = os.getppid(), int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
info = signal.sigtimedwait({signal.SIGTERM}, max_s)
if info and log:
    who = {main: "main", magpie: "magpie"}.get(info.si_pid, "other")
    with open(log, "a") as f:
        f.write("core TERM from %s\\n" % who)
"""


def siglog(line):
    if SIGLOG:
        with open(SIGLOG, "a") as f:
            f.write(line + "\n")


def on_sigterm(core, magpie):
    """SIGTERM arrives here (blocked everywhere else): as vLLM and SGLang, the
    main process stops its child before it exits."""
    while True:
        info = signal.sigwaitinfo({signal.SIGTERM})
        who = {magpie: "magpie"}.get(info.si_pid, "other")
        siglog("main TERM from %s" % who)
        print("fake-engine: SIGTERM from %s, stop mode %s" % (who, STOP), flush=True)
        if STOP == "ignore":
            continue
        if STOP == "stop_child":
            core.send_signal(signal.SIGTERM)
            try:
                core.wait(10)
            except subprocess.TimeoutExpired:
                pass
        os._exit(0)


def main():
    print("fake-engine: starting, argv=%s" % sys.argv[1:], flush=True)
    if FAULT == "exit_at_start":
        print("Traceback (most recent call last):\nRuntimeError: fake engine failed to start",
              flush=True)
        sys.exit(3)
    magpie = os.getppid()
    # before any thread exists, so that only on_sigterm's sigwaitinfo gets it
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    # an "engine core" child in our process group, as vLLM has
    core = subprocess.Popen([sys.executable, "-c", CORE, str(magpie), SIGLOG, str(MAX_S),
                             "fake-engine-core-" + ENV.get("FAKE_ENGINE_TAG", "")])
    threading.Thread(target=on_sigterm, args=(core, magpie), daemon=True).start()
    srv = ThreadingHTTPServer((ARGS["host"], ARGS["port"]), H)
    print("fake-engine: listening on %s:%d" % (ARGS["host"], ARGS["port"]), flush=True)
    srv.daemon_threads = True
    threading.Timer(MAX_S, lambda: os._exit(0)).start()
    print("fake-engine: vLLM API server version 0.0.1-fake on port %d" % ARGS["port"], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
