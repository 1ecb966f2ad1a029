#!/usr/bin/env bash
# mf-run tool: one call through the execution boundary against a workspace. Canonical JSON with the
# trace record, every path-taking tool refusing the three ways out of the workspace, the tools'
# round trips, argument sources, refusals (exit 2), denials (exit 1) and the bubblewrap sandbox.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

mfrun="$MF_BIN/mf-run"
ws="$tmp/ws"
mkdir -p "$ws" "$tmp/outside"
printf 'alpha\nneedle here\n' >"$ws/a.txt"
printf 'outside\n' >"$tmp/outside/keep.txt"
ln -s /etc "$ws/out"
ln -s "$tmp/outside" "$ws/outdir"
ln -s ../outside/keep.txt "$ws/leak.txt"  # the last component leads out

# tool NAME ARGS [OPTIONS...]: mf-run tool with the workspace.
tool() {
  local name=$1 args=$2
  shift 2
  "$mfrun" tool "$name" --workspace "$ws" --args "$args" "$@"
}

# text: the result's text.
text() { jq -r '.content[0].text' "$tmp/out"; }

# refused_escape NAME ARGS PATH: exit 1, an error result saying the path escapes.
refused_escape() {
  local name=$1 args=$2 path=$3
  run 1 tool "$name" "$args"
  jq -e '.is_error == true' "$tmp/out" >/dev/null || fail "$name $args: not an error: $(cat "$tmp/out")"
  [[ $(text) == "Path escapes the workspace: $path" ]] ||
    fail "$name $args: text is $(text)"
  grep -q root: "$tmp/out" && fail "$name $args leaked /etc/passwd"
  return 0
}

# --- read: canonical JSON with the trace ---------------------------------------------------------------
run 0 tool read '{"path":"a.txt"}'
"$MF_BIN/mf-store" canon "$tmp/out" | cmp -s - "$tmp/out" || fail "read output is not canonical JSON"
jq -e '.is_error == false' "$tmp/out" >/dev/null || fail "read: is_error"
jq -e '.content[0].text == "alpha\nneedle here\n"' "$tmp/out" >/dev/null || fail "read text: $(cat "$tmp/out")"
jq -e '.trace.execution_status == "success" and .trace.denied == false' "$tmp/out" >/dev/null ||
  fail "read trace: $(jq -c .trace "$tmp/out")"
jq -e '.trace.binding.tool_id == "builtin.pi_compat.read" and .trace.model_tool_name == "read"' \
  "$tmp/out" >/dev/null || fail "read binding: $(jq -c .trace "$tmp/out")"
[[ ! -s $tmp/err ]] || fail "a successful call wrote to stderr"
run 0 tool read '{"path":"a.txt"}' --fixed-clock
jq -e '.trace.duration_ms == 0' "$tmp/out" >/dev/null || fail "--fixed-clock: $(jq -c .trace "$tmp/out")"

# --- confinement: `..`, an absolute path outside, a symlink leading out --------------------------------
for t in read write edit ls grep find list_workspace_files search_workspace_text read_workspace_diff \
  write_workspace_file; do
  case $t in
    read) mk() { echo "{\"path\":\"$1\"}"; } ;;
    write) mk() { echo "{\"path\":\"$1\",\"content\":\"pwned\\n\"}"; } ;;
    edit) mk() { echo "{\"path\":\"$1\",\"edits\":[{\"oldText\":\"outside\",\"newText\":\"pwned\"}]}"; } ;;
    ls) mk() { echo "{\"path\":\"$1\"}"; } ;;
    grep) mk() { echo "{\"pattern\":\"root\",\"path\":\"$1\"}"; } ;;
    find) mk() { echo "{\"pattern\":\"*\",\"path\":\"$1\"}"; } ;;
    list_workspace_files) mk() { echo "{\"root\":\"$1\"}"; } ;;
    search_workspace_text) mk() { echo "{\"query\":\"root\",\"root\":\"$1\"}"; } ;;
    read_workspace_diff) mk() { echo "{\"paths\":[\"$1\"]}"; } ;;
    write_workspace_file) mk() { echo "{\"path\":\"$1\",\"content\":\"pwned\\n\"}"; } ;;
  esac
  if [[ $t == write || $t == edit || $t == write_workspace_file ]]; then
    # Writers aim at a scratch directory outside, never at the real /etc.
    for p in ../escape.txt ../outside/keep.txt "$tmp/outside/keep.txt" "$tmp/outside/new.txt" \
      outdir/keep.txt outdir/new.txt leak.txt; do
      if [[ $t == write_workspace_file && $p == leak.txt ]]; then
        # Millforge's writer refuses any link at the name, leading out or not.
        run 1 tool "$t" "$(mk "$p")"
        [[ $(text) == "leak.txt is a symbolic link; name the file it points to" ]] ||
          fail "$t leak.txt: $(text)"
        continue
      fi
      refused_escape "$t" "$(mk "$p")" "$p"
    done
  else
    for p in ../x ../outside /etc/passwd out/passwd leak.txt; do
      refused_escape "$t" "$(mk "$p")" "$p"
    done
    if [[ $t == ls || $t == find || $t == list_workspace_files || $t == search_workspace_text ]]; then
      refused_escape "$t" "$(mk /etc)" /etc
      refused_escape "$t" "$(mk out)" out
    fi
  fi
done
[[ ! -e $tmp/escape.txt ]] || fail "write to ../escape.txt created $tmp/escape.txt"
[[ ! -e $tmp/outside/new.txt ]] || fail "a write created a file outside the workspace"
[[ $(cat "$tmp/outside/keep.txt") == outside ]] || fail "a file outside the workspace changed"
[[ $(ls -A "$tmp/outside") == keep.txt ]] || fail "outside now holds: $(ls -A "$tmp/outside")"
[[ $(ls -A "$tmp" | sort | tr '\n' ' ') == "err out outside ws " ]] ||
  fail "the temporary directory now holds: $(ls -A "$tmp")"

# --- hard links, trailing slashes, artifacts: the other ways to reach outside -------------------------
mkdir -p "$tmp/hl" "$tmp/art"
printf 'outside\n' >"$tmp/hl/target.txt"
ln "$tmp/hl/target.txt" "$ws/hard.txt"  # an outside file hard-linked into the workspace
run 0 tool write '{"path":"hard.txt","content":"pwned\n"}'
run 0 tool edit '{"path":"hard.txt","edits":[{"oldText":"pwned","newText":"pwned again"}]}'
[[ $(cat "$tmp/hl/target.txt") == outside ]] || fail "write/edit through a hard link changed the outside file"
[[ $(cat "$ws/hard.txt") == "pwned again" ]] || fail "hard.txt: $(cat "$ws/hard.txt")"
rm "$ws/hard.txt"
run 1 tool write '{"path":"newdir/","content":"x"}'
[[ ! -e $ws/newdir ]] || fail "write newdir/ created $(stat -c %F "$ws/newdir")"
jq -e '.trace.side_effect_certainty == "not_attempted"' "$tmp/out" >/dev/null ||
  fail "refused write: $(jq -c .trace "$tmp/out")"
ln -s "$tmp/hl/target.txt" "$tmp/art/leak"
run 1 tool read_artifact '{"artifact_id":"leak"}' --artifacts "$tmp/art"
[[ $(text) == "Artifact leak leads out of the artifact directory" ]] || fail "read_artifact: $(text)"
rm -r "$tmp/hl" "$tmp/art"

# --- the tools ---------------------------------------------------------------------------------------
run 0 tool write '{"path":"sub/b.txt","content":"one\ntwo\n"}'
jq -e '.is_error == false and .trace.side_effect_certainty == "confirmed_complete"' "$tmp/out" \
  >/dev/null || fail "write: $(cat "$tmp/out")"
printf 'one\ntwo\n' | cmp -s - "$ws/sub/b.txt" || fail "write content"
run 0 tool read '{"path":"sub/b.txt"}'
jq -e '.content[0].text == "one\ntwo\n"' "$tmp/out" >/dev/null || fail "round trip: $(cat "$tmp/out")"

run 0 tool edit '{"path":"sub/b.txt","edits":[{"oldText":"two","newText":"TWO"}]}'
jq -e '.is_error == false' "$tmp/out" >/dev/null || fail "edit: $(cat "$tmp/out")"
[[ $(cat "$ws/sub/b.txt") == $'one\nTWO' ]] || fail "edit content: $(cat "$ws/sub/b.txt")"
run 1 tool edit '{"path":"sub/b.txt","edits":[{"oldText":"absent","newText":"x"}]}'
jq -e '.is_error == true' "$tmp/out" >/dev/null || fail "edit of absent text"
[[ $(cat "$ws/sub/b.txt") == $'one\nTWO' ]] || fail "a failed edit changed the file"

run 0 tool ls '{}'
text | grep -qx 'a.txt' || fail "ls: $(text)"
text | grep -qx 'sub/' || fail "ls sub/: $(text)"

run 0 tool grep '{"pattern":"needle"}'
text | grep -q 'a.txt.*needle here' || fail "grep: $(text)"
text | grep -q 'passwd' && fail "grep followed a symlink out: $(text)"

run 0 tool find '{"pattern":"*.txt"}'
text | grep -qx 'a.txt' || fail "find a.txt: $(text)"
text | grep -qx 'sub/b.txt' || fail "find sub/b.txt: $(text)"

run 0 tool write_workspace_file '{"path":"sub/c.txt","content":"gamma\n"}'
jq -e '.details.content_sha256 == "ae9a6306a205417afddd14316cc1d0d5e04a98f1be10865dce643925ee070ce2"' "$tmp/out" >/dev/null ||
  fail "write_workspace_file: $(cat "$tmp/out")"
[[ $(cat "$ws/sub/c.txt") == gamma ]] || fail "write_workspace_file content"
run 0 tool list_workspace_files '{"root":"."}'
jq -e '.details.paths == ["a.txt","sub/b.txt","sub/c.txt"] and .details.truncated == false' \
  "$tmp/out" >/dev/null || fail "list_workspace_files: $(cat "$tmp/out")"
run 0 tool search_workspace_text '{"query":"needle"}'
jq -e '.details.matches == [{"line":2,"path":"a.txt","snippet":"needle here"}]' "$tmp/out" \
  >/dev/null || fail "search_workspace_text: $(cat "$tmp/out")"

run 0 tool bash '{"command":"echo hi"}'
jq -e '.content[0].text == "hi\n"' "$tmp/out" >/dev/null || fail "bash echo: $(cat "$tmp/out")"
jq -e '.trace.execution_status == "success"' "$tmp/out" >/dev/null || fail "bash trace"
run 1 tool bash '{"command":"exit 3"}'
jq -e '.is_error == true' "$tmp/out" >/dev/null || fail "bash exit 3: not an error"
text | grep -q 'Command exited with code 3' || fail "bash exit 3: $(text)"
run 0 tool bash '{"command":"pwd"}'
[[ $(text) == "$(cd "$ws" && pwd -P)" ]] || fail "bash does not run in the workspace: $(text)"

# The full-output log keeps its tail within --bash-log-max and says so.
run 0 tool bash '{"command":"seq 1 300000"}' --bash-log-max 100000
log=$(jq -r '.details.fullOutputPath' "$tmp/out")
jq -e '.details.fullOutputCapped == true and .details.fullOutputMaxBytes == 100000' "$tmp/out" \
  >/dev/null || fail "capped log: $(jq -c .details "$tmp/out")"
[[ $(stat -c %s "$log") == 100000 && $(tail -n 1 "$log") == 300000 ]] || fail "log $log: $(stat -c %s "$log")"
rm -f "$log"

# --- where the arguments come from ---------------------------------------------------------------------
printf '{"path":"a.txt"}' >"$tmp/args.json"
run 0 tool read "@$tmp/args.json"
text | grep -q needle || fail "--args @FILE: $(cat "$tmp/out")"
rm "$tmp/args.json"
stdin=$(mktemp "$tmp/stdin.XXXXXX")
printf '{"path":"a.txt","limit":1}' >"$stdin"
run 0 tool read @-
[[ $(text | head -1) == alpha ]] || fail "--args @-: $(cat "$tmp/out")"
text | grep -q needle && fail "--args @- ignored limit: $(text)"
rm "$stdin"
unset stdin

# --- refusals before the call: exit 2, a diagnostic, nothing on stdout ---------------------------------
refuse 2 MF-S011 tool read 'not json'
refuse 2 MF-R002 tool nope '{}'
refuse 2 MF-T009 "$mfrun" tool read --workspace "$tmp/missing" --args '{"path":"a.txt"}'
# usage errors
usage() {
  run 2 "$@"
  [[ ! -s $tmp/out ]] || fail "$* wrote to stdout on a usage error"
  grep -q 'usage error' "$tmp/err" || fail "$*: not a usage error: $(cat "$tmp/err")"
}
usage tool read '{"path":"a.txt"}' --sandbox nope
usage "$mfrun" tool --workspace "$ws" --args '{}'
usage "$mfrun" tool read --args '{}'
usage "$mfrun" tool read --workspace "$ws"
usage "$mfrun" tool read extra --workspace "$ws" --args '{}'
usage tool bash '{"command":"true"}' --bash-log-max 0

# A capability the tool needs but was not granted: denied before entry, exit 1.
run 1 tool read '{"path":"a.txt"}' --capabilities terminal.intent
jq -e '.is_error == true and .trace.denied == true and .trace.execution_status == "not_executed"' \
  "$tmp/out" >/dev/null || fail "denied read: $(cat "$tmp/out")"
text | grep -q 'unrestricted.filesystem.read' || fail "the denial does not name the capability: $(text)"
text | grep -q needle && fail "a denied read returned the file"
# Arguments outside the closed schema: refused before entry, exit 1.
run 1 tool read '{"path":"a.txt","bogus":1}'
[[ $(text | head -1) == 'Validation failed for tool "read":' ]] || fail "validation: $(text)"
jq -e '.trace.denied == true and .trace.retryable == true' "$tmp/out" >/dev/null || fail "validation trace"

# --- the sandbox ---------------------------------------------------------------------------------------
probe="/var/mf-tool-probe-$$"  # read-only inside (/tmp, /var/tmp and /run are private)
if command -v bwrap >/dev/null && bwrap --ro-bind / / --unshare-net true >/dev/null 2>&1; then
  rm -f "$probe"
  run 1 tool bash "{\"command\":\"touch $probe\"}" --sandbox bwrap
  jq -e '.is_error == true' "$tmp/out" >/dev/null || fail "sandboxed touch outside succeeded"
  if [[ -e $probe ]]; then
    rm -f "$probe"
    fail "the sandboxed bash created $probe"
  fi
  run 0 tool bash '{"command":"touch inside.txt"}' --sandbox bwrap
  [[ -e $ws/inside.txt ]] || fail "the sandboxed bash could not write inside the workspace"
else
  echo "SKIP: tool.sh sandbox part: bwrap is missing or cannot create namespaces here"
fi

# --- help ----------------------------------------------------------------------------------------------
run 0 "$mfrun" --help
grep -q 'mf-run tool NAME' "$tmp/out" || fail "--help does not show the tool usage"
grep -q 'mf-run tool read --workspace' "$tmp/out" || fail "--help has no tool example"

echo "tool: ok"
