#!/usr/bin/env bash
# Per-call overhead of the MCP client against the official TypeScript SDK client, the same calls
# on the same local servers in the same run: tests/server/mcp_misbehave.py's echo (a stdio
# server that answers at once) and server-everything's echo, on stdio and over Streamable HTTP.
# Prints one line per pair with the ratio SDK/ours (above 1: ours is faster).
# usage: MF_BIN=build/bin bench/mcp_bench.sh [CALLS]   (default 2000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${MF_BIN:-$here/../build/bin}
calls=${1:-2000}
"$here/../scripts/fetch-mcp-servers.sh"
export MF_MCP_NODE_MODULES=${MF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/millforge}/mcp-servers/node_modules
everything="$MF_MCP_NODE_MODULES/@modelcontextprotocol/server-everything/dist/index.js"

pair() {
  local label=$1 tool=$2 args=$3
  shift 3
  local ours sdk
  ours=$("$bin/mcp_client" "$calls" "$tool" "$args" -- "$@" | jq .per_call_us)
  sdk=$(node "$here/mcp/sdk_client.mjs" "$calls" "$tool" "$args" -- "$@" | jq .per_call_us)
  jq -cn --arg s "$label" --argjson o "$ours" --argjson k "$sdk" \
    '{server:$s, calls:'"$calls"', millforge_us:($o*10|round/10), ts_sdk_us:($k*10|round/10), ratio:($k/$o*100|round/100)}'
}
pair misbehave echo '{"text":"ping"}' python3 "$here/../tests/server/mcp_misbehave.py"
pair everything echo '{"message":"ping"}' node "$everything" stdio
# Streamable HTTP: server-everything on a free loopback port, for the run of this script.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
PORT=$port node "$everything" streamableHttp >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/mcp" && break; sleep 0.1; done
pair everything-http echo '{"message":"ping"}' "http://127.0.0.1:$port/mcp"
