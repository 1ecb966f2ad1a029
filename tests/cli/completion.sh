#!/usr/bin/env bash
# The bash completion offers the commands and options each program's --help lists, and files.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

PATH=$MF_BIN:$PATH
source "${MF_SOURCE_DIR:-.}/completions/mf.bash"
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
  ! grep -qx -- "$1" <<<"$2" || fail "completion offers '$1', which --help does not list"
}

cd "$tmp"
touch plan.compiled.json
got=$(complete_words mf-store "")
for c in put get has ls ref verify gc export import stat canon hash; do has "$c" "$got" mf-store; done
has plan.compiled.json "$got" mf-store
got=$(complete_words mf-store --store dir "")
has verify "$got" mf-store --store dir
got=$(complete_words mf-compile --ca)
has --catalog "$got" mf-compile --ca
has --capabilities "$got" mf-compile --ca
lacks --profiles "$got"
got=$(complete_words mf-compile "")
has verify "$got" mf-compile
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
echo "completion: ok"
