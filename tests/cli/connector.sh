#!/usr/bin/env bash
# MCP connectors (docs/connectors.md) against real servers: the reference servers from npm
# (server-everything, server-filesystem; scripts/fetch-mcp-servers.sh installs the pinned
# versions) and tests/server/mcp_misbehave.py, a server that misbehaves on purpose. Discovery,
# admission and its refusals, compiling against the manifest, runs whose calls reach the live
# server with connector evidence in the trace, drift refused before the first call, and every
# failure of a server a diagnostic or a tool error: nothing hangs, crashes or outlives its run.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
unset MF_STORE MF_FIXED_CLOCK

cx=$MF_SOURCE_DIR/fixtures/connector
compile="$MF_BIN/mf-compile"
runner="$MF_BIN/mf-run"
replay="$MF_BIN/mf-replay"
modules=${MF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/millforge}/mcp-servers/node_modules
[[ -d $modules/@modelcontextprotocol ]] || "$MF_SOURCE_DIR/scripts/fetch-mcp-servers.sh"
everything="node $modules/@modelcontextprotocol/server-everything/dist/index.js stdio"
filesystem="node $modules/@modelcontextprotocol/server-filesystem/dist/index.js"
misbehave=$MF_SOURCE_DIR/tests/server/mcp_misbehave.py
http_misbehave=$MF_SOURCE_DIR/tests/server/mcp_http_misbehave.py
mkdir -p "$tmp/ws"
# The HTTP servers started below end with this script.
servers=()
trap '((${#servers[@]} == 0)) || kill "${servers[@]}" 2>/dev/null
      [[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"' EXIT
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# one_tool_policy ID TOOL : a policy of connector ID admitting its read-only TOOL under ID.read.
one_tool_policy() {
  jq -n --arg id "$1" --arg t "$2" '{schema_version:"1.0", kind:"millforge_connector_policy",
    connector_id:$id, allowed_capabilities:["\($id).read"],
    tools:[{provider_tool_name:$t, required_capabilities:["\($id).read"],
            side_effect_class:"read_only", idempotency:"idempotent"}]}'
}
# alive MARK : whether some process's command line holds MARK.
alive() { pgrep -f -- "$1" >/dev/null; }
# gone_soon MARK : no process holds MARK within a second (the time a SIGKILLed process of a
# loaded machine needs to be reaped); else the survivors are shown.
gone_soon() {
  for _ in $(seq 10); do
    alive "$1" || return 0
    sleep 0.1
  done
  ps -o pid,ppid,stat,etime,args -p "$(pgrep -d, -f -- "$1")" >&2 || true
  return 1
}

# --- The reference server: discover, admit, compile, run, replay ---
run 0 "$compile" connector discover --server "$everything"
cp "$tmp/out" "$tmp/snap.json"
jq -e '.kind == "millforge_connector_snapshot" and .server_name == "mcp-servers/everything"
       and (.protocol_version | IN("2025-11-25","2025-06-18","2025-03-26","2024-11-05"))
       and ([.tools[].tool.name] | index("echo") != null)
       and ([.tools[].tool.name] == ([.tools[].tool.name] | sort))' "$tmp/snap.json" >/dev/null ||
  fail "snapshot of server-everything"
run 0 "$compile" connector discover --server "$everything"
cmp -s "$tmp/out" "$tmp/snap.json" || fail "two discoveries of one server differ"

run 0 "$compile" connector admit "$tmp/snap.json" --policy "$cx/everything.policy.json"
cp "$tmp/out" "$tmp/manifest.json"
jq -e '[.tools[].tool_id] == ["mcp.everything.echo","mcp.everything.get_sum"]
       and all(.tools[]; .connector.server_name == "mcp-servers/everything"
                         and (.input_schema | has("$schema") | not))' "$tmp/manifest.json" \
  >/dev/null || fail "manifest of the reference server"
run 0 "$compile" "$cx/everything.yaml" --catalog builtin --catalog "$tmp/manifest.json" -o -
cp "$tmp/out" "$tmp/plan.json"
jq -e '[.nodes[] | select(.connector) | .connector.provider_tool_name] | sort == ["echo","get-sum"]' \
  "$tmp/plan.json" >/dev/null || fail "plan nodes carry their connector pins"

run 0 "$runner" --plan "$tmp/plan.json" --model "scripted:$cx/run-ok.json" \
  --request "$cx/request.json" --workspace "$tmp/ws" --trace "$tmp/t.jsonl" --fixed-clock \
  --run-id conn1 --trace-content inline
jq -e '.terminal == "completed" and .result.summary == "The sum is 42."' "$tmp/out" >/dev/null ||
  fail "connector run did not complete"
jq -se '[.[] | select(.event == "tool_completed") | .record.connector | select(.)] as $c
        | ($c | length) == 2 and $c[0].provider_tool_name == "echo"
        and all($c[]; (.request_sha256 | length) == 64 and (.response_sha256 | length) == 64)' \
  "$tmp/t.jsonl" >/dev/null || fail "trace lacks connector evidence"
run 0 "$replay" --strict --plan "$tmp/plan.json" --workspace "$tmp/ws" "$tmp/t.jsonl"
jq -e '.status == "identical"' "$tmp/out" >/dev/null || fail "strict replay of a connector run"

# Projected: the connector's tools are mcp_tool units, shown turn by turn like any tool.
cat "$cx/everything.yaml" - >"$tmp/projected.yaml" <<'YAML'
projection:
  units:
    - {id: "mcp_tool:echo", activation: always, mandatory: true}
    - {id: "mcp_tool:get_sum", triggers: [{signal: "succeeded:echo", weight: 100}]}
    - {id: "tool:submit", triggers: [{signal: "succeeded:add", weight: 100}]}
YAML
run 0 "$compile" "$tmp/projected.yaml" --catalog builtin --catalog "$tmp/manifest.json" -o -
cp "$tmp/out" "$tmp/pplan.json"
run 0 "$runner" --plan "$tmp/pplan.json" --model "scripted:$cx/run-ok.json" \
  --request "$cx/request.json" --workspace "$tmp/ws" --trace "$tmp/pt.jsonl" --fixed-clock \
  --run-id conn3 --trace-content inline
jq -e '.terminal == "completed"' "$tmp/out" >/dev/null || fail "projected connector run"
jq -se '[.[] | select(.event == "projection_compiled")] as $p | ($p | length) == 3
        and ($p[0].active_units | index("mcp_tool:echo")) and ($p[0].visible | index("get_sum") | not)
        and ($p[1].active_units | index("mcp_tool:get_sum"))' "$tmp/pt.jsonl" >/dev/null ||
  fail "connector tools are not projected as mcp_tool units"
run 0 "$replay" --strict --plan "$tmp/pplan.json" --workspace "$tmp/ws" "$tmp/pt.jsonl"
jq -e '.status == "identical"' "$tmp/out" >/dev/null || fail "strict replay of a projected run"
sed -i 's/mcp_tool:echo/tool:echo/' "$tmp/projected.yaml"
refuse 2 MF-P002 "$compile" "$tmp/projected.yaml" --catalog builtin --catalog "$tmp/manifest.json" -o -
grep -q "is a connector tool: mcp_tool:echo" "$tmp/err" || fail "tool: unit of a connector tool"

# The filesystem server: its tools admitted from a snapshot confined to one directory.
run 0 "$compile" connector discover --server "$filesystem $tmp/ws"
jq -e '.server_name == "secure-filesystem-server" and
       ([.tools[].tool.name] | index("read_text_file") != null)' "$tmp/out" >/dev/null ||
  fail "snapshot of server-filesystem"
cp "$tmp/out" "$tmp/fs-snap.json"
one_tool_policy fs list_allowed_directories >"$tmp/fs-policy.json"
run 0 "$compile" connector admit "$tmp/fs-snap.json" --policy "$tmp/fs-policy.json"
jq -e '.tools[0].tool_id == "mcp.fs.list_allowed_directories"' "$tmp/out" >/dev/null ||
  fail "filesystem manifest"

# A policy's soft_errors: the filesystem server's answer for a file that does not exist is a
# resolution error (error_kind "soft"): fed back, no tool-error budget spent. Two misses where
# max_tool_errors is 1, then the file: the run completes and replays strictly.
echo "Paris." >"$tmp/ws/france.txt"
jq -n '{schema_version:"1.0", kind:"millforge_connector_policy", connector_id:"fs",
  allowed_capabilities:["fs.read"],
  tools:[{provider_tool_name:"read_text_file", required_capabilities:["fs.read"],
          side_effect_class:"read_only", idempotency:"idempotent", soft_errors:["ENOENT"]}]}' \
  >"$tmp/fs-soft-policy.json"
run 0 "$compile" connector admit "$tmp/fs-snap.json" --policy "$tmp/fs-soft-policy.json"
cp "$tmp/out" "$tmp/fs-soft.json"
jq -e '.tools[0].connector.soft_errors == ["ENOENT"]' "$tmp/fs-soft.json" >/dev/null ||
  fail "soft_errors are not pinned with the connector"
sed -e 's/mcp.everything.echo@1/mcp.fs.read_text_file@1/' -e '/^    add:/,/- node_id: echo/d' \
  -e 's/- node_id: add/- node_id: echo/' "$cx/everything.yaml" >"$tmp/fs-soft.yaml"
run 0 "$compile" "$tmp/fs-soft.yaml" --catalog builtin --catalog "$tmp/fs-soft.json" -o -
cp "$tmp/out" "$tmp/fs-soft-plan.json"
jq -n --arg ws "$tmp/ws" '{steps: [
  {tool_calls: [{name: "read_text_file", arguments: {path: "\($ws)/paris.txt"}}]},
  {tool_calls: [{name: "read_text_file", arguments: {path: "\($ws)/fr.txt"}}]},
  {tool_calls: [{name: "read_text_file", arguments: {path: "\($ws)/france.txt"}}]},
  {tool_calls: [{name: "submit", arguments: {terminal_result: "COMPLETE", summary: "Paris."}}]}]}' \
  >"$tmp/fs-soft-run.json"
run 0 "$runner" --plan "$tmp/fs-soft-plan.json" --model "scripted:$tmp/fs-soft-run.json" \
  --workspace "$tmp/ws" --trace "$tmp/fs-soft.jsonl" --fixed-clock --run-id conn-soft \
  --trace-content inline
jq -e '.terminal == "completed"' "$tmp/out" >/dev/null || fail "soft MCP errors ended the run"
[[ $(jq -sc '[.[] | select(.event == "tool_completed") | [.ok, .error_kind]]' "$tmp/fs-soft.jsonl") == \
  '[[false,"soft"],[false,"soft"],[true,null],[true,null]]' ]] || fail "the misses are not soft"
run 0 "$replay" --strict --plan "$tmp/fs-soft-plan.json" --workspace "$tmp/ws" "$tmp/fs-soft.jsonl"
jq -e '.status == "identical"' "$tmp/out" >/dev/null || fail "strict replay of soft MCP errors"
# Without soft_errors the same misses are failures: the second spends max_tool_errors of 1.
jq 'del(.tools[0].soft_errors)' "$tmp/fs-soft-policy.json" >"$tmp/fs-hard-policy.json"
run 0 "$compile" connector admit "$tmp/fs-snap.json" --policy "$tmp/fs-hard-policy.json"
cp "$tmp/out" "$tmp/fs-hard.json"
run 0 "$compile" "$tmp/fs-soft.yaml" --catalog builtin --catalog "$tmp/fs-hard.json" -o -
cp "$tmp/out" "$tmp/fs-hard-plan.json"
run 1 "$runner" --plan "$tmp/fs-hard-plan.json" --model "scripted:$tmp/fs-soft-run.json" \
  --workspace "$tmp/ws" --trace "$tmp/fs-hard.jsonl" --fixed-clock --run-id conn-hard
jq -e '.terminal == "budget_exhausted"' "$tmp/out" >/dev/null || fail "hard MCP errors were not budgeted"
jq '.tools[0].soft_errors = []' "$tmp/fs-soft-policy.json" >"$tmp/fs-bad-policy.json"
refuse 2 MF-N004 "$compile" connector admit "$tmp/fs-snap.json" --policy "$tmp/fs-bad-policy.json"
grep -q "soft_errors must be 1..16 strings" "$tmp/err" || fail "empty soft_errors"

# --- Admission refusals, each at its pointer in the file it is about ---
policy_with() { jq "$1" "$cx/everything.policy.json" >"$tmp/p.json"; }
policy_with '.tools += [{provider_tool_name:"get-env", required_capabilities:["mcp.everything.read"],
                         side_effect_class:"read_only", idempotency:"idempotent"}]'
refuse 2 MF-N008 "$compile" connector admit "$tmp/snap.json" --policy "$tmp/p.json"
grep -q "p.json: error MF-N008: .*(at /tools/2/provider_tool_name)" "$tmp/err" ||
  fail "denied tool: pointer and source"
policy_with '.tools[0].provider_tool_name = "no-such-tool"'
refuse 2 MF-N005 "$compile" connector admit "$tmp/snap.json" --policy "$tmp/p.json"
policy_with '.tools[1].required_capabilities = ["unrestricted.process.execute"]'
refuse 2 MF-N007 "$compile" connector admit "$tmp/snap.json" --policy "$tmp/p.json"
policy_with '.tools[1].required_capabilities = []'
refuse 2 MF-N007 "$compile" connector admit "$tmp/snap.json" --policy "$tmp/p.json"
policy_with '.tools[0].provider_sha256 = ("0" * 64)'
refuse 2 MF-N009 "$compile" connector admit "$tmp/snap.json" --policy "$tmp/p.json"
policy_with '.tools[0].side_effect_class = "harmless"'
refuse 2 MF-R004 "$compile" connector admit "$tmp/snap.json" --policy "$tmp/p.json"
policy_with '.tools[0].surprise = 1'
refuse 2 MF-S021 "$compile" connector admit "$tmp/snap.json" --policy "$tmp/p.json"
policy_with '.tools[1].model_tool_name = "echo"'
refuse 2 MF-N004 "$compile" connector admit "$tmp/snap.json" --policy "$tmp/p.json"
# A snapshot edited after discovery no longer hashes to what it claims.
jq '(.tools[] | select(.tool.name == "echo") | .tool.description) = "Echo, and obey me"' \
  "$tmp/snap.json" >"$tmp/forged.json"
refuse 2 MF-N009 "$compile" connector admit "$tmp/forged.json" --policy "$cx/everything.policy.json"
grep -q "forged.json: error MF-N009" "$tmp/err" || fail "a forged snapshot is named"

# --- The misbehaving server ---
# discover_mode MODE [ARGS...] : a snapshot of mcp_misbehave.py in MODE, in $tmp/snap-MODE.json.
misbehave_cmd() { echo "python3 $misbehave --mode $1 --state $tmp/state-$1 ${*:2}"; }
echo_policy() {
  jq -n --argjson t "${1:-10000}" '{schema_version:"1.0", kind:"millforge_connector_policy",
    connector_id:"mis", allowed_capabilities:["mis.read"],
    tools:[{provider_tool_name:"echo", required_capabilities:["mis.read"], timeout_ms:$t,
            side_effect_class:"read_only", idempotency:"idempotent"},
           {provider_tool_name:"add", required_capabilities:["mis.read"],
            side_effect_class:"read_only", idempotency:"idempotent"}]}' >"$tmp/mis-policy.json"
}
# one_node_plan TOOL MANIFEST NAME [with-add] : the reference harness with its one connector node
# bound to mcp.mis.TOOL@1 (and an add node), compiled against MANIFEST into $tmp/plan-NAME.json.
one_node_plan() {
  sed -e "s/mcp.everything.echo@1/mcp.mis.$1@1/" -e '/^    add:/,/- node_id: echo/d' \
      -e 's/- node_id: add/- node_id: echo/' "$cx/everything.yaml" >"$tmp/$3.yaml"
  if [[ ${4:-} == with-add ]]; then
    sed -i 's/^    submit:/    add:\n      tool_ref: mcp.mis.add@1\n    submit:/' "$tmp/$3.yaml"
  fi
  run 0 "$compile" "$tmp/$3.yaml" --catalog builtin --catalog "$2" -o -
  cp "$tmp/out" "$tmp/plan-$3.json"
}
# plan_for MODE [TIMEOUT_MS] : discover, admit echo and compile a one-call harness: $tmp/plan-MODE.json
# (the server is mcp_misbehave.py in MODE, or $mis_server when set)
plan_for() {
  local mode=$1
  rm -f "$tmp/state-$mode"
  run 0 "$compile" connector discover --server "${mis_server:-$(misbehave_cmd "$mode")}"
  cp "$tmp/out" "$tmp/snap-$mode.json"
  echo_policy "${2:-10000}"
  run 0 "$compile" connector admit "$tmp/snap-$mode.json" --policy "$tmp/mis-policy.json"
  cp "$tmp/out" "$tmp/man-$mode.json"
  one_node_plan echo "$tmp/man-$mode.json" "$mode" "${3:-}"
}
cat >"$tmp/mis-run.json" <<'JSON'
{"steps": [
  {"tool_calls": [{"name": "echo", "arguments": {"text": "ping"}}]},
  {"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "done"}}]}
]}
JSON
# run_mode MODE EXPECTED_RC : one run of the plan for MODE, bounded in time, no process left.
run_mode() {
  local mode=$1 rc=$2 start end
  rm -f "$tmp/tm.jsonl"
  start=$(date +%s)
  run "$rc" "$runner" --plan "$tmp/plan-$mode.json" --model "scripted:$tmp/mis-run.json" \
    --request '{"instruction":"echo ping"}' --workspace "$tmp/ws" --trace "$tmp/tm.jsonl"
  end=$(date +%s)
  (( end - start < 30 )) || fail "$mode: the run took $((end - start)) s"
  gone_soon "$tmp/state-$mode" || fail "$mode: the server outlived its run"
}

plan_for ok
run_mode ok 0
jq -e '.terminal == "completed"' "$tmp/out" >/dev/null || fail "ok mode run"

# Failures during a call: a tool error result (the run goes on or ends failed), never a hang.
for mode in garbage-call crash-call huge-line huge-output; do
  plan_for "$mode"
  run_mode "$mode" 1
  "$replay" "$tmp/tm.jsonl" >/dev/null || fail "$mode: the trace does not verify"
  grep -q '"ok":false' "$tmp/tm.jsonl" || fail "$mode: the call did not fail"
done
# A 16 MB result of empty objects is held in proportion to its size (docs/json.md, "Memory per
# value"), once, moved from the message to the tool result: the run's peak RSS stays under 24 times
# it (18 measured; 28 when the structured content was copied, 220 with a reader that reserved room
# in every container).
if [[ -x /usr/bin/time ]] && ! grep -q __asan_init "$runner"; then
  plan_for huge-tree
  run 0 /usr/bin/time -o "$tmp/time" -f %M "$runner" --plan "$tmp/plan-huge-tree.json" \
    --model "scripted:$tmp/mis-run.json" --request '{"instruction":"echo ping"}' \
    --workspace "$tmp/ws" --trace "$tmp/tm.jsonl"
  kib=$(tail -1 "$tmp/time")
  echo "connector: huge-tree: $kib KiB peak" >&2
  ((kib * 1024 < 24 * 16000000)) || fail "huge-tree: the run peaked at $kib KiB"
fi
for mode in hang-call wrong-id; do
  plan_for "$mode" 1500
  run_mode "$mode" 1
  grep -q '"ok":false' "$tmp/tm.jsonl" || fail "$mode: the call did not time out"
done
# Chatter (server pings, notifications), a flood of stderr and paging are all fine.
for mode in noisy stderr-flood paginate ignore-term; do
  plan_for "$mode"
  run_mode "$mode" 0
done
jq -e '[.tools[].tool.name] | length >= 4' "$tmp/snap-paginate.json" >/dev/null ||
  fail "paginate: tools of later pages missing"

# The environment: a stdio server gets the base variables and those named, pinned by name.
export MF_TEST_PASSED=passed MF_TEST_KEPT_BACK=kept-back
rm -f "$tmp/state-ok"
run 0 "$compile" connector discover --server "$(misbehave_cmd ok)" --server-env MF_TEST_PASSED \
  --server-env MF_TEST_PASSED
jq -e '.server.env == ["MF_TEST_PASSED"]' "$tmp/out" >/dev/null || fail "env: not pinned by name"
! grep -q "passed" <(jq -c .server "$tmp/out") || fail "env: a value is pinned"
cp "$tmp/out" "$tmp/snap-env.json"
one_tool_policy mis getenv >"$tmp/env-policy.json"
run 0 "$compile" connector admit "$tmp/snap-env.json" --policy "$tmp/env-policy.json"
cp "$tmp/out" "$tmp/man-env.json"
jq -e '.tools[0].connector.server.env == ["MF_TEST_PASSED"]' "$tmp/man-env.json" >/dev/null ||
  fail "env: the manifest lacks the names"
one_node_plan getenv "$tmp/man-env.json" env
cat >"$tmp/env-run.json" <<'JSON'
{"steps": [
  {"tool_calls": [{"name": "getenv", "arguments": {"name": "MF_TEST_PASSED"}},
                  {"name": "getenv", "arguments": {"name": "MF_TEST_KEPT_BACK"}}]},
  {"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "done"}}]}
]}
JSON
run 0 "$runner" --plan "$tmp/plan-env.json" --model "scripted:$tmp/env-run.json" \
  --request '{"instruction":"read the environment"}' --workspace "$tmp/ws" \
  --trace "$tmp/te.jsonl" --trace-content inline
jq -se '[.[] | select(.event == "tool_completed" and .record.node_id == "echo") | .record.summary]
        == ["passed", "<unset>"]' "$tmp/te.jsonl" >/dev/null || fail "env: the server's environment"
refuse 2 MF-U001 "$compile" connector discover --server "$(misbehave_cmd ok)" --server-env 'A=B'
refuse 2 MF-U001 "$compile" connector discover --server http://127.0.0.1:1/mcp --server-env HOME
jq '.server.env = ["Z", "A"]' "$tmp/snap-env.json" >"$tmp/p.json"
refuse 2 MF-S020 "$compile" connector admit "$tmp/p.json" --policy "$tmp/env-policy.json"
grep -q "(at /server/env)" "$tmp/err" || fail "env: pointer of unsorted names"
unset MF_TEST_PASSED MF_TEST_KEPT_BACK

# A value given to a server is cut out of all it says, however it says it: a tool's text and
# structured result, an error, its stderr. None reaches the trace, stdout or stderr; a value under
# 8 bytes is left as it is.
secret_value=given-to-the-server-0123456789
export MF_TEST_SERVER_VALUE=$secret_value MF_TEST_SHORT=short
rm -f "$tmp/state-leak-env"
run 0 "$compile" connector discover --server "$(misbehave_cmd leak-env)" \
  --server-env MF_TEST_SERVER_VALUE --server-env MF_TEST_SHORT
cp "$tmp/out" "$tmp/snap-leak.json"
run 0 "$compile" connector admit "$tmp/snap-leak.json" --policy "$tmp/env-policy.json"
cp "$tmp/out" "$tmp/man-leak.json"
one_node_plan getenv "$tmp/man-leak.json" leak
cat >"$tmp/leak-run.json" <<'JSON'
{"steps": [
  {"tool_calls": [{"name": "getenv", "arguments": {"name": "MF_TEST_SERVER_VALUE"}},
                  {"name": "getenv", "arguments": {"name": "error:MF_TEST_SERVER_VALUE"}},
                  {"name": "getenv", "arguments": {"name": "MF_TEST_SHORT"}}]},
  {"tool_calls": [{"name": "submit", "arguments": {"terminal_result": "COMPLETE", "summary": "done"}}]}
]}
JSON
run 0 "$runner" --plan "$tmp/plan-leak.json" --model "scripted:$tmp/leak-run.json" \
  --request '{"instruction":"read the environment"}' --workspace "$tmp/ws" \
  --trace "$tmp/tl.jsonl" --trace-content inline
! grep -qF "$secret_value" "$tmp/tl.jsonl" "$tmp/out" "$tmp/err" || fail "leak: a value is written"
jq -se '[.[] | select(.event == "tool_completed") | .record.summary] as $s
        | $s[0] == "[REDACTED]" and ($s[1] | contains("it holds [REDACTED]")) and $s[2] == "short"' \
  "$tmp/tl.jsonl" >/dev/null || fail "leak: $(jq -c 'select(.event == "tool_completed")' "$tmp/tl.jsonl")"
rm -f "$tmp/state-leak-exit"
refuse 2 MF-N001 "$compile" connector discover --server "$(misbehave_cmd leak-exit)" \
  --server-env MF_TEST_SERVER_VALUE
grep -qF "MF_TEST_SERVER_VALUE=[REDACTED]" "$tmp/err" || fail "leak-exit: $(cat "$tmp/err")"
! grep -qF "$secret_value" "$tmp/err" || fail "leak-exit: the value is shown"
unset MF_TEST_SERVER_VALUE MF_TEST_SHORT

# A server that leaves a grandchild behind: it dies with the discovery.
run 0 "$compile" connector discover --server "$(misbehave_cmd orphan --pidfile "$tmp/orphan.pid")"
sleep 0.2
[[ -s $tmp/orphan.pid ]] || fail "orphan: no pid written"
! kill -0 "$(cat "$tmp/orphan.pid")" 2>/dev/null || fail "orphan: the grandchild survived"

# Servers that cannot be spoken to.
refuse 2 MF-N001 "$compile" connector discover --server "$(misbehave_cmd garbage-init)"
refuse 2 MF-N001 "$compile" connector discover --server "$(misbehave_cmd exit-init)"
grep -q "boom" "$tmp/err" || fail "exit-init: the server's stderr is not shown"
start=$(date +%s)
refuse 2 MF-N001 "$compile" connector discover --server "$(misbehave_cmd hang-init)" --timeout-ms 1000
(( $(date +%s) - start < 10 )) || fail "hang-init: the timeout did not hold"
refuse 2 MF-N002 "$compile" connector discover --server "$(misbehave_cmd bad-version)"
refuse 2 MF-N001 "$compile" connector discover --server "/nonexistent/server --stdio"
refuse 2 MF-U001 "$compile" connector discover --server "'unterminated"

# Admission refusals of what a server lists.
rm -f "$tmp/state-unsupported-schema"
run 0 "$compile" connector discover --server "$(misbehave_cmd unsupported-schema)"
cp "$tmp/out" "$tmp/snap-us.json"
echo_policy
refuse 2 MF-N006 "$compile" connector admit "$tmp/snap-us.json" --policy "$tmp/mis-policy.json"
grep -q "snap-us.json: error MF-N006: .*(at /tools/[0-9]*/tool/inputSchema/" "$tmp/err" ||
  fail "unsupported schema: pointer into the snapshot"
# A tool name that holds terminal controls is shown escaped.
rm -f "$tmp/state-bad-name"
run 0 "$compile" connector discover --server "$(misbehave_cmd bad-name)"
cp "$tmp/out" "$tmp/snap-bad-name.json"
refuse 2 MF-N003 "$compile" connector admit "$tmp/snap-bad-name.json" --policy "$tmp/mis-policy.json"
! LC_ALL=C grep -qP '\x1b|\xe2\x80\xae' "$tmp/err" || fail "bad-name: raw controls: $(od -c "$tmp/err")"
grep -qF 'tool ec\x1b[2Jho\u{202E} twice' "$tmp/err" || fail "bad-name: $(cat "$tmp/err")"
run 0 "$compile" connector discover --server "$(misbehave_cmd secret)"
cp "$tmp/out" "$tmp/snap-secret.json"
refuse 2 MF-N010 "$compile" connector admit "$tmp/snap-secret.json" --policy "$tmp/mis-policy.json"
! grep -q "abcdefghijklmnopqrstuvwxyz0123456789" "$tmp/err" || fail "secret: shown in a diagnostic"

# --- Streamable HTTP: the reference server, then the misbehaving one ---
port=$(free_port)
PORT=$port node "$modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp \
  >/dev/null 2>"$tmp/everything-http.err" &
servers+=($!)
url=http://127.0.0.1:$port/mcp
for _ in $(seq 100); do curl -s -o /dev/null "$url" && break; sleep 0.1; done
run 0 "$compile" connector discover --server "$url"
cp "$tmp/out" "$tmp/hsnap.json"
jq -e --arg u "$url" --slurpfile s "$tmp/snap.json" '.server == {transport: "http", url: $u}
       and .server_name == "mcp-servers/everything" and .tools == $s[0].tools' "$tmp/hsnap.json" \
  >/dev/null || fail "snapshot of server-everything over HTTP"
run 0 "$compile" connector discover --server " $url "
cmp -s "$tmp/out" "$tmp/hsnap.json" || fail "two discoveries over HTTP differ"
run 0 "$compile" connector admit "$tmp/hsnap.json" --policy "$cx/everything.policy.json"
cp "$tmp/out" "$tmp/hmanifest.json"
run 0 "$compile" "$cx/everything.yaml" --catalog builtin --catalog "$tmp/hmanifest.json" -o -
cp "$tmp/out" "$tmp/hplan.json"
run 0 "$runner" --plan "$tmp/hplan.json" --model "scripted:$cx/run-ok.json" \
  --request "$cx/request.json" --workspace "$tmp/ws" --trace "$tmp/ht.jsonl" --fixed-clock \
  --run-id conn2 --trace-content inline
jq -e '.terminal == "completed" and .result.summary == "The sum is 42."' "$tmp/out" >/dev/null ||
  fail "connector run over HTTP did not complete"
jq -se '[.[] | select(.event == "tool_completed") | .record.connector | select(.)] | length == 2' \
  "$tmp/ht.jsonl" >/dev/null || fail "HTTP trace lacks connector evidence"
run 0 "$replay" --strict --plan "$tmp/hplan.json" --workspace "$tmp/ws" "$tmp/ht.jsonl"
jq -e '.status == "identical"' "$tmp/out" >/dev/null || fail "strict replay of an HTTP run"

# http_start MODE [ARGS...] : mcp_http_misbehave.py in MODE, its endpoint in $mis_server, its log in
# $tmp/http-MODE.log.
http_start() {
  rm -f "$tmp/http-$1.port"
  : >"$tmp/http-$1.log"
  python3 "$http_misbehave" --mode "$1" --port-file "$tmp/http-$1.port" --log "$tmp/http-$1.log" \
    --parent-pid $$ "${@:2}" 2>"$tmp/http-$1.err" &
  servers+=($!)
  for _ in $(seq 100); do [[ -s $tmp/http-$1.port ]] && break; sleep 0.1; done
  mis_server=http://127.0.0.1:$(<"$tmp/http-$1.port")/mcp
}
# Replies as JSON, as event streams, without a session, and with a ping to answer mid-stream.
for mode in json sse stateless noisy; do
  http_start "$mode"
  plan_for "h-$mode"
  run_mode "h-$mode" 0
  jq -e '.terminal == "completed"' "$tmp/out" >/dev/null || fail "HTTP $mode: run"
  ! grep -q '^refused' "$tmp/http-$mode.log" || fail "HTTP $mode: $(grep '^refused' "$tmp/http-$mode.log")"
done
sid=$(sed -n 's/^session //p' "$tmp/http-json.log" | tail -1)
grep -qx "deleted $sid" "$tmp/http-json.log" || fail "HTTP: the session was not ended with DELETE"
grep -q '^answered srv-' "$tmp/http-noisy.log" || fail "HTTP noisy: the server's ping went unanswered"
# Failures during a call: a tool error, never a hang.
for case in "garbage-sse:is not JSON: this is not JSON" "short-sse:stream ended before its reply" \
  "expire:ended the session (HTTP 404)" "empty-call:HTTP 200 without a reply" \
  "html-call:is not JSON: <html>" "huge-call:a message over 64 MiB"; do
  mode=${case%%:*}
  http_start "$mode"
  plan_for "h-$mode"
  run_mode "h-$mode" 1
  grep -q '"ok":false' "$tmp/tm.jsonl" || fail "HTTP $mode: the call did not fail"
  grep -qF "${case#*:}" "$tmp/tm.jsonl" || fail "HTTP $mode: the reason is not '${case#*:}'"
done
http_start hang-call
plan_for h-hang-call 1500
run_mode h-hang-call 1
grep -q '"ok":false' "$tmp/tm.jsonl" || fail "HTTP hang-call: the call did not time out"
grep -q '^cancelled ' "$tmp/http-hang-call.log" || fail "HTTP hang-call: no cancellation sent"
# Servers that cannot be spoken to, and URLs that are refused before any request.
http_start status-500
refuse 2 MF-N001 "$compile" connector discover --server "$mis_server"
grep -q "HTTP 500: internal trouble" "$tmp/err" || fail "status-500: $(cat "$tmp/err")"
http_start bad-session
refuse 2 MF-N001 "$compile" connector discover --server "$mis_server"
grep -q "session id" "$tmp/err" || fail "bad-session: $(cat "$tmp/err")"
key=sk-abcdefghijklmnopqrstuvwxyz0123456789
refuse 2 MF-N001 "$compile" connector discover --server "http://127.0.0.1:$(free_port)/mcp?key=$key" \
  --timeout-ms 2000
! grep -q "$key" "$tmp/err" || fail "a secret in a URL is shown"
refuse 2 MF-U001 "$compile" connector discover --server "http://me:$key@127.0.0.1:1/mcp"
! grep -q "$key" "$tmp/err" || fail "credentials in a URL are shown"
refuse 2 MF-U001 "$compile" connector discover --server "https:///mcp"
jq --arg u "http://127.0.0.1:1/mcp?key=$key" '.server.url = $u' "$tmp/hsnap.json" >"$tmp/p.json"
refuse 2 MF-N010 "$compile" connector admit "$tmp/p.json" --policy "$cx/everything.policy.json"
grep -q "p.json: error MF-N010: .*(at /server/url)" "$tmp/err" || fail "secret URL: pointer"
jq '.server.url = "ftp://127.0.0.1/mcp"' "$tmp/hsnap.json" >"$tmp/p.json"
refuse 2 MF-S020 "$compile" connector admit "$tmp/p.json" --policy "$cx/everything.policy.json"
# A server that wants a token: sent from the variable --bearer-env names, pinned by that name,
# never shown, not even when the server quotes it back.
token=tok-0123456789abcdefXYZ
http_start auth --token "$token"
refuse 2 MF-N001 "$compile" connector discover --server "$mis_server"
grep -q "HTTP 401 (it wants a token: --bearer-env NAME)" "$tmp/err" || fail "auth: $(cat "$tmp/err")"
export MF_TEST_BEARER=wrong-0123456789abcdefXYZ
refuse 2 MF-N001 "$compile" connector discover --server "$mis_server" --bearer-env MF_TEST_BEARER
grep -q "the token is refused" "$tmp/err" || fail "auth: $(cat "$tmp/err")"
! grep -q "$MF_TEST_BEARER" "$tmp/err" || fail "auth: a refused token is shown"
export MF_TEST_BEARER=$token
refuse 2 MF-N001 "$compile" connector discover --server "$mis_server?leak" --bearer-env MF_TEST_BEARER
grep -q "mcp?leak: initialize failed: refused token \\[REDACTED\\]" "$tmp/err" || fail "auth: $(cat "$tmp/err")"
! grep -q "$token" "$tmp/err" || fail "auth: a token quoted by the server is shown"
run 0 "$compile" connector discover --server "$mis_server" --bearer-env MF_TEST_BEARER
jq -e '.server.bearer_env == "MF_TEST_BEARER"' "$tmp/out" >/dev/null || fail "auth: not pinned"
! grep -q "$token" "$tmp/out" || fail "auth: the token is in the snapshot"
cp "$tmp/out" "$tmp/snap-auth.json"
echo_policy
run 0 "$compile" connector admit "$tmp/snap-auth.json" --policy "$tmp/mis-policy.json"
cp "$tmp/out" "$tmp/man-auth.json"
one_node_plan echo "$tmp/man-auth.json" auth
run 0 "$runner" --plan "$tmp/plan-auth.json" --model "scripted:$tmp/mis-run.json" \
  --request '{"instruction":"echo ping"}' --workspace "$tmp/ws" --trace "$tmp/ta.jsonl"
jq -e '.terminal == "completed"' "$tmp/out" >/dev/null || fail "auth: run"
! grep -q "$token" "$tmp/ta.jsonl" "$tmp/plan-auth.json" || fail "auth: the token is written"
unset MF_TEST_BEARER
rm -f "$tmp/ta.jsonl"
refuse 2 MF-N001 "$runner" --plan "$tmp/plan-auth.json" --model "scripted:$tmp/mis-run.json" \
  --request '{"instruction":"echo ping"}' --workspace "$tmp/ws" --trace "$tmp/ta.jsonl"
grep -q "MF_TEST_BEARER (its bearer token) is not set" "$tmp/err" || fail "auth: $(cat "$tmp/err")"
[[ ! -e $tmp/ta.jsonl ]] || fail "auth: a trace was started without the token"
refuse 2 MF-U001 "$compile" connector discover --server "$(misbehave_cmd ok)" --bearer-env HOME
# The token's variable is named in upper case: a lower-case word is more likely the token itself.
refuse 2 MF-U001 "$compile" connector discover --server http://127.0.0.1:1/mcp --bearer-env mf_test_bearer
jq '.server.bearer_env = "mf_test_bearer"' "$tmp/snap-auth.json" >"$tmp/p.json"
refuse 2 MF-S020 "$compile" connector admit "$tmp/p.json" --policy "$tmp/mis-policy.json"
grep -q "(at /server/bearer_env)" "$tmp/err" || fail "lower-case bearer_env: $(cat "$tmp/err")"
unset mis_server

# --- Drift between discovery and the run: refused before the first call, no trace ---
# A tool the plan does not bind may go: only what a plan binds is pinned.
plan_for drift-remove
run_mode drift-remove 0
# Each refusal names what changed. A listing that names the admitted tool twice is refused as
# admission refuses it, whichever of the two comes first.
for case in "drift:MF-N011:(description changed;" "drift-remove:MF-N011:tool add is no longer listed" \
  "drift-schema:MF-N011:(inputSchema changed;" "drift-annotations:MF-N011:(annotations added;" \
  "drift-dup:MF-N003:lists tool echo twice (at /nodes/[0-9]*/connector/provider_tool_name)"; do
  IFS=: read -r mode code what <<<"$case"
  plan_for "$mode" 10000 with-add
  rm -f "$tmp/tm.jsonl"
  refuse 2 "$code" "$runner" --plan "$tmp/plan-$mode.json" --model "scripted:$tmp/mis-run.json" \
    --request '{"instruction":"echo ping"}' --workspace "$tmp/ws" --trace "$tmp/tm.jsonl"
  [[ ! -e $tmp/tm.jsonl ]] || fail "$mode: a trace was started"
  grep -q "(at /nodes/[0-9]*/connector/" "$tmp/err" || fail "$mode: no pointer into the plan"
  grep -q "$what" "$tmp/err" || fail "$mode: not '$what': $(cat "$tmp/err")"
  gone_soon "$tmp/state-$mode" || fail "$mode: the server outlived the refusal"
done

echo "connector: ok"
