#!/usr/bin/env bash
# The main job on the embedded default. Today it is the foundation's smoke pipeline: pin the Forge task
# fixture's digest, canonicalize it through a pipe, and hash the canonical form. It grows into the full
# compile -> run -> replay -> eval -> audit demo as those tools land.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${MF_BIN:-build/bin}
task=fixtures/forge/task-valid.json
pinned=fc4aa5898f737ba4c5a8cb7b2c2c380e1e133e2696b7915a5a3907332ca840f6

for tool in mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store; do
  "$bin/$tool" --version
done

echo "== task fixture digest (raw bytes)"
digest=$("$bin/mf-store" hash "$task")
echo "$digest  $task"
if [ "$digest" != "$pinned" ]; then
  echo "demo: $task does not match the pinned digest $pinned" >&2
  exit 1
fi

echo "== canonical form (RFC 8785) and its digest"
"$bin/mf-store" canon "$task"
"$bin/mf-store" canon "$task" | "$bin/mf-store" hash --json -
"$bin/mf-store" hash --json "$task"
echo "demo: ok"
