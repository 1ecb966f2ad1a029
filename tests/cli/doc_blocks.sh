#!/usr/bin/env bash
# Every shell block of the README and the docs runs as written. Each fenced block whose info string is
# sh, bash, console or shell, in README.md, docs/*.md, docs/formats/*.md and examples/**/README*, runs
# in document order; each file's blocks run in one bash session under `set -euo pipefail`, in a fresh
# copy of the repository's files holding what `make demo` leaves (build/bin, the demo's target/), with
# the programs on PATH. A failing command or pipe stage fails the test, naming the block (FILE:LINE)
# and the command's stderr. A block that cannot run here is skipped only when the line directly above
# its fence says why: `<!-- doc-test: skip: REASON -->` (a marker without a reason fails the test);
# `<!-- audit-user: NAME -->` marks a block of docs/audit.md that tests/cli/audit_user.sh runs.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

src=$(cd "$(dirname "$0")/../.." && pwd)
bin=$(cd "$MF_BIN" && pwd)
cd "$src"
docs=(README.md docs/*.md docs/formats/*.md)
while IFS= read -r readme; do docs+=("$readme"); done < <(find examples -path '*/README*' -type f | sort)

# The state `make demo` leaves in a fresh clone: the repository's files, the programs in build/bin and
# the demo's target/. Directories are copied (an installed tree has no git to list files).
base=$tmp/base
mkdir -p "$base/build"
cp -r README.md docs fixtures examples scripts "$base/"
ln -s "$bin" "$base/build/bin"
(cd "$base" && MF_BIN=build/bin scripts/demo.sh >"$tmp/demo.log" 2>&1) ||
  { tail -20 "$tmp/demo.log" >&2; fail "scripts/demo.sh failed"; }
# The MCP reference servers `make deps` installs (scripts/fetch-mcp-servers.sh), as cli.connector
# fetches them.
modules=${MF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/millforge}/mcp-servers/node_modules
[[ -d $modules/@modelcontextprotocol ]] || scripts/fetch-mcp-servers.sh >/dev/null

# script FILE: the bash session of FILE's blocks on stdout, each block between `__begin FILE:LINE` and
# `__end`. Skipped blocks go to $tmp/skips ("FILE:LINE: REASON"), faults of the markers to
# $tmp/faults.
script() {
  awk -v file="$1" -v skips="$tmp/skips" -v faults="$tmp/faults" '
    BEGIN { marker_line = -1 }
    function fault(msg, at) { print file ":" at ": " msg >> faults }
    in_block {
      if ($0 ~ "^ *" fence "[ \t]*$") {
        if (run) print "__end"
        in_block = 0
      } else if (run) {
        line = $0
        for (i = 0; i < indent && substr(line, 1, 1) == " "; i++) line = substr(line, 2)
        print line
      }
      prev = $0
      next
    }
    match($0, /^ *(```+|~~~+)/) {
      lead = $0
      sub(/[^ ].*/, "", lead)
      indent = length(lead)
      fence = substr($0, indent + 1, RLENGTH - indent)
      info = substr($0, RSTART + RLENGTH)
      sub(/^[ \t]+/, "", info)
      # A backtick fence has no backtick in its info string (CommonMark): ```` ``` ```` is a code span.
      if (fence ~ /^`/ && index(info, "`")) { prev = $0; next }
      split(info, word, /[ \t{,]/)
      shell = word[1] ~ /^(sh|bash|console|shell)$/
      in_block = 1
      run = 0
      if (marker_line == NR - 1 && !shell) fault("doc-test marker above a block that is not shell", marker_line)
      if (!shell) { prev = $0; next }
      if (prev ~ /^<!-- doc-test: skip: *[^ ].*-->$/) {
        reason = prev
        sub(/^<!-- doc-test: skip: */, "", reason)
        sub(/ *-->$/, "", reason)
        print file ":" NR ": " reason >> skips
      } else if (prev ~ /^<!-- audit-user: [^ ]+ -->$/) {
        print file ":" NR ": run by tests/cli/audit_user.sh (" prev ")" >> skips
      } else if (prev ~ /doc-test/) {
        fault("doc-test marker without a reason (<!-- doc-test: skip: REASON -->): " prev, NR - 1)
      } else {
        run = 1
        print "__begin " file ":" NR
      }
      prev = $0
      next
    }
    {
      if (marker_line == NR - 1) fault("doc-test marker not directly above a fenced shell block", marker_line)
      if ($0 ~ /doc-test/ && $0 ~ /^<!--/) marker_line = NR
      prev = $0
    }
    END { if (in_block) fault("unclosed fence", NR) }' "$1"
}

# Every file's session first, so that a malformed marker fails the test before anything runs.
: >"$tmp/skips"
: >"$tmp/faults"
mkdir -p "$tmp/sessions" "$tmp/run"
for i in "${!docs[@]}"; do
  {
    # The session's own helpers: progress on fd 3, the failing command and its line on stderr.
    cat <<'EOF'
set -Eeuo pipefail
__begin() { __where=$1; __base=${BASH_LINENO[0]}; echo "begin $1" >&3; }
__end() { echo "end $__where" >&3; }
__line() { echo $((${__where##*:} + $1 - __base)); }
trap '__rc=$? __status="${PIPESTATUS[*]}"; echo "doc_blocks: $__where: line $(__line $LINENO): exit $__status: $BASH_COMMAND" >&2; exit $__rc' ERR
EOF
    script "${docs[$i]}"
  } >"$tmp/sessions/$i.sh"
done
if [[ -s $tmp/faults ]]; then
  cat "$tmp/faults" >&2
  fail "malformed doc-test markers"
fi
while IFS= read -r skip; do echo "skip: $skip"; done <"$tmp/skips"

ran=0
for i in "${!docs[@]}"; do
  doc=${docs[$i]}
  session=$tmp/sessions/$i.sh
  blocks=$(grep -c '^__begin ' "$session" || true)
  ((blocks > 0)) || continue
  work=$tmp/run/$i
  cp -a "$base" "$work"
  rc=0
  start=$(date +%s%N)
  (cd "$work" && PATH=$bin:$PATH timeout 300 bash --noprofile --norc "$session" \
    </dev/null >"$tmp/out" 2>"$tmp/err" 3>"$tmp/progress") || rc=$?
  done_blocks=$(grep -c '^end ' "$tmp/progress" || true)
  if ((rc != 0 || done_blocks != blocks)); then
    where=$(sed -n 's/^begin //p' "$tmp/progress" | tail -1)
    echo "--- stderr of $doc's blocks" >&2
    tail -30 "$tmp/err" >&2
    ((rc != 0)) || fail "$where: the session stopped after $done_blocks of $blocks blocks (exit 0)"
    command=$(sed -n 's/^doc_blocks: [^ ]* //p' "$tmp/err" | tail -1)
    fail "$where: the block failed (${command:-exit $rc})"
  fi
  echo "$doc: $blocks block(s), $((($(date +%s%N) - start) / 1000000)) ms"
  ran=$((ran + blocks))
  rm -rf "$work"
done
((ran > 0)) || fail "no block ran"
echo "doc_blocks: ok ($ran blocks ran, $(wc -l <"$tmp/skips") skipped)"
