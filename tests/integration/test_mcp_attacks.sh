#!/usr/bin/env bash
# The attacks of issue 27 against `magpie mcp` (tests/integration/mcp_attacks.py):
# deeply nested messages then tool calls on HTTP and stdio, uploads refused on
# their headers (foreign Origin or Host, no token, oversized Content-Length),
# slow-header and idle-socket floods, 200 tool calls at once, zombies after
# probe-running calls, an initialize flood against a session in use, cut
# multi-byte messages, a non-loopback bind without a token, the token file
# and the token kept from tools. Run under the ASan build by ctest.
set -u
: "${MAGPIE:?}"
command -v python3 >/dev/null || { echo "python3 missing"; exit 1; }
exec python3 "$(dirname "$0")/mcp_attacks.py"
