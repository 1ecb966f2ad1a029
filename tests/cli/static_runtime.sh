#!/usr/bin/env bash
# With MF_STATIC_DEPS (the default outside the sanitizer and fuzz builds) the programs carry the C++
# runtime in themselves: none loads libstdc++.so or libgcc_s.so at start-up, directly or through a
# shared library it needs. Binding that runtime's symbols costs each process about as much as the
# whole /bin/true (docs/benchmarks.md, "Process start-up").
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
if [[ ${MF_STATIC_DEPS:-} != ON ]]; then
  echo "static_runtime: skipped (MF_STATIC_DEPS is '${MF_STATIC_DEPS:-}', not ON)"
  exit 77
fi
for p in mf-compile mf-run mf-replay mf-eval mf-toolread mf-audit mf-store; do
  ldd "$MF_BIN/$p" >"$tmp/libs" || fail "ldd $p"
  grep -q 'libc\.so' "$tmp/libs" || fail "$p: ldd lists no libc (is it dynamic?)"
  ! grep -E 'lib(stdc\+\+|gcc_s)\.so' "$tmp/libs" >"$tmp/runtime" ||
    fail "$p loads a shared C++ runtime: $(tr -s ' \t\n' ' ' <"$tmp/runtime")"
done
echo "static_runtime: ok"
