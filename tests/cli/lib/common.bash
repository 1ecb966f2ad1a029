# Shared by the end-to-end scripts in tests/cli/ (sourced, not a test itself): a private temporary
# directory removed on exit, `fail`, and `run EXPECTED_RC CMD...`, which runs CMD with stdin from
# $stdin (else /dev/null), keeps its output in $tmp/out and $tmp/err, and fails on another exit code;
# `refuse EXPECTED_RC CODE CMD...`, the same for a refusal.
# KEEP_TMP=1 keeps the temporary directory for a look after a failure.
: "${MF_BIN:?set MF_BIN to the bin directory of a build}"
tmp=$(mktemp -d)
trap '[[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

run() {
  local expected=$1
  shift
  local rc=0
  "$@" <"${stdin:-/dev/null}" >"$tmp/out" 2>"$tmp/err" || rc=$?
  if [[ $rc -ne $expected ]]; then
    echo "--- stdout" >&2; head -c 2000 "$tmp/out" >&2
    echo "--- stderr" >&2; cat "$tmp/err" >&2
    fail "$* exited $rc, expected $expected"
  fi
}

# refuse EXPECTED_RC CODE CMD... : runs CMD as `run` does and expects a refusal: that exit code,
# nothing on stdout, and the diagnostic "error CODE:" on stderr.
refuse() {
  local expected=$1 code=$2
  shift 2
  run "$expected" "$@"
  [[ ! -s $tmp/out ]] || fail "$* wrote to stdout on refusal"
  grep -q "error $code:" "$tmp/err" || { cat "$tmp/err" >&2; fail "$* did not report $code"; }
}

# link : links JSONL trace lines on stdin into a hash chain as the trace writer does (each line
# is made canonical, and each after the first gets "prev", the SHA-256 of the line before it) —
# and as anyone rewriting a trace could.
link() {
  local prev="" line
  while IFS= read -r line; do
    if [[ -n $prev ]]; then
      line=$(jq -c --arg p "$prev" '. + {prev: $p}' <<<"$line" | "$MF_BIN/mf-store" canon)
    else
      line=$("$MF_BIN/mf-store" canon <<<"$line")
    fi
    printf '%s\n' "$line"
    prev=$(printf '%s' "$line" | sha256sum | cut -d' ' -f1)
  done
}
