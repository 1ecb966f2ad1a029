#!/usr/bin/env bash
# Completion asks the program (`PROGRAM --complete WORD...`): bash, zsh and fish offer the commands,
# the options of the command typed, the values of options with choices, --model's backends,
# environment variable names for --*-env, and files or directories where a value is one.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

PATH=$MF_BIN:$PATH
src=$(cd "${MF_SOURCE_DIR:-.}" && pwd)
source "$src/completions/mf.bash"
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  _mf_complete
  printf '%s\n' "${COMPREPLY[@]}"
}
has() {
  grep -qx -- "$1" <<<"$2" || fail "completion of '${*:3}' lacks '$1': $(tr '\n' ' ' <<<"$2")"
}
lacks() {
  ! grep -qx -- "$1" <<<"$2" || fail "completion offers '$1' where it should not: $(tr '\n' ' ' <<<"$2")"
}

cd "$tmp"
touch plan.compiled.json
got=$(complete_words mf-store "")
for c in put get has ls ref verify gc export import stat canon hash; do has "$c" "$got" mf-store; done
lacks plan.compiled.json "$got"  # mf-store's first operand is always a command
has help "$got" mf-store
got=$(complete_words mf-store --store dir "")
has verify "$got" mf-store --store dir
got=$(complete_words mf-compile --ca)
has --catalog "$got" mf-compile --ca
has --capabilities "$got" mf-compile --ca
lacks --profiles "$got"
got=$(complete_words mf-compile "")
has verify "$got" mf-compile
has plan.compiled.json "$got" mf-compile  # or a HARNESS file
got=$(complete_words mf-eval "")
has run "$got" mf-eval
has compare "$got" mf-eval
got=$(complete_words mf-run --)
has --trace "$got" mf-run --
has --help "$got" mf-run --
# Every option offered is one the program accepts: none is unknown to it.
for program in mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store; do
  for option in $(complete_words "$program" --); do
    "$program" "$option" --help >/dev/null 2>"$tmp/err" && continue
    ! grep -qi "unrecognised\|unrecognized\|unknown option" "$tmp/err" ||
      fail "$program offers $option but refuses it: $(head -1 "$tmp/err")"
  done
done

# Options of the command typed only.
got=$(complete_words mf-eval compare --)
has --baseline "$got" mf-eval compare --
lacks --suite "$got"
got=$(complete_words mf-eval run --)
has --suite "$got" mf-eval run --
lacks --baseline "$got"
got=$(complete_words mf-eval help "")
has compare "$got" mf-eval help
# Values: choices, model backends (also after bash splits the word at ':' and '='), env names,
# files, directories.
got=$(complete_words mf-eval run --format "")
for v in json md junit html; do has "$v" "$got" mf-eval run --format; done
lacks plan.compiled.json "$got"
got=$(complete_words mf-run --cache re)
has read "$got" mf-run --cache re
has readwrite "$got" mf-run --cache re
lacks off "$got"
got=$(complete_words mf-run --guardrails "")
has full "$got" mf-run --guardrails
has no_rescue "$got" mf-run --guardrails
got=$(complete_words mf-replay --export "")
has otlp-json "$got" mf-replay --export
got=$(complete_words mf-compile --format "")
has yaml "$got" mf-compile --format
got=$(complete_words mf-run --model "")
for v in scripted: sim: openai: anthropic:; do has "$v" "$got" mf-run --model; done
got=$(complete_words mf-run --model scripted : "")
has plan.compiled.json "$got" mf-run --model scripted:
got=$(complete_words mf-run --model scripted : pl)
has plan.compiled.json "$got" mf-run --model scripted:pl
got=$(complete_words mf-eval run --model small = "")
has scripted: "$got" mf-eval run --model small=
got=$(complete_words mf-run --trace "")
has plan.compiled.json "$got" mf-run --trace
mkdir ws
got=$(complete_words mf-run --workspace "")
has ws "$got" mf-run --workspace
lacks plan.compiled.json "$got"
got=$(MF_COMPLETION_TEST_KEY=x complete_words mf-run --mac-key-env MF_COMPLETION_TEST)
has MF_COMPLETION_TEST_KEY "$got" mf-run --mac-key-env
got=$(complete_words mf-run --run-id "")
[[ -z $got ]] || fail "mf-run --run-id offers '$got'; an id has no candidates"

# The same through fish's own completion machinery, and zsh's script on zsh.
if command -v fish >/dev/null; then
  fish_complete() {
    fish --no-config -c "source '$src/completions/mf.fish'; complete -C '$1'" | cut -f1
  }
  fish -n "$src/completions/mf.fish" || fail "mf.fish does not parse"
  got=$(fish_complete 'mf-eval run --format ')
  for v in json md junit html; do has "$v" "$got" fish: mf-eval run --format; done
  got=$(fish_complete 'mf-eval ')
  has compare "$got" fish: mf-eval
  got=$(fish_complete 'mf-eval compare --')
  has --baseline "$got" fish: mf-eval compare --
  lacks --suite "$got"
  got=$(fish_complete 'mf-run --model scripted:pl')
  has scripted:plan.compiled.json "$got" fish: mf-run --model scripted:pl
  got=$(fish_complete 'mf-run --workspace ')
  has ws/ "$got" fish: mf-run --workspace
else
  echo "SKIP: fish completion: fish is not installed (scripts/install-deps.sh installs it)"
fi
if command -v zsh >/dev/null; then
  zsh -n "$src/completions/_mf" || fail "_mf does not parse"
  # _mf's own logic under zsh, with the completion system's builtins recording what they are given.
  zsh_complete() {
    zsh -f -c 'compadd() { while [[ $1 != -- ]]; do shift; done; shift; print -rl -- "$@"; }
      _files() { print -r -- ":files $*"; }
      compset() { print -r -- ":compset $*"; }
      words=("${@:2}"); CURRENT=${#words}; source "$1"' zsh "$src/completions/_mf" "$@"
  }
  got=$(zsh_complete mf-eval run --format "")
  for v in json md junit html; do has "$v" "$got" zsh: mf-eval run --format; done
  got=$(zsh_complete mf-eval "")
  has compare "$got" zsh: mf-eval
  got=$(zsh_complete mf-run --model "")
  has scripted: "$got" zsh: mf-run --model
  got=$(zsh_complete mf-run --model scripted:pl)
  has ":compset -P scripted:" "$got" zsh: mf-run --model scripted:pl
  has ":files " "$got" zsh: mf-run --model scripted:pl
  got=$(zsh_complete mf-run --workspace "")
  has ":files -/" "$got" zsh: mf-run --workspace
else
  echo "SKIP: zsh completion: zsh is not installed (scripts/install-deps.sh installs it)"
fi
echo "completion: ok"
