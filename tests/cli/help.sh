#!/usr/bin/env bash
# Help where people look: `TOOL SUB --help` and `TOOL help SUB` show only SUB's usage, options and
# examples; `TOOL --help` the overview with one line per subcommand; every line of every help fits
# in 80 columns and every wrapped example is still one shell command; the man page (--help-man)
# renders without a warning and lists every option --help lists.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

tools=(mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store)
# The long options a help text lists, one a line.
options_of() { grep -oE '^  (-[a-zA-Z], |    )--[a-z][a-z0-9-]*' "$1" | sed 's/.*--/--/' | sort -u; }

# --- one subcommand's help ------------------------------------------------------------------------
run 0 "$MF_BIN/mf-eval" run --help
cp "$tmp/out" "$tmp/run-help"
grep -q -- '--suite FILE' "$tmp/out" || fail "mf-eval run --help lacks --suite"
! grep -q -- '--baseline\|--max-regressions' "$tmp/out" || fail "mf-eval run --help shows compare's options"
! grep -q '^  mf-eval compare\|^  mf-eval report' "$tmp/out" || fail "mf-eval run --help shows other examples"
grep -q '^  mf-eval run ' "$tmp/out" || fail "mf-eval run --help has no run example"
! grep -q '^       mf-eval compare' "$tmp/out" || fail "mf-eval run --help shows compare's usage"
grep -q -- '--quiet' "$tmp/out" || fail "mf-eval run --help lacks the common options"
run 0 "$MF_BIN/mf-eval" help run
cmp -s "$tmp/out" "$tmp/run-help" || fail "'mf-eval help run' differs from 'mf-eval run --help'"
run 0 "$MF_BIN/mf-eval" compare --help
grep -q -- '--baseline FILE' "$tmp/out" || fail "mf-eval compare --help lacks --baseline"
! grep -q -- '--suite' "$tmp/out" || fail "mf-eval compare --help shows run's options"
run 0 "$MF_BIN/mf-compile" verify --help
! grep -q -- '--catalog\|--profiles' "$tmp/out" || fail "mf-compile verify --help shows compile options"
grep -q '^Usage: mf-compile verify PLAN' "$tmp/out" || fail "mf-compile verify --help: no usage"
# A usage line the main wrapped by hand stays one usage line, the subcommand's.
run 0 "$MF_BIN/mf-toolread" search --help
sed -n '/^Usage:/,/^$/p' "$tmp/out" | grep -q -- '--max-matches N' ||
  fail "mf-toolread search --help: the usage line lost its continuation"
run 0 "$MF_BIN/mf-store" --store "$tmp/s" gc --help
grep -q -- '--dry-run' "$tmp/out" || fail "mf-store gc --help lacks --dry-run"
! grep -q -- '--lines\|--refs' "$tmp/out" || fail "mf-store gc --help shows other commands' options"

# --- the overview ---------------------------------------------------------------------------------
run 0 "$MF_BIN/mf-eval" --help
cp "$tmp/out" "$tmp/overview"
grep -q '^Commands:$' "$tmp/out" || fail "mf-eval --help lists no commands"
for c in run merge report compare; do
  grep -qE "^  $c +[a-z]" "$tmp/out" || fail "mf-eval --help: no line for $c"
done
! options_of "$tmp/out" | grep -q -- '--suite\|--baseline' || fail "mf-eval --help lists subcommand options"
run 0 "$MF_BIN/mf-eval" help
cmp -s "$tmp/out" "$tmp/overview" || fail "'mf-eval help' differs from 'mf-eval --help'"
run 0 "$MF_BIN/mf-compile" --help
grep -q -- '--catalog' "$tmp/out" || fail "mf-compile --help lacks the options of compiling"
! options_of "$tmp/out" | grep -q -- '--server' || fail "mf-compile --help lists connector's options"

# --- help for a subcommand that does not exist ----------------------------------------------------
run 2 "$MF_BIN/mf-eval" help nosuch
[[ ! -s $tmp/out ]] || fail "mf-eval help nosuch wrote to stdout"
grep -q "^mf-eval: usage error: no command 'nosuch' (commands: run, merge, report, compare, verify)$" \
  "$tmp/err" || fail "mf-eval help nosuch: $(head -1 "$tmp/err")"
run 2 "$MF_BIN/mf-replay" help nosuch
grep -q "usage error: no command 'nosuch': mf-replay has no subcommands" "$tmp/err" ||
  fail "mf-replay help nosuch: $(head -1 "$tmp/err")"

# --- every help of every program: 80 columns, examples that are shell, a man page ----------------
for tool in "${tools[@]}"; do
  commands=$("$MF_BIN/$tool" --complete "" | grep -v '^:\|^help$' || true)
  for command in "" $commands; do
    run 0 "$MF_BIN/$tool" $command --help
    long=$(awk 'length > 80' "$tmp/out")
    [[ -z $long ]] || fail "$tool $command --help has lines over 80 columns: $long"
    # The examples, continuation lines included, parse as shell.
    sed -n '/^Examples:$/,/^$/p' "$tmp/out" | sed '1d' >"$tmp/examples.sh"
    bash -n "$tmp/examples.sh" 2>"$tmp/err" || fail "$tool $command --help: an example is not shell: $(cat "$tmp/err")"
    [[ -z $command ]] || grep -q "^Usage: $tool .*$command" "$tmp/out" || fail "$tool $command --help: no usage"
    options_of "$tmp/out" >>"$tmp/$tool.options"
  done
  run 0 "$MF_BIN/$tool" --help-man
  cp "$tmp/out" "$tmp/$tool.1"
  groff -ww -z -man "$tmp/$tool.1" 2>"$tmp/warnings" || fail "$tool: groff fails on the man page"
  [[ ! -s $tmp/warnings ]] || fail "$tool man page: $(head -3 "$tmp/warnings")"
  for section in NAME SYNOPSIS DESCRIPTION OPTIONS EXAMPLES 'EXIT STATUS' 'SEE ALSO'; do
    grep -q "^\.SH $section$" "$tmp/$tool.1" || fail "$tool man page: no $section"
  done
  [[ -z $commands ]] || grep -q '^\.SH COMMANDS$' "$tmp/$tool.1" || fail "$tool man page: no COMMANDS"
  rendered=$(groff -man -Tutf8 -P-cbou "$tmp/$tool.1" 2>/dev/null | sed 's/‐/-/g')
  for option in $(sort -u "$tmp/$tool.options"); do
    grep -q -- "$option" <<<"$rendered" || fail "$tool man page lacks $option"
  done
done

echo "help: ok"
