# The loopback wire server for end-to-end tests of the live model backends (sourced after
# common.bash, not a test itself; docs/testing-wire-server.md): `wire_start` runs
# tests/server/wire_server.py over fixtures/wire, `wire_reset` and `wire_log` talk to its control
# endpoints, `wire_profile` points a model profile at one scenario. Every server started here is
# stopped when the test exits (the EXIT trap of common.bash is extended, not replaced), and each
# one also exits by itself when this shell dies.
: "${MF_SOURCE_DIR:?set MF_SOURCE_DIR to the source tree}"
: "${tmp:?source common.bash first}"

WIRE_SERVER=$MF_SOURCE_DIR/tests/server/wire_server.py
WIRE_PIDS=()
wire_trap_set=

# wire_stop : stops every server this shell started (SIGTERM, then reaps it).
wire_stop() {
  local pid
  for pid in "${WIRE_PIDS[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  WIRE_PIDS=()
}

# wire_start [CAPTURES_DIR] : starts a server over CAPTURES_DIR (default fixtures/wire), waits up
# to 10 s for it to listen, and exports WIRE_PORT, WIRE_URL, WIRE_PID, WIRE_CAPTURES and WIRE_LOG
# (its JSONL request log). A second call starts another server and re-points the variables at it.
wire_start() {
  local captures=${1:-$MF_SOURCE_DIR/fixtures/wire}
  local n=${#WIRE_PIDS[@]}
  local port_file=$tmp/wire-$n.port
  rm -f "$port_file"  # a server started again after wire_stop reuses the name
  if [[ -z $wire_trap_set ]]; then
    local previous
    previous=$(trap -p EXIT)
    eval "set -- ${previous:-trap -- '' EXIT}"
    # shellcheck disable=SC2064 # the previous command is expanded now, on purpose
    trap "wire_stop; $3" EXIT
    wire_trap_set=1
  fi
  WIRE_CAPTURES=$captures
  WIRE_LOG=$tmp/wire-$n.jsonl
  local shell_pid=$BASHPID # taken here: expanded in the background command, it would be the child's
  python3 "$WIRE_SERVER" --captures "$captures" --port-file "$port_file" --log "$WIRE_LOG" \
    --parent-pid "$shell_pid" 2>"$tmp/wire-$n.err" &
  WIRE_PID=$!
  WIRE_PIDS+=("$WIRE_PID")
  local i
  for ((i = 0; i < 100; i++)); do
    [[ -s $port_file ]] && break
    if ! kill -0 "$WIRE_PID" 2>/dev/null; then
      cat "$tmp/wire-$n.err" >&2
      fail "the wire server exited before listening"
    fi
    sleep 0.1
  done
  [[ -s $port_file ]] || fail "the wire server did not write its port within 10 s"
  WIRE_PORT=$(<"$port_file")
  WIRE_URL=http://127.0.0.1:$WIRE_PORT
  export WIRE_PORT WIRE_URL WIRE_PID WIRE_CAPTURES WIRE_LOG
}

# wire_reset : clears the server's per-scenario counters and its request log.
wire_reset() {
  curl -fsS -X POST "$WIRE_URL/_reset" >/dev/null || fail "wire_reset failed"
}

# wire_log : prints the server's request log (a JSON array, one object per request).
wire_log() {
  curl -fsS "$WIRE_URL/_log" || fail "wire_log failed"
}

# wire_profile SCENARIO BASE_PROFILE OUT [API_PATH] : writes OUT, BASE_PROFILE with base_url set to
# $WIRE_URL/SCENARIO followed by API_PATH (default /v1; pass "" for a client that appends /v1
# itself).
wire_profile() {
  local scenario=$1 base=$2 out=$3 api_path=${4-/v1}
  [[ $scenario =~ ^[a-z0-9-]+$ ]] || fail "wire_profile: bad scenario name: $scenario"
  [[ -f $WIRE_CAPTURES/$scenario.json ]] || fail "wire_profile: no capture $scenario"
  jq -e --arg url "$WIRE_URL/$scenario$api_path" 'if type == "object" then .base_url = $url
    else error("the profile is not a JSON object") end' "$base" >"$out" ||
    fail "wire_profile: cannot rewrite $base"
}
