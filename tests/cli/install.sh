#!/usr/bin/env bash
# `cmake --install` into a fresh prefix installs the seven programs, their man pages, their bash,
# zsh and fish completions and the docs; every other end-to-end script then passes against the installed programs.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

build=$(dirname "$MF_BIN")
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
for program in mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store; do
  [[ -x $prefix/bin/$program ]] || fail "$program is not installed"
  [[ -f $prefix/share/bash-completion/completions/$program ]] || fail "no completion for $program"
  [[ -f $prefix/share/fish/vendor_completions.d/$program.fish ]] || fail "no fish completion: $program"
  "$prefix/bin/$program" --version >/dev/null || fail "installed $program --version fails"
  # The man page is the one the program renders (tests/cli/help.sh checks its content), and man
  # finds it under the prefix and formats it without a warning.
  page=$prefix/share/man/man1/$program.1
  [[ -f $page ]] || fail "no man page for $program"
  cmp -s "$page" <("$prefix/bin/$program" --help-man) || fail "$page is not $program --help-man"
  [[ $(MANPATH=$prefix/share/man man -w "$program") == "$page" ]] || fail "man does not find $page"
  MANWIDTH=80 man --warnings=w -l "$page" 2>"$tmp/man.err" | grep -q -- '--help' ||
    fail "man -l $page does not render"
  [[ ! -s $tmp/man.err ]] || fail "man -l $page: $(head -2 "$tmp/man.err")"
done
[[ -f $prefix/share/zsh/site-functions/_mf ]] || fail "no zsh completion"
[[ -f $prefix/share/doc/millforge/cli.md && -f $prefix/share/doc/millforge/README.md ]] ||
  fail "docs are not installed"
[[ -z $(find "$prefix" -name '*.a' -o -name '*.hpp' | head -1) ]] || fail "build internals installed"

# The product self-test runs from the prefix, outside the source tree, to the source tree's report.
mkdir "$tmp/installed-audit" "$tmp/tree-audit"
(cd "$tmp" && "$prefix/bin/mf-audit" --out-dir installed-audit -q >/dev/null) ||
  fail "the installed mf-audit does not pass its self-test"
"$MF_BIN/mf-audit" --out-dir "$tmp/tree-audit" -q >/dev/null || fail "the self-test fails in the tree"
cmp -s "$tmp/installed-audit/exit-report.json" "$tmp/tree-audit/exit-report.json" ||
  fail "the installed self-test's report differs from the source tree's"

here=$(cd "$(dirname "$0")" && pwd)
for script in "$here"/*.sh; do
  [[ $(basename "$script") == install.sh ]] && continue
  rc=0
  MF_BIN=$prefix/bin bash "$script" >"$tmp/script.log" 2>&1 || rc=$?
  # 77: the script skipped itself (what it needs is not here), as CTest's SKIP_RETURN_CODE says.
  if [[ $rc -ne 0 && $rc -ne 77 ]]; then
    tail -20 "$tmp/script.log" >&2
    fail "$(basename "$script") fails against the installed programs"
  fi
done
echo "install: ok"
