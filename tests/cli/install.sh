#!/usr/bin/env bash
# `cmake --install` into a fresh prefix installs the seven programs, one bash completion per
# program and the docs; every other end-to-end script then passes against the installed programs.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

build=$(dirname "$MF_BIN")
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
for program in mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store; do
  [[ -x $prefix/bin/$program ]] || fail "$program is not installed"
  [[ -f $prefix/share/bash-completion/completions/$program ]] || fail "no completion for $program"
  "$prefix/bin/$program" --version >/dev/null || fail "installed $program --version fails"
done
[[ -f $prefix/share/doc/millforge/cli.md && -f $prefix/share/doc/millforge/README.md ]] ||
  fail "docs are not installed"
[[ -z $(find "$prefix" -name '*.a' -o -name '*.hpp' | head -1) ]] || fail "build internals installed"

# The product self-test runs from the prefix, outside the source tree, to the source tree's report.
(cd "$tmp" && "$prefix/bin/mf-audit" --out installed-audit -q >/dev/null) ||
  fail "the installed mf-audit does not pass its self-test"
"$MF_BIN/mf-audit" --out "$tmp/tree-audit" -q >/dev/null || fail "the self-test fails in the tree"
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
