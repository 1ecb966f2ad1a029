#!/usr/bin/env bash
# Diagnostics on stderr (docs/diagnostics.md): what an input names reaches a terminal escaped. A
# JSON harness whose unknown member's name holds ESC, BEL, a newline and U+202E (RIGHT-TO-LEFT
# OVERRIDE) is refused in one line that holds none of those bytes, with the \xHH and \u{HHHH}
# forms in their place, while the compile report, JSON, carries the name exactly; a usage error
# escapes the option it echoes the same way.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

mfc=$MF_BIN/mf-compile
command -v jq >/dev/null || fail "jq is not installed"

jq '. + {"x\u001b]0;owned\u0007\u001b[2J\ny\u202ez": 1}' "$MF_SOURCE_DIR/fixtures/harness/golden.json" \
  >"$tmp/bad.json"
refuse 2 MF-S021 "$mfc" "$tmp/bad.json" --catalog builtin -o - --diagnostics "$tmp/report.json"
# No raw C0 control (ESC, BEL, a newline within the line) and no bidi control on stderr.
[[ $(wc -l <"$tmp/err") -eq 1 ]] || fail "the diagnostic is not one line: $(cat "$tmp/err")"
! LC_ALL=C grep -qP '[\x00-\x09\x0b-\x1f\x7f]|\xe2\x80[\xaa-\xae\x8e\x8f]|\xe2\x81[\xa6-\xa9]' \
  "$tmp/err" || fail "raw control bytes on stderr: $(od -c "$tmp/err" | head)"
grep -qF 'x\x1b]0;owned\x07\x1b[2J\x0ay\u{202E}z' "$tmp/err" || fail "escaped form: $(cat "$tmp/err")"
grep -qF '(at /x\x1b]0;owned\x07\x1b[2J\x0ay\u{202E}z)' "$tmp/err" || fail "escaped pointer"
# The JSON report keeps the exact name (JSON escapes the C0 controls itself).
jq -e '.diagnostics[0].pointer == "/x\u001b]0;owned\u0007\u001b[2J\ny\u202ez"' "$tmp/report.json" \
  >/dev/null || fail "the report's pointer is not exact: $(cat "$tmp/report.json")"

# A usage error echoes the option it refuses, escaped the same way.
refuse_usage() {
  run 2 "$@"
  ! LC_ALL=C grep -qP '\x1b|\xe2\x80\xae' "$tmp/err" || fail "usage: raw controls: $(od -c "$tmp/err")"
  grep -qF "unrecognised option '--x\x1b[2J\u{202E}'" "$tmp/err" || fail "usage: $(cat "$tmp/err")"
}
refuse_usage "$mfc" $'--x\e[2J\u202e'

echo "diagnostics: ok"
