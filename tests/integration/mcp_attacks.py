#!/usr/bin/env python3
"""The attacks of issue 27 replayed against `magpie mcp` (run by
test_mcp_attacks.sh, under the ASan build in CI). Each check prints
"ok: ..." or "FAIL: ..."; the exit status is the number of failures.

Every wait is bounded and ends as soon as what it waits for is there; the
limits are generous (a loaded 2-core machine runs the ASan build ~20x
slower than idle), and nothing is timed against a speed target.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

MAGPIE = os.environ["MAGPIE"]
TMP = tempfile.mkdtemp(prefix="mcp-attacks-")
FAILS = []
PROCS = []


def ok(cond, what):
    print(("ok: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        FAILS.append(what)
    return cond


def wait_for(pred, limit=120.0, step=0.05):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


def start_http(*extra, env=None):
    pf = os.path.join(TMP, "port-%d" % len(PROCS))
    log = open(os.path.join(TMP, "http-%d.log" % len(PROCS)), "w")
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.Popen([MAGPIE, "mcp", "--transport", "streamable-http", "--port", "0",
                          "--port-file", pf, *extra], stderr=log, stdout=subprocess.DEVNULL,
                         env=e, cwd=TMP)
    PROCS.append(p)
    port = wait_for(lambda: open(pf).read().strip() if os.path.exists(pf) and
                    os.path.getsize(pf) else None, 200)
    if not port:
        print(open(log.name).read())
        raise SystemExit("FAIL: HTTP server did not start")
    return p, int(port)


def http(port, method, path, body=b"", headers=None, src="127.0.0.1", timeout=200):
    """One request on a fresh connection; returns (status, headers, body)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout,
                                 source_address=(src, 0))
    h = {"Host": "127.0.0.1:%d" % port, "Content-Type": "application/json",
         "Accept": "application/json, text/event-stream", "Connection": "close"}
    h.update(headers or {})
    h = {k: v for k, v in h.items() if v is not None}
    if body or method == "POST":
        h["Content-Length"] = str(len(body))
    req = ("%s %s HTTP/1.1\r\n" % (method, path) +
           "".join("%s: %s\r\n" % kv for kv in h.items()) + "\r\n").encode() + body
    try:
        s.sendall(req)
    except OSError:
        pass  # refused before the body was read: the answer is still there
    data = b""
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            data += c
    except OSError:
        pass
    s.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        return 0, {}, data
    hd = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hd[k.strip().lower()] = v.strip()
    if hd.get("transfer-encoding") == "chunked":
        out, r = b"", rest
        while r:
            n, _, r = r.partition(b"\r\n")
            n = int(n or b"0", 16)
            if n == 0:
                break
            out, r = out + r[:n], r[n + 2:]
        rest = out
    return status, hd, rest


def rpc_msgs(body):
    """JSON-RPC messages of a reply (JSON, or SSE data lines)."""
    body = body.decode("utf-8", "replace")
    if body.lstrip().startswith(("{", "[")):
        return [json.loads(body)]
    return [json.loads(ln[6:]) for ln in body.split("\n") if ln.startswith("data: ")]


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {},
                   "clientInfo": {"name": "attack", "version": "1"}}}


def session(port, version="2025-03-26", headers=None):
    init = dict(INIT, params=dict(INIT["params"], protocolVersion=version))
    st, hd, _ = http(port, "POST", "/mcp", json.dumps(init).encode(), headers)
    return hd.get("mcp-session-id") if st == 200 else None


def call(port, sid, tool, args, rid=2, headers=None):
    m = {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
         "params": {"name": tool, "arguments": args}}
    h = {"Mcp-Session-Id": sid, "Accept": "application/json"}
    h.update(headers or {})
    st, _, b = http(port, "POST", "/mcp", json.dumps(m).encode(), h)
    return st, b


def alive(port):
    try:
        return http(port, "GET", "/health", timeout=30)[2] == b'{"status":"ok"}'
    except OSError:
        return False


def proc_status(pid, key):
    try:
        for ln in open("/proc/%d/status" % pid):
            if ln.startswith(key + ":"):
                return int(ln.split()[1])
    except OSError:
        return None
    return None


def children(pid):
    out = []
    try:
        for t in os.listdir("/proc/%d/task" % pid):
            out += [int(x) for x in open("/proc/%d/task/%s/children" % (pid, t)).read().split()]
    except OSError:
        pass
    return out


def workers(pid):
    """Live tool workers (`magpie mcp --worker ...`) among pid's children."""
    n = 0
    for c in children(pid):
        try:
            if b"--worker" in open("/proc/%d/cmdline" % c, "rb").read():
                n += 1
        except OSError:
            pass
    return n


def zombies(pid):
    z = []
    for c in children(pid):
        try:
            if open("/proc/%d/stat" % c).read().rsplit(")", 1)[1].split()[0] == "Z":
                z.append(c)
        except OSError:
            pass
    return z


NESTED = b"[" * 100000 + b"]" * 100000
NESTED_OBJ = b'{"a":' * 50000 + b"1" + b"}" * 50000


# ---------------------------------------------------------------- HTTP
def attacks_http():
    p, port = start_http("--header-timeout", "3", "--body-timeout", "5", "--idle-timeout", "5",
                         "--max-connections-per-client", "40", "--max-calls", "4",
                         "--max-calls-per-session", "4", "--max-queued", "8", "--max-batch", "4",
                         "--max-sessions", "8")
    pid = p.pid

    # 1. nested messages, then a tool call (the crash of issue 27)
    sid = session(port)
    ok(sid is not None, "initialize")
    for body in (NESTED, NESTED_OBJ, NESTED):
        st, _, b = http(port, "POST", "/mcp", body, {"Mcp-Session-Id": sid})
        ok(st in (200, 400) and b"-32700" in b, "deeply nested message -> parse error (%d)" % st)
    st, b = call(port, sid, "hardware_spec", {})
    ok(st == 200 and b"gpu_count" in b, "tools/call after nested messages answered")
    ok(p.poll() is None and alive(port), "server alive after nested messages + tool call")
    # a batch with nesting inside, then a batch with tool calls
    st, _, b = http(port, "POST", "/mcp", b"[" + NESTED + b"]", {"Mcp-Session-Id": sid})
    ok(b"-32700" in b, "nested batch -> parse error")
    batch = [{"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
              "params": {"name": "hardware_spec", "arguments": {}}} for i in range(2)]
    st, _, b = http(port, "POST", "/mcp", json.dumps(batch).encode(), {"Mcp-Session-Id": sid})
    r = rpc_msgs(b)
    ok(st == 200 and len(r) == 1 and isinstance(r[0], list) and len(r[0]) == 2 and
       all("result" in x for x in r[0]), "batch of two tool calls answered in one array")
    big = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(5)]
    st, _, b = http(port, "POST", "/mcp", json.dumps(big).encode(), {"Mcp-Session-Id": sid})
    ok(b"a batch of 5 messages (at most 4)" in b, "batch over --max-batch refused")

    # 2. refused before the body: foreign Origin / Host, missing session,
    # oversized Content-Length; 20 such uploads held open do not grow RSS
    rss0 = proc_status(pid, "VmRSS")
    socks = []
    chunk = b"x" * 65536
    for i in range(20):
        s = socket.create_connection(("127.0.0.1", port), timeout=60)
        s.sendall(("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://evil.example\r\n"
                   "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                   % (16 << 20)).encode())
        socks.append(s)
    sent = 0
    for s in socks:
        try:
            s.settimeout(5)
            for _ in range(64):  # 4 MiB each, if the server would take them
                s.sendall(chunk)
                sent += len(chunk)
        except OSError:
            pass
    rss1 = proc_status(pid, "VmRSS")
    answers = []
    for s in socks:
        try:
            s.settimeout(30)
            answers.append(s.recv(200))
        except OSError:
            answers.append(b"")
        s.close()
    ok(all(a.startswith(b"HTTP/1.1 403") for a in answers),
       "20 uploads with a foreign Origin -> 403 on their headers")
    ok(rss1 is not None and rss1 - rss0 < 40 * 1024,
       "RSS grew %d KiB during 20 refused 16 MiB uploads (< 40 MiB)" % ((rss1 or 0) - rss0))
    st, _, _ = http(port, "POST", "/mcp", b"{}", {"Host": "evil.example"})
    ok(st == 421, "foreign Host -> 421 (%d)" % st)
    st, _, _ = http(port, "GET", "/health", b"", {"Host": "rebind.evil.example:%d" % port})
    ok(st == 421, "foreign Host on /health -> 421 (%d)" % st)
    st, _, _ = http(port, "POST", "/mcp", b"{}", {"Host": "localhost:%d" % port})
    ok(st == 400, "Host localhost accepted (%d: no session)" % st)
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 999999999\r\n\r\n")
    ok(s.recv(200).startswith(b"HTTP/1.1 413"), "Content-Length over --max-message -> 413 at once")
    s.close()

    # 3. slow headers and idle sockets are closed; the per-client limit
    # keeps another address answered during a flood
    slow = socket.create_connection(("127.0.0.1", port), timeout=60)
    slow.sendall(b"POST /mcp HTTP/1.1\r\n")
    t0 = time.monotonic()
    closed = False
    try:
        while time.monotonic() - t0 < 120:
            slow.sendall(b"X")  # a byte a second, never finishing
            slow.settimeout(1)
            try:
                if slow.recv(100) == b"":
                    closed = True
                    break
            except socket.timeout:
                pass
    except OSError:
        closed = True
    ok(closed, "slow-header connection closed (after %.1f s; --header-timeout 3)"
       % (time.monotonic() - t0))
    slow.close()
    flood = []
    for _ in range(300):
        try:
            flood.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        except OSError:
            break
    ok(alive_from(port, "127.0.0.2"), "/health from 127.0.0.2 answered during a 300-socket idle "
       "flood from 127.0.0.1")
    thr = proc_status(pid, "Threads")
    ok(thr is not None and thr < 120, "threads during the flood: %s (bounded)" % thr)

    def flood_gone():
        n = 0
        for s in flood:
            try:
                s.settimeout(0.01)
                if s.recv(1) == b"":
                    n += 1
            except socket.timeout:
                pass
            except OSError:
                n += 1
        return n == len(flood)
    ok(wait_for(lambda: flood_gone(), 120, 0.5), "every idle socket closed by the server")
    for s in flood:
        s.close()
    ok(wait_for(lambda: alive(port), 60), "/health from 127.0.0.1 answered after the flood")

    # 4. 200 tool calls at once: never more workers than --max-calls, the
    # rest wait or are refused as busy; everything is answered
    sid2 = session(port)
    results = [None] * 200
    peak = [0]
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], workers(pid))
            time.sleep(0.01)
    w = threading.Thread(target=watch)
    w.start()

    def one(i):
        try:
            results[i] = call(port, sid2, "hardware_spec", {}, rid=1000 + i)
        except OSError as e:
            results[i] = (0, str(e).encode())
    ths = [threading.Thread(target=one, args=(i,)) for i in range(200)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(600)
    stop.set()
    w.join()
    done = sum(1 for r in results if r and r[0] == 200 and b"gpu_count" in r[1])
    busy = sum(1 for r in results if r and r[0] == 200 and b"server busy" in r[1])
    refused = sum(1 for r in results if r and r[0] == 0)
    ok(0 < peak[0] <= 4, "peak tool workers during 200 calls: %d (--max-calls 4)" % peak[0])
    ok(done >= 4 and done + busy + refused == 200 and done + busy >= 40,
       "200 calls at once: %d answered, %d busy, %d connections refused (per-client limit)"
       % (done, busy, refused))
    ok(p.poll() is None and alive(port), "server alive after 200 calls")

    # 5. zombies after 20 probe-running calls
    for i in range(20):
        call(port, sid2, "hardware_spec", {}, rid=3000 + i)
    z = wait_for(lambda: not zombies(pid) and not children(pid), 60, 0.2)
    ok(z, "no zombie or leftover child after 20 hardware_spec calls (%s)" % zombies(pid))

    # 6. an initialize flood does not evict a session in use
    used = session(port)
    st, _, _ = http(port, "POST", "/mcp", b'{"jsonrpc":"2.0","id":5,"method":"ping"}',
                    {"Mcp-Session-Id": used})
    refused_init = 0
    for _ in range(30):
        if session(port) is None:
            refused_init += 1
    st, _, b = http(port, "POST", "/mcp", b'{"jsonrpc":"2.0","id":6,"method":"ping"}',
                    {"Mcp-Session-Id": used})
    ok(st == 200 and b'"result"' in b, "session in use survives 30 initialize (%d)" % st)
    st, _, b = http(port, "POST", "/mcp", b'{"jsonrpc":"2.0","id":6,"method":"ping"}',
                    {"Mcp-Session-Id": sid2})
    ok(st == 200, "older session in use survives too (%d)" % st)

    # 7. UTF-8 cut inside a message: the message is kept
    meth = "m" * 99 + "\U0001F600"
    st, _, b = http(port, "POST", "/mcp", json.dumps(
        {"jsonrpc": "2.0", "id": 7, "method": meth}).encode(), {"Mcp-Session-Id": used})
    r = rpc_msgs(b)[0]
    ok(r.get("error", {}).get("code") == -32601 and "message" in r["error"],
       "a cut multi-byte method name keeps the error message")
    st, b = call(port, used, "m" * 99 + "\u00e9", {})
    r = rpc_msgs(b)[0]
    ok("message" in r.get("error", {}), "a cut multi-byte tool name keeps the error message")

    ok(p.poll() is None and alive(port), "HTTP server still up at the end")
    p.send_signal(signal.SIGTERM)
    ok(p.wait(120) == 0, "HTTP server stops cleanly on SIGTERM")


def alive_from(port, src):
    try:
        return http(port, "GET", "/health", src=src, timeout=30)[2] == b'{"status":"ok"}'
    except OSError:
        return False


# ---------------------------------------------------------------- binding and tokens
def attacks_bind():
    r = subprocess.run([MAGPIE, "mcp", "--transport", "http", "--host", "0.0.0.0", "--port", "0"],
                       capture_output=True, text=True, timeout=120,
                       env={k: v for k, v in os.environ.items() if k != "MAGPIE_MCP_TOKEN"})
    ok(r.returncode == 2 and "without a token" in r.stderr,
       "non-loopback bind without a token -> exit 2 (%d)" % r.returncode)
    tf = os.path.join(TMP, "token")
    with open(tf, "w") as f:
        f.write("s3cret-from-file\n")
    os.chmod(tf, 0o644)
    r = subprocess.run([MAGPIE, "mcp", "--transport", "http", "--auth-token-file", tf],
                       capture_output=True, text=True, timeout=120)
    ok(r.returncode == 2 and "chmod 600" in r.stderr, "token file readable by others -> exit 2")
    os.chmod(tf, 0o600)
    p, port = start_http("--host", "0.0.0.0", "--auth-token-file", tf)
    cmdline = open("/proc/%d/cmdline" % p.pid, "rb").read()
    ok(b"s3cret" not in cmdline, "token not on the command line")
    st, hd, _ = http(port, "POST", "/mcp", b"x" * 100000)
    ok(st == 401 and "bearer" in hd.get("www-authenticate", "").lower(),
       "no token -> 401 before the body")
    auth = {"Authorization": "Bearer s3cret-from-file"}
    sid = session(port, headers=auth)
    ok(sid is not None, "token from the file accepted")
    # the tool worker does not inherit the token: a testcase prints its env
    kdir = os.path.join(TMP, "k")
    os.makedirs(kdir, exist_ok=True)
    open(os.path.join(kdir, "k.cu"), "w").write("__global__ void k(float *a) {}\n")
    st, b = call(port, sid, "analyze", {
        "kernel_path": os.path.join(kdir, "k.cu"), "kernel_type": "hip",
        "testcase_command": "sh -c 'env > %s/env.txt'" % kdir, "check_performance": False,
        "output_dir": os.path.join(TMP, "res")}, headers=auth)
    envf = os.path.join(kdir, "env.txt")
    ok(os.path.exists(envf), "the testcase ran (env dumped)")
    ok(os.path.exists(envf) and "s3cret" not in open(envf).read() and
       "MAGPIE_MCP_TOKEN" not in open(envf).read(), "the testcase does not see the token")
    p.send_signal(signal.SIGTERM)
    p.wait(120)
    # the token from the environment is not passed on either
    p, port = start_http(env={"MAGPIE_MCP_TOKEN": "envtok-123"})
    auth = {"Authorization": "Bearer envtok-123"}
    sid = session(port, headers=auth)
    os.remove(envf) if os.path.exists(envf) else None
    call(port, sid, "analyze", {
        "kernel_path": os.path.join(kdir, "k.cu"), "kernel_type": "hip",
        "testcase_command": "sh -c 'env > %s/env.txt'" % kdir, "check_performance": False,
        "output_dir": os.path.join(TMP, "res")}, headers=auth)
    ok(os.path.exists(envf) and "envtok-123" not in open(envf).read(),
       "the testcase does not see $MAGPIE_MCP_TOKEN")
    p.send_signal(signal.SIGTERM)
    p.wait(120)


# ---------------------------------------------------------------- stdio
def attacks_stdio():
    p = subprocess.Popen([MAGPIE, "mcp", "--max-batch", "8"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=TMP)
    PROCS.append(p)
    replies = {}
    lock = threading.Lock()

    def reader():
        for ln in p.stdout:
            try:
                m = json.loads(ln)
            except ValueError:
                continue
            for x in (m if isinstance(m, list) else [m]):
                with lock:
                    replies.setdefault(x.get("id"), []).append(x)
    th = threading.Thread(target=reader, daemon=True)
    th.start()

    def send(obj_or_bytes):
        b = obj_or_bytes if isinstance(obj_or_bytes, bytes) else json.dumps(obj_or_bytes).encode()
        p.stdin.write(b + b"\n")
        p.stdin.flush()
    send(INIT)
    ok(wait_for(lambda: 1 in replies, 120), "stdio initialize")
    send(NESTED)
    send(NESTED_OBJ)
    batch = [{"jsonrpc": "2.0", "id": 20 + i, "method": "tools/call",
              "params": {"name": "hardware_spec", "arguments": {}}} for i in range(2)]
    send(batch)
    ok(wait_for(lambda: 20 in replies and 21 in replies, 200),
       "stdio: nested messages then a batch with tool calls answered")
    send({"jsonrpc": "2.0", "id": 30, "method": "m" * 99 + "\u00e9"})
    ok(wait_for(lambda: 30 in replies, 60) and "message" in replies[30][0].get("error", {}),
       "stdio: cut multi-byte method keeps its message")
    for i in range(12):
        send({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
              "params": {"name": "hardware_spec", "arguments": {}}})
    ok(wait_for(lambda: all(100 + i in replies for i in range(12)), 400),
       "stdio: 12 calls at once all answered (8 per session run, the rest wait)")
    ok(p.poll() is None, "stdio server alive")
    z = wait_for(lambda: not zombies(p.pid), 60, 0.2)
    ok(z, "stdio: no zombies")
    p.stdin.close()
    ok(p.wait(200) == 0, "stdio server exits 0 at end of input")


def main():
    try:
        attacks_http()
        attacks_bind()
        attacks_stdio()
    finally:
        for p in PROCS:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(TMP, ignore_errors=True)
    print("%d failed" % len(FAILS) if FAILS else "mcp_attacks: all checks passed")
    return min(len(FAILS), 100)


if __name__ == "__main__":
    sys.exit(main())
