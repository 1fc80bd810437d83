"""MCP client checks for `magpie mcp`, driven by the official MCP Python SDK.

Usage (see tests/integration/test_mcp.sh):
  mcp_client.py tools   --stdio MAGPIE | --url URL  --mode legacy|auto  --data DIR --work DIR
  mcp_client.py cancel  --stdio MAGPIE | --url URL  --mode legacy|auto  --src SRC --work DIR
  mcp_client.py sessions --url URL -n 16
  mcp_client.py bench   --cmd 'SERVER CMD' --trace-dir DIR --runs N   (bench/mcp_roundtrip.sh)
  mcp_client.py call    --stdio MAGPIE [--sdk] [--json] TOOL ARGS-JSON [TOOL ARGS-JSON ...]
                        (test_ray.sh, test_kernel_container.sh)

Prints one line per check ("ok ..." / "FAIL ...") and exits 1 when any check failed.

call runs the tool calls in one stdio session and prints each result's text
(with --json one line per call: {"isError": ..., "text": ...}), in the order
given. Without --sdk it speaks raw JSON-RPC and needs no SDK: every call is
sent at once and stdin stays open until all the answers are in.
"""
import argparse
import asyncio
import json
import os
import shlex
import subprocess
import sys
import time

try:  # the SDK: every mode but a raw `call`
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
except ImportError:
    anyio = Client = StdioServerParameters = None

FAILS = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILS.append(what)


def server_of(args):
    if args.url:
        return args.url
    return StdioServerParameters(command=args.stdio, args=["mcp"], env=dict(os.environ))


def payload(res):
    """The tool's JSON: structuredContent when there, else the text content."""
    if res.structured_content is not None:
        sc = res.structured_content
        return sc
    return json.loads(res.content[0].text)


MAGPIE_TOOLS = {"hardware_spec", "analyze", "compare", "create_kernel_config", "gap_analysis",
                "list_benchmark_images", "benchmark", "list_benchmark_results", "get_benchmark_result",
                "discover_kernels", "suggest_optimizations"}
OWN_TOOLS = {"trace_report", "trace_split", "trace_stages", "trace_collective", "find_kernel_sources"}


async def run_tools(args):
    data, work = args.data, args.work
    async with Client(server_of(args), mode=args.mode, read_timeout_seconds=600) as c:
        tag = f"[{args.mode} {'http' if args.url else 'stdio'} {c.protocol_version}]"
        want = "2026-07-28" if args.mode == "auto" else "2025-11-25"
        check(c.protocol_version == want, f"{tag} negotiated {c.protocol_version}, want {want}")
        tl = await c.list_tools()
        names = {t.name for t in tl.tools}
        check(MAGPIE_TOOLS | OWN_TOOLS <= names, f"{tag} tools/list has {sorted(names)}")
        check(not any("not implemented" in (t.description or "").lower() for t in tl.tools),
              f"{tag} no stub tools")
        gap = next(t for t in tl.tools if t.name == "gap_analysis")
        props = gap.input_schema["properties"]
        check(props["top_k"].get("default") == 20 and gap.input_schema.get("required") == ["trace_dir"],
              f"{tag} gap_analysis schema: top_k default 20, trace_dir required")

        r = await c.call_tool("hardware_spec", {})
        p = payload(r)
        check(not r.is_error and "gpu_count" in p, f"{tag} hardware_spec gpu_count={p.get('gpu_count')}")

        progress = []

        async def on_progress(done, total, message):
            progress.append((done, total, message))

        tp2 = os.path.join(data, "h200-tp2", "torch_trace")
        r = await c.call_tool("gap_analysis", {"trace_dir": tp2, "top_k": 5,
                                               "output_dir": os.path.join(work, "gap")},
                              progress_callback=on_progress)
        p = payload(r)
        keys = {"num_ranks", "total_duration_us", "top_kernels", "output_dir", "errors", "csv_file"}
        check(not r.is_error and keys <= set(p) and p["num_ranks"] == 2 and len(p["top_kernels"]) == 5
              and os.path.exists(p["csv_file"]),
              f"{tag} gap_analysis keys {sorted(keys - set(p)) or 'all'}; ranks {p.get('num_ranks')}")
        check(len(progress) > 0, f"{tag} gap_analysis progress notifications: {len(progress)}")
        text = json.loads(r.content[0].text)
        check(text == p, f"{tag} text content equals structuredContent")

        trace = os.path.join(data, "h200", "mixtral_shape_l8_bs16_p256_d12.json.gz")
        r = await c.call_tool("trace_report", {"trace_path": trace, "output_dir": os.path.join(work, "rep"),
                                               "gpu_arch": "H200"})
        p = payload(r)
        check(not r.is_error and p["gpu_events"] > 0 and os.path.exists(p["html"])
              and p["gpu_timeline"]["total_us"] > 0, f"{tag} trace_report gpu_events={p.get('gpu_events')}")

        r = await c.call_tool("trace_split", {"trace_path": trace, "output_dir": os.path.join(work, "split"),
                                              "num_steps": 8, "concurrency": 16})
        p = payload(r)
        check(not r.is_error and len(p.get("files", [])) > 0, f"{tag} trace_split files={len(p.get('files', []))}")

        st = os.path.join(work, "stages", "torch_trace")
        os.makedirs(st, exist_ok=True)
        dst = os.path.join(st, os.path.basename(trace))
        if not os.path.exists(dst):
            os.symlink(trace, dst)
        r = await c.call_tool("trace_stages", {"trace_dir": st, "output_dir": os.path.join(work, "stages"),
                                               "num_steps": 8, "concurrency": 16, "input_len": 256,
                                               "output_len": 12})
        p = payload(r)
        check(not r.is_error and "stage_results" in p, f"{tag} trace_stages keys {sorted(p)[:6]}")

        r = await c.call_tool("trace_collective", {"trace_dir": tp2, "output_dir": os.path.join(work, "coll")})
        p = payload(r)
        check(not r.is_error and p["world_size"] == 2 and len(p["csv_files"]) > 0,
              f"{tag} trace_collective world_size={p.get('world_size')}")

        # discover_kernels, suggest_optimizations, find_kernel_sources on real data
        r = await c.call_tool("discover_kernels", {"project_path": os.path.join(args.src, "examples", "kernels"),
                                                   "kernel_type": "all"})
        p = payload(r)
        found = p.get("result", []) if isinstance(p, dict) else p
        vadd = [e for e in found if e.get("source_file", "").endswith("opencl/vadd.cl")]
        check(not r.is_error and vadd and {"source_file", "possible_binaries", "suggested_config"} <= set(vadd[0])
              and vadd[0]["suggested_config"].get("kernel_name") == "vadd",
              f"{tag} discover_kernels found {len(found)} files")
        ncu = os.path.join(args.src, "tests", "fixtures", "kernel", "ncu_h200_harness_base_units.csv")
        r = await c.call_tool("suggest_optimizations", {"analysis_result": "", "ncu_csv_path": ncu,
                                                        "kernel_id": "vadd"})
        p = payload(r)
        mb = [b for b in p.get("bottlenecks", []) if b.get("type") == "memory_bound"]
        check(not r.is_error and mb and mb[0]["metric"].startswith("gpu__compute_memory_throughput")
              and {"kernel_id", "overall_score", "suggestions", "summary"} <= set(p),
              f"{tag} suggest_optimizations on the H200 ncu recording: {[b.get('type') for b in p.get('bottlenecks', [])]}")
        r = await c.call_tool("suggest_optimizations", {"analysis_result": "{not json"})
        check(r.is_error and "Invalid JSON input" in r.content[0].text, f"{tag} suggest_optimizations bad JSON")
        fx = os.path.join(args.src, "tests", "fixtures", "sources")
        r = await c.call_tool("find_kernel_sources", {
            "kernel_names": ["void mylib::rms_norm_kernel<float>(float*, float const*, int)",
                             "nvjet_tst_128x64_64x8_1x2_h_bz_coopA_NTT"],
            "kernel_source_repos": [os.path.join(fx, "hipproj")], "no_cache": True})
        p = payload(r)
        ks = p.get("kernels", [])
        check(not r.is_error and len(ks) == 2 and ks[0]["source_file"] == "src/kernels.cu"
              and ks[0]["source_line"] == 26 and ks[1]["source_resolution"] == "closed",
              f"{tag} find_kernel_sources {[(k.get('source_resolution'), k.get('source_file')) for k in ks]}")
        r = await c.call_tool("find_kernel_sources", {"trace_path": os.path.join(tp2, "tp2-rank-0.1796011317.pt.trace.json.gz")})
        p = payload(r)
        check(not r.is_error and p.get("total", 0) > 0 and p.get("closed", 0) > 0,
              f"{tag} find_kernel_sources on a real trace: total={p.get('total')} closed={p.get('closed')}")
        r = await c.call_tool("gap_analysis", {"trace_dir": tp2, "top_k": 3, "start_pct": 40, "end_pct": 60,
                                               "output_dir": os.path.join(work, "gapc"),
                                               "generate_clamped_traces": True})
        p = payload(r)
        cf = p.get("clamped_trace_files", [])
        check(not r.is_error and len(cf) == 2 and all(os.path.exists(f) and "_clamped_40.0_60.0.trace.json.gz" in f
                                                      for f in cf),
              f"{tag} gap_analysis generate_clamped_traces: {cf}")

        kdir = os.path.join(args.src, "examples", "kernels", "opencl")
        r = await c.call_tool("create_kernel_config", {"kernel_id": "vadd", "kernel_path": f"{kdir}/vadd.cl",
                                                       "testcase_command": "true", "kernel_type": "opencl"})
        p = payload(r)
        check(not r.is_error and "kernels:" in p["config_content"] and "usage" in p,
              f"{tag} create_kernel_config")

        r = await c.call_tool("list_benchmark_images", {"framework": "vllm"})
        p = payload(r)
        check(not r.is_error and "vllm" in p["images"] and "sm_90" in p["images"]["vllm"],
              f"{tag} list_benchmark_images")

        common = {"kernel_type": "opencl", "reference": f"{kdir}/vadd_ref.cl", "size": 100003,
                  "check_performance": False, "max_time_s": 0.5, "output_dir": os.path.join(work, "kres")}
        r = await c.call_tool("analyze", dict(common, kernel_path=f"{kdir}/vadd.cl"))
        p = payload(r)
        check(not r.is_error and p.get("correctness_state") == "SUCCESS" and "kernel_config" in p,
              f"{tag} analyze correctness_state={p.get('correctness_state')} {p.get('error', '')}")
        r = await c.call_tool("compare", dict(common, kernel_paths=[f"{kdir}/vadd.cl", f"{kdir}/vadd_offbyone.cl"]))
        p = payload(r)
        verdicts = p.get("comparison_metrics", {}).get("verdicts")
        check(not r.is_error and verdicts and verdicts[1] == "INCORRECT" and len(p["kernel_configs"]) == 2,
              f"{tag} compare verdicts={verdicts} {p.get('error', '')}")

        # a serving benchmark against the stand-in engine (tests/tools/fake_engine.py as
        # `vllm` on PATH), then the result tools on its workspace
        progress.clear()
        bres = os.path.join(work, "bres")
        port = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "free_port.py")],
                              check=True, capture_output=True, text=True).stdout.strip()
        r = await c.call_tool("benchmark", {"framework": "vllm", "model": "fake-model", "run_mode": "local",
                                            "concurrency": 4, "input_len": 32, "output_len": 16,
                                            "num_prompts": 8, "torch_profiler": False,
                                            "output_dir": bres, "extra_envs": {"PORT": port}},
                              progress_callback=on_progress)
        p = payload(r)
        check(not r.is_error and p.get("success") is True and "summary_text" in p and "throughput" in p,
              f"{tag} benchmark success={p.get('success')} {p.get('error', '')} {str(p.get('errors', ''))[:200]}")
        check(len(progress) > 0, f"{tag} benchmark progress notifications: {len(progress)}")
        r = await c.call_tool("list_benchmark_results", {"output_dir": bres})
        p = payload(r)
        keys = {"workspace", "name", "framework", "timestamp", "config", "success", "model", "execution_time",
                "throughput", "latency", "top_bottlenecks", "errors", "has_torch_trace", "has_tracelens"}
        run0 = (p.get("runs") or [{}])[0]
        check(not r.is_error and p.get("total_found") == 1 and keys <= set(run0),
              f"{tag} list_benchmark_results found={p.get('total_found')} missing={sorted(keys - set(run0))}")
        if run0.get("workspace"):
            r = await c.call_tool("get_benchmark_result", {"workspace_dir": run0["workspace"]})
            p = payload(r)
            check(not r.is_error and p.get("success") is True and "summary_text" in p
                  and "tracelens_files" in p, f"{tag} get_benchmark_result")
        r = await c.call_tool("get_benchmark_result", {"workspace_dir": os.path.join(work, "nope")})
        check(r.is_error, f"{tag} get_benchmark_result of a missing workspace -> isError")

        # bad arguments: isError results with a message, never a protocol failure
        for name, a, needle in [("gap_analysis", {}, "missing required argument 'trace_dir'"),
                                ("gap_analysis", {"trace_dir": 5}, "must be a string"),
                                ("gap_analysis", {"trace_dir": "/nonexistent/x"}, "gap analysis failed"),
                                ("compare", {"kernel_paths": ["a.cl"]}, "at least 2"),
                                ("trace_report", {"trace_path": trace, "output_dir": work, "bogus": 1},
                                 "unknown argument 'bogus'")]:
            r = await c.call_tool(name, a)
            msg = r.content[0].text if r.content else ""
            check(r.is_error and needle in msg, f"{tag} bad args {name} {a} -> isError: {msg[:100]}")
        try:
            await c.call_tool("no_such_tool", {})
            check(False, f"{tag} unknown tool is an error")
        except Exception as e:  # the SDK raises MCPError for a JSON-RPC error
            check("Unknown tool" in str(e), f"{tag} unknown tool -> {str(e)[:60]}")
        if args.mode == "legacy":
            await c.send_ping()
            check(True, f"{tag} ping")


def worker_pids(marker, pids=()):
    """Live processes (zombies included) whose command line names marker, or in pids."""
    out = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True).stdout
    found = []
    for l in out.splitlines()[1:]:
        f = l.split(None, 2)
        if len(f) == 3 and (marker in f[2] or int(f[0]) in pids) and "ps -eo" not in f[2]:
            found.append(l)
    return found


def compare_workers():
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return {int(l.split()[0]) for l in out.splitlines()[1:] if "mcp --worker compare" in l}


async def run_cancel(args):
    """Starts a long compare, cancels it after its first progress notification and
    checks that nothing it started is left running (nor left as a zombie)."""
    kdir = os.path.join(args.src, "examples", "kernels", "opencl")
    marker = os.path.join(args.work, "cancel-marker")
    os.makedirs(marker, exist_ok=True)
    async with Client(server_of(args), mode=args.mode, read_timeout_seconds=600) as c:
        tag = f"[{args.mode} {'http' if args.url else 'stdio'} {c.protocol_version}]"
        started = anyio.Event()

        async def on_progress(done, total, message):
            started.set()

        a = {"kernel_paths": [f"{kdir}/vadd_chain2.cl", f"{kdir}/vadd.cl", f"{kdir}/vadd_slow.cl"],
             "kernel_type": "opencl", "reference": f"{kdir}/vadd_ref.cl", "size": 2000003,
             "check_performance": False, "max_time_s": 60, "output_dir": marker}
        t0 = time.monotonic()
        before = set()
        with anyio.move_on_after(120):
            async with anyio.create_task_group() as tg:
                async def call():
                    await c.call_tool("compare", a, progress_callback=on_progress)
                tg.start_soon(call)
                await started.wait()
                harness = []
                for _ in range(300):  # until the timing children run (compile first)
                    harness = worker_pids(marker)
                    if harness:
                        break
                    await anyio.sleep(0.1)
                before = compare_workers()
                check(len(before) > 0 and len(harness) > 0,
                      f"{tag} compare running: {len(before)} worker(s), {len(harness)} harness process(es)")
                tg.cancel_scope.cancel()
        # the server must still answer, and the worker tree must be gone
        gone = False
        for _ in range(100):
            if not worker_pids(marker, before):
                gone = True
                break
            await anyio.sleep(0.1)
        check(gone, f"{tag} cancelled compare left no process ({time.monotonic() - t0:.1f} s): "
              f"{worker_pids(marker, before)[:3]}")
        r = await c.call_tool("hardware_spec", {})
        check(not r.is_error, f"{tag} server answers after the cancellation")


async def run_sessions(args):
    results = []

    async def one(i):
        async with Client(args.url, mode="legacy", read_timeout_seconds=120) as c:
            tl = await c.list_tools()
            r = await c.call_tool("list_benchmark_images", {})
            results.append(len(tl.tools) > 0 and not r.is_error)

    async with anyio.create_task_group() as tg:
        for i in range(args.n):
            tg.start_soon(one, i)
    check(len(results) == args.n and all(results), f"{args.n} concurrent HTTP sessions: {sum(results)} ok")


async def run_bench(args):
    """Round trips over stdio: tools/list and gap_analysis, timed per call."""
    cmd = shlex.split(args.cmd)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=dict(os.environ))
    out = {"server": " ".join(cmd)}
    async with Client(params, mode="legacy", read_timeout_seconds=600) as c:
        await c.list_tools()
        for name, fn in [("tools_list", lambda: c.list_tools(cache_mode="bypass")),
                         ("gap_analysis", lambda: c.call_tool("gap_analysis", {"trace_dir": args.trace_dir,
                                                                               "top_k": 20,
                                                                               "output_dir": args.work}))]:
            ts = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                r = await fn()
                ts.append((time.perf_counter() - t0) * 1e3)
                if name == "gap_analysis" and r.is_error:
                    raise SystemExit("gap_analysis failed: " + r.content[0].text)
            ts.sort()
            out[name] = {"runs": len(ts), "median_ms": ts[len(ts) // 2], "min_ms": ts[0], "max_ms": ts[-1]}
    print(json.dumps(out))


def call_pairs(args):
    if len(args.calls) % 2:
        raise SystemExit("call: TOOL ARGS-JSON pairs expected")
    return [(args.calls[i], json.loads(args.calls[i + 1])) for i in range(0, len(args.calls), 2)]


def print_result(args, is_error, text):
    print(json.dumps({"isError": bool(is_error), "text": text}) if args.json else text, flush=True)


def run_call_raw(args):
    """The calls over raw stdio JSON-RPC: ids 2, 3, ... sent at once."""
    calls = call_pairs(args)
    p = subprocess.Popen([args.stdio, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)

    def send(m):
        p.stdin.write(json.dumps(m) + "\n")
        p.stdin.flush()

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "t", "version": "1"}}})
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i, (tool, targs) in enumerate(calls):
        send({"jsonrpc": "2.0", "id": i + 2, "method": "tools/call",
              "params": {"name": tool, "arguments": targs}})
    answers = {}
    for line in p.stdout:
        m = json.loads(line)
        if isinstance(m.get("id"), int) and 2 <= m["id"] < len(calls) + 2:
            answers[m["id"]] = m
            if len(answers) == len(calls):
                break
    p.stdin.close()
    p.wait()
    for i in range(len(calls)):
        r = answers.get(i + 2, {}).get("result", {})
        print_result(args, r.get("isError"), (r.get("content") or [{}])[0].get("text", ""))


async def run_call_sdk(args):
    """The calls through the SDK client, one after the other."""
    async with Client(server_of(args), mode="legacy", read_timeout_seconds=280) as c:
        for tool, targs in call_pairs(args):
            r = await c.call_tool(tool, targs)
            print_result(args, r.is_error, r.content[0].text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["tools", "cancel", "sessions", "bench", "call"])
    ap.add_argument("--stdio")
    ap.add_argument("--url")
    ap.add_argument("--mode", default="legacy")
    ap.add_argument("--data")
    ap.add_argument("--src")
    ap.add_argument("--work", default="/tmp")
    ap.add_argument("-n", type=int, default=16)
    ap.add_argument("--trace-dir")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--cmd", help="bench: the server command line (shell words)")
    ap.add_argument("--sdk", action="store_true", help="call: through the SDK client")
    ap.add_argument("--json", action="store_true", help="call: one JSON line per result")
    ap.add_argument("calls", nargs="*", help="call: TOOL ARGS-JSON pairs")
    args = ap.parse_intermixed_args()
    if args.what == "call" and not args.sdk:
        run_call_raw(args)
        return
    fn = {"tools": run_tools, "cancel": run_cancel, "sessions": run_sessions, "bench": run_bench,
          "call": run_call_sdk}[args.what]
    anyio.run(fn, args)
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
