#!/usr/bin/env bash
# Soak of `magpie mcp` (issue 27): 16 HTTP sessions + 1 stdio session make
# 20000 tool calls in all (cheap tools, bad arguments, a tool failure,
# cancelled calls, queue-overflow bursts) while both servers' RSS, fds,
# threads and children are sampled; exits 1 when anything grew or was left
# behind. All the work is in bench/mcp_soak.py (Python 3, stdlib only);
# options after MAGPIE go to it (--calls N, --seed S, --out DIR, --help).
#   bash bench/mcp_soak.sh build/release/magpie
#   bash bench/mcp_soak.sh build/release/magpie --calls 2000
set -eu
MAGPIE=${1:?usage: mcp_soak.sh MAGPIE [mcp_soak.py options]}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
exec python3 "$HERE/mcp_soak.py" "$MAGPIE" "$@"
