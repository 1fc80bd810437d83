#!/usr/bin/env python3
"""A stand-in OpenAI-compatible streaming server with a known capacity.

At most --capacity requests are served at once; the rest wait in a FIFO
queue (their TTFT includes the wait), so the throughput of a concurrency
sweep rises until the capacity and is flat after it, and TTFT jumps there:
the knee and the SLA answer are known exactly. A served request takes
--ttft-ms to its first token, then one token every --itl-ms (max_tokens
tokens, or --tokens), each its own SSE event, then a usage chunk and
[DONE]. --scale multiplies both (a known change for A/B runs; --ttft-scale
the TTFT alone); with
--scale-file the factor is read from that file at each request's start (a
drift the caller switches). --cpu-ms burns that much CPU per token, so the
server's speed depends on the machine's load. GET /metrics answers with
vLLM's names (running, waiting, KV-cache use = running / capacity, token
counters), so a sweep's engine metrics have a truth: waiting is 0 up to the
capacity and grows past it.

usage: capacity_server.py [--port N] [--port-file F] [--capacity N]
                          [--ttft-ms X] [--itl-ms X] [--tokens N] [--scale F] [--ttft-scale F]
                          [--scale-file F] [--cpu-ms X] [--exit-after-s S]
"""
import argparse
import asyncio
import json
import os
import sys
import time


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--capacity", type=int, default=4)
    p.add_argument("--ttft-ms", type=float, default=50)
    p.add_argument("--itl-ms", type=float, default=10)
    p.add_argument("--tokens", type=int, default=0)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--ttft-scale", type=float, default=1.0)
    p.add_argument("--scale-file")
    p.add_argument("--cpu-ms", type=float, default=0)
    p.add_argument("--exit-after-s", type=float, default=600)
    return p.parse_args()


ARGS = parse_args()
SLOTS = None  # asyncio.Semaphore, made inside the loop
MAX_BODY = 1 << 20
STATE = {"running": 0, "waiting": 0, "prompt": 0, "generation": 0}


def scale():
    if ARGS.scale_file:
        try:
            with open(ARGS.scale_file) as f:
                return float(f.read().strip() or 1)
        except (OSError, ValueError):
            return ARGS.scale
    return ARGS.scale


def burn(ms):
    end = time.perf_counter() + ms / 1000
    x = 0
    while time.perf_counter() < end:
        x += 1
    return x


def chunk(data):
    return b"%x\r\n%s\r\n" % (len(data), data)


def event(obj):
    return chunk(b"data: " + json.dumps(obj).encode() + b"\n\n")


async def stream(writer, req, chat):
    n = ARGS.tokens or int(req.get("max_completion_tokens") or req.get("max_tokens") or 16)
    prompt = req.get("prompt", "")
    if chat:
        prompt = " ".join(m.get("content", "") for m in req.get("messages", []))
    plen = len(prompt) if isinstance(prompt, list) else len(str(prompt).split())
    f = scale()
    STATE["waiting"] += 1
    async with SLOTS:
        STATE["waiting"] -= 1
        STATE["running"] += 1
        STATE["prompt"] += plen
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                     b"transfer-encoding: chunked\r\n\r\n")
        t0 = time.perf_counter()
        due = ARGS.ttft_ms * f * ARGS.ttft_scale / 1000
        for i in range(n):
            wait = t0 + due - time.perf_counter()
            if wait > 0:
                await asyncio.sleep(wait)
            if ARGS.cpu_ms:
                burn(ARGS.cpu_ms * f)
            if chat:
                c = {"index": 0, "delta": {"content": " tok"}, "finish_reason": None}
            else:
                c = {"index": 0, "text": " tok", "logprobs": None, "finish_reason": None}
            writer.write(event({"id": "cmpl-1", "object": "text_completion", "model": "cap",
                                "choices": [c]}))
            await writer.drain()
            due += ARGS.itl_ms * f / 1000
        writer.write(event({"id": "cmpl-1", "choices": [],
                            "usage": {"prompt_tokens": plen, "completion_tokens": n,
                                      "total_tokens": plen + n}}))
        writer.write(chunk(b"data: [DONE]\n\n") + chunk(b""))
        STATE["generation"] += n
        STATE["running"] -= 1
        await writer.drain()


async def reply(writer, status, body):
    data = json.dumps(body).encode()
    writer.write(b"HTTP/1.1 %d X\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n"
                 % (status, len(data)) + data)
    await writer.drain()


async def metrics(writer):
    """vLLM's names: running / waiting requests, KV-cache use as the share of
    the capacity in use, token counters."""
    s = STATE
    text = ("# TYPE vllm:num_requests_running gauge\n"
            f'vllm:num_requests_running{{model_name="cap"}} {s["running"]}\n'
            "# TYPE vllm:num_requests_waiting gauge\n"
            f'vllm:num_requests_waiting{{model_name="cap"}} {s["waiting"]}\n'
            "# TYPE vllm:kv_cache_usage_perc gauge\n"
            f'vllm:kv_cache_usage_perc{{model_name="cap"}} {s["running"] / ARGS.capacity}\n'
            "# TYPE vllm:prompt_tokens_total counter\n"
            f'vllm:prompt_tokens_total{{model_name="cap"}} {s["prompt"]}\n'
            "# TYPE vllm:generation_tokens_total counter\n"
            f'vllm:generation_tokens_total{{model_name="cap"}} {s["generation"]}\n').encode()
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain; version=0.0.4\r\n"
                 b"content-length: %d\r\n\r\n" % len(text) + text)
    await writer.drain()


async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            length = 0
            for h in lines[1:]:
                if h.lower().startswith("content-length:"):
                    length = int(h.split(":", 1)[1])
            if length > MAX_BODY:
                await reply(writer, 413, {"error": "too large"})
                break
            body = await reader.readexactly(length) if length else b""
            if method == "GET" and path == "/v1/models":
                await reply(writer, 200, {"object": "list", "data": [{"id": "cap", "root": "cap"}]})
            elif method == "GET" and path == "/metrics":
                await metrics(writer)
            elif path in ("/health", "/ping"):
                await reply(writer, 200, {})
            elif method == "POST" and path in ("/v1/completions", "/v1/chat/completions"):
                await stream(writer, json.loads(body or b"{}"), path.endswith("chat/completions"))
            else:
                await reply(writer, 404, {"error": "not found"})
    except (asyncio.IncompleteReadError, ConnectionError, ValueError):
        pass
    finally:
        writer.close()


async def main():
    global SLOTS
    SLOTS = asyncio.Semaphore(ARGS.capacity)
    server = await asyncio.start_server(handle, "127.0.0.1", ARGS.port, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    if ARGS.port_file:
        tmp = ARGS.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write(str(port))
        os.replace(tmp, ARGS.port_file)
    async with server:
        await asyncio.sleep(ARGS.exit_after_s)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        sys.exit(0)
