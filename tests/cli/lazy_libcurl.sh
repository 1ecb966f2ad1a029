#!/usr/bin/env bash
# libcurl is loaded on first network use, never at start-up (common/net/src/http.cpp): no program
# needs it to start, and where it cannot be loaded a command that would use the network is refused
# with MF-H001 before any work, while every other command runs as before.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY MF_STORE
fx=$MF_SOURCE_DIR/fixtures
programs=(mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store)

# No program loads libcurl at start-up: not among the libraries it names (DT_NEEDED), nor among
# those the loader brings in for them.
for p in "${programs[@]}"; do
  readelf -d "$MF_BIN/$p" >"$tmp/dynamic" || fail "readelf -d $p"
  grep -q '(NEEDED)' "$tmp/dynamic" || fail "$p: no NEEDED entries read (is it dynamic?)"
  ! grep '(NEEDED)' "$tmp/dynamic" | grep -q libcurl || fail "$p names libcurl in DT_NEEDED"
  ! ldd "$MF_BIN/$p" | grep -q libcurl || fail "$p loads libcurl at start-up: $(ldd "$MF_BIN/$p" | grep libcurl)"
done

# A libcurl.so.4 that cannot be loaded, found first through LD_LIBRARY_PATH.
mkdir "$tmp/broken"
: >"$tmp/broken/libcurl.so.4"
broken() { LD_LIBRARY_PATH=$tmp/broken${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$@"; }

# Commands without network use do not notice.
for p in "${programs[@]}"; do
  run 0 broken "$MF_BIN/$p" --version
done
run 0 broken "$MF_BIN/mf-compile" "$fx/harness/read-submit.yaml" -o "$tmp/rs.plan.json"
run 0 broken "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" \
  --model "scripted:$fx/forge/responses-valid.json" --trace "$tmp/scripted.jsonl"
run 0 broken "$MF_BIN/mf-replay" "$tmp/scripted.jsonl"

# A live model is refused before the run: one line, the library and why, exit 3, no trace.
refuse 3 MF-H001 broken "$MF_BIN/mf-run" --task "$fx/forge/task-valid.json" \
  --model "openai:$fx/profiles/local.json" --trace "$tmp/live.jsonl"
[[ $(wc -l <"$tmp/err") == 1 ]] || fail "more than one line: $(cat "$tmp/err")"
grep -q "^mf-run: error MF-H001: libcurl.so.4 cannot be loaded (.*file too short).*libcurl4" "$tmp/err" ||
  fail "the diagnostic: $(cat "$tmp/err")"
[[ ! -e $tmp/live.jsonl ]] || fail "a trace was started without libcurl"

# So is an MCP server over HTTP.
refuse 3 MF-H001 broken "$MF_BIN/mf-compile" connector discover --server http://127.0.0.1:1/mcp
echo "lazy_libcurl: ok"
