#!/usr/bin/env bash
# Installs the MCP reference servers (@modelcontextprotocol/server-everything, server-filesystem)
# and the official TypeScript SDK (@modelcontextprotocol/sdk), pinned by tests/mcp/npm's
# package.json and package-lock.json, for the MCP client's tests and bench/mcp. Nothing enters the
# source tree: the default destination is a cache directory, DEST/node_modules holds the packages.
# Idempotent: a destination whose VERSION is the sha256 of this lock file is left alone; an install
# goes into DEST.new and replaces DEST only once it succeeded, so a failed one leaves nothing half done.
#
# usage: scripts/fetch-mcp-servers.sh [DEST]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src="$here/../tests/mcp/npm"
dest=${1:-${MF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/millforge}/mcp-servers}

version=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
[ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$version" ] && exit 0
command -v npm >/dev/null || { echo "fetch-mcp-servers: npm not found" >&2; exit 1; }

new="$dest.new"
rm -rf "$new"
trap 'rm -rf "$new"' EXIT
mkdir -p "$new"
cp "$src/package.json" "$src/package-lock.json" "$new/"
(cd "$new" && npm ci --no-audit --no-fund --silent >/dev/null)
echo "$version" >"$new/VERSION"
rm -rf "$dest"
mv "$new" "$dest"
