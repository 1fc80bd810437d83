"""The peer of bench/mcp_roundtrip.sh: an MCP server built on the official
Python SDK (PyPI `mcp`, MCPServer) that offers gap_analysis with Magpie's
MCP parameters and does the same work in Python, with bench/peer_gap.py's
implementation of Magpie's gap analysis (json.load of each rank trace, dict
passes), the way Magpie's own Python server does it. Run over stdio:

    python bench/mcp_sdk_server.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import peer_gap  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402

server = MCPServer("magpie-python-peer")


class _Opts:
    pass


@server.tool()
def gap_analysis(trace_dir: str, start_pct: float = 0.0, end_pct: float = 100.0, top_k: int = 20,
                 min_duration_us: float = 0.0, categories: list[str] | None = None,
                 ignore_categories: list[str] | None = None, output_dir: str | None = None,
                 generate_clamped_traces: bool = False) -> dict:
    """Top GPU kernels by total time in torch-profiler traces (Magpie's gap analysis)."""
    o = _Opts()
    o.start_pct, o.end_pct, o.min_duration_us = start_pct, end_pct, min_duration_us
    o.categories = categories or []
    o.ignore_categories = ignore_categories or []
    files = peer_gap.find_rank_files(trace_dir)
    if not files:
        return {"error": f"no trace files in {trace_dir}"}
    per_rank = []
    for rank, path in files:
        events, _ = peer_gap.load_events(path)
        kernels, total = peer_gap.analyze_rank(events, o)
        per_rank.append((rank, kernels, total))
    merged = peer_gap.merge([k for _, k, _ in per_rank])
    total = sum(t for _, _, t in per_rank)
    out_root = output_dir or os.path.dirname(os.path.abspath(trace_dir.rstrip("/")))
    out_dir = os.path.join(out_root, "gap_analysis")
    os.makedirs(out_dir, exist_ok=True)
    csv_path = os.path.join(out_dir, "gap_analysis.csv")
    top = merged[:top_k]
    peer_gap.write_csv(csv_path, top, total)
    return {
        "num_ranks": len(per_rank),
        "total_duration_us": total,
        "top_kernels": [{"name": k["name"], "calls": k["calls"], "total_us": k["total"],
                         "avg_us": peer_gap.avg(k), "min_us": min(k["durs"]),
                         "max_us": max(k["durs"])} for k in top],
        "output_dir": out_dir,
        "errors": [],
        "csv_file": csv_path,
    }


if __name__ == "__main__":
    server.run()
