#!/usr/bin/env bash
# The conventions of docs/cli.md for every binary: --help with examples on stdout, --version as
# "name version (build id)", usage errors exit 2 with the message on stderr only, --help offering
# only what is built, options refused outside their subcommand.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

# run EXPECTED_RC CMD... : runs CMD with stdout/stderr captured in $tmp/out and $tmp/err.
run() {
  local expected=$1
  shift
  local rc=0
  "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
  if [[ $rc -ne $expected ]]; then
    echo "--- stdout" >&2; cat "$tmp/out" >&2
    echo "--- stderr" >&2; cat "$tmp/err" >&2
    fail "$* exited $rc, expected $expected"
  fi
}

tools=(mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store)

for tool in "${tools[@]}"; do
  bin="$MF_BIN/$tool"
  [[ -x $bin ]] || fail "$bin is not built"

  for flag in --help -h; do
    run 0 "$bin" "$flag"
    grep -q "^Usage: $tool" "$tmp/out" || fail "$tool $flag: no usage line"
    grep -q '^Examples:$' "$tmp/out" || fail "$tool $flag: no examples"
    grep -q "^  $tool\|^  .*| $tool" "$tmp/out" || fail "$tool $flag: no example invokes $tool"
    grep -q '^Exit codes: 0 success, 1 failed outcome, 2 rejected, 3 internal or I/O error$' \
      "$tmp/out" || fail "$tool $flag: no exit-code line"
    grep -q -- '--quiet' "$tmp/out" || fail "$tool $flag: --quiet not listed"
    [[ ! -s $tmp/err ]] || fail "$tool $flag wrote to stderr"
  done

  run 0 "$bin" --version
  [[ $(wc -l <"$tmp/out") -eq 1 ]] || fail "$tool --version: not exactly one line"
  grep -Eq "^$tool [0-9.]+ \(build .+\)$" "$tmp/out" || fail "$tool --version: $(cat "$tmp/out")"
  [[ ! -s $tmp/err ]] || fail "$tool --version wrote to stderr"

  run 2 "$bin" --no-such-option
  [[ ! -s $tmp/out ]] || fail "$tool: usage error wrote to stdout"
  grep -q "^$tool: usage error: .*no-such-option" "$tmp/err" || fail "$tool: usage error message"
  grep -q "^Try '$tool --help'.$" "$tmp/err" || fail "$tool: no --help hint"

  # Abbreviations are refused so that adding an option never breaks a script.
  run 2 "$bin" --vers
  [[ ! -s $tmp/out ]] || fail "$tool --vers wrote to stdout"

  # Help on a full disk is an I/O error, not success.
  if [[ -w /dev/full ]]; then
    rc=0
    "$bin" --help >/dev/full 2>"$tmp/err" || rc=$?
    [[ $rc -eq 3 ]] || fail "$tool --help >/dev/full exited $rc, expected 3"
  fi
done

# A bad option value is a usage error too.
run 2 "$MF_BIN/mf-eval" run -j many
grep -q '^mf-eval: usage error: ' "$tmp/err" || fail "mf-eval -j many: no usage error"

# --help lists only what is built: nothing it offers answers "not built", and what is not built
# is not offered (an unknown option or command is a usage error).
for tool in mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store; do
  run 0 "$MF_BIN/$tool" --help
  ! grep -qi 'not built\|later)' "$tmp/out" || fail "$tool --help advertises something not built"
done
usage() {
  run 2 "$@"
  [[ ! -s $tmp/out ]] || fail "$*: wrote to stdout"
  grep -q 'usage error' "$tmp/err" || fail "$*: not a usage error"
}
usage "$MF_BIN/mf-compile" project --plan plan.json --query 'read the file'
usage "$MF_BIN/mf-run" --plan plan.json --model scripted:r.json --trace - --output -
usage "$MF_BIN/mf-replay" --strict --fork-at 3 --plan plan.json trace.jsonl
usage "$MF_BIN/mf-replay" --fork-at 3 trace.jsonl
usage "$MF_BIN/mf-eval" merge --output out.json
for shard in 3/2 0/2 1/0 1 /2 1/ a/b 1/2/3; do
  usage "$MF_BIN/mf-eval" run --suite s.json --output - --shard "$shard"
done
usage "$MF_BIN/mf-eval" run --suite s.json --output - --repeat 0
usage "$MF_BIN/mf-eval" run --suite s.json --output - --repeat 1001
usage "$MF_BIN/mf-eval" run --suite s.json --output - --resume
# A secret given as an option value is never echoed back.
run 2 "$MF_BIN/mf-eval" run --suite s.json --output - -j Xsk-4f9Xa8Qm2LwZ7bT1cV0dE3
! grep -q 4f9Xa8Qm2LwZ7bT1cV0dE3 "$tmp/err" || fail "a usage error echoed a key"
grep -q 'REDACTED' "$tmp/err" || fail "the usage error does not say what it redacted"
# An option of another subcommand is refused, not ignored.
usage "$MF_BIN/mf-eval" compare --baseline a.json --candidate b.json --suite s.json
usage "$MF_BIN/mf-store" ls --dry-run
usage "$MF_BIN/mf-compile" verify --catalog c.json plan.json
usage "$MF_BIN/mf-toolread" --root . --path README.md --query x
usage "$MF_BIN/mf-toolread" search --root . --query x --start-line 2
usage "$MF_BIN/mf-run" tool read --workspace . --args '{}' --task t.json
usage "$MF_BIN/mf-run" --task t.json --model scripted:r.json --trace - --output - --workspace .

# Subcommand mistakes are usage errors.
run 2 "$MF_BIN/mf-store"
grep -q '^mf-store: usage error: missing COMMAND' "$tmp/err" || fail "mf-store without a command"
run 2 "$MF_BIN/mf-store" frobnicate
grep -q "^mf-store: usage error: unknown command 'frobnicate'" "$tmp/err" || fail "unknown command"
run 2 "$MF_BIN/mf-eval" frobnicate
grep -q "^mf-eval: usage error: unknown command 'frobnicate'" "$tmp/err" || fail "unknown command"
run 2 "$MF_BIN/mf-run" stray-argument
[[ ! -s $tmp/out ]] || fail "mf-run stray-argument wrote to stdout"

echo "conventions: ok"
