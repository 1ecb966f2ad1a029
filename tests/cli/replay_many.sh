#!/usr/bin/env bash
# mf-replay over many traces (docs/replay.md, "Many traces"): several TRACE operands, a directory's
# *.jsonl, an eval report's attempts (--report) checked against their trace_sha256; one line per
# trace in the order given for any -j; tampered, swapped, missing and extra traces; the options
# that take one trace refused.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

replay="$MF_BIN/mf-replay"
command -v jq >/dev/null || { echo "jq is required" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

# A small campaign with its traces: the four Forge cases, twice each.
mkdir "$tmp/tr"
rc=0
"$MF_BIN/mf-eval" run --suite fixtures/forge/eval-suite.json --fixed-clock --repeat 2 \
  --output "$tmp/r.json" --traces "$tmp/tr" >/dev/null 2>&1 || rc=$?
[[ $rc -le 1 ]] || fail "mf-eval run exited $rc"
r=$tmp/r.json
mapfile -t files < <(cd "$tmp/tr" && printf '%s\n' *.jsonl)
[[ ${#files[@]} -eq 8 ]] || fail "the campaign wrote ${#files[@]} traces, expected 8"

# --- the directory: one line per trace, sorted by name, each the one-trace summary and its path -----
run 0 "$replay" "$tmp/tr"
[[ $(wc -l <"$tmp/out") -eq 8 ]] || fail "DIR gave $(wc -l <"$tmp/out") lines"
[[ ! -s $tmp/err ]] || fail "a passing DIR wrote to stderr: $(cat "$tmp/err")"
[[ $(jq -r .path "$tmp/out") == "$(printf "$tmp/tr/%s\n" "${files[@]}")" ]] ||
  fail "paths are not the directory's traces sorted by name: $(jq -r .path "$tmp/out")"
cp "$tmp/out" "$tmp/dir.out"
i=0
while IFS= read -r line; do
  path=$(jq -r .path <<<"$line")
  "$replay" "$path" >"$tmp/one" || fail "single replay of $path failed"
  [[ $(jq -cS 'del(.path)' <<<"$line") == "$(cat "$tmp/one")" ]] ||
    fail "line $i is not the single-trace summary of $path"
  # Each line is canonical JSON.
  [[ $("$MF_BIN/mf-store" canon <<<"$line") == "$line" ]] || fail "line $i is not canonical"
  i=$((i + 1))
done <"$tmp/dir.out"
# A single TRACE keeps its summary without a path.
run 0 "$replay" "$tmp/tr/${files[0]}"
[[ $(jq -c 'has("path")' "$tmp/out") == false ]] || fail "a single TRACE's summary has a path"

# --- several operands: in argument order, a directory expanded in place ---------------------------
run 0 "$replay" "$tmp/tr/${files[5]}" "$tmp/tr/${files[2]}" "$tmp/tr/${files[5]}"
[[ $(jq -r .path "$tmp/out" | tr '\n' ' ') == \
   "$tmp/tr/${files[5]} $tmp/tr/${files[2]} $tmp/tr/${files[5]} " ]] ||
  fail "operands out of order: $(jq -r .path "$tmp/out")"
run 0 "$replay" "$tmp/tr/${files[7]}" "$tmp/tr/"
[[ $(wc -l <"$tmp/out") -eq 9 ]] || fail "a file and a DIR gave $(wc -l <"$tmp/out") lines"
[[ $(tail -n 8 "$tmp/out" | jq -r .path | sed 's#tr//#tr/#') == "$(jq -r .path "$tmp/dir.out")" ]] ||
  fail "the DIR operand was not expanded in place"

# --- --report: every attempt the report names, against its trace_sha256 ----------------------------
run 0 "$replay" --report "$r" "$tmp/tr"
[[ $(jq -r .attempt "$tmp/out") == "$(jq -r '.cases[] | .id as $id | .attempts[] | "\($id).\(.repeat)"' "$r")" ]] ||
  fail "attempts: $(jq -r .attempt "$tmp/out")"
[[ $(jq -r .trace_sha256 "$tmp/out") == "$(jq -r '.cases[].attempts[].trace_sha256' "$r")" ]] ||
  fail "digests differ from the report's"
[[ $(jq -c 'del(.attempt)' "$tmp/out") == "$(cat "$tmp/dir.out")" ]] ||
  fail "--report lines differ from the DIR lines beyond the attempt"
# A report without repeats names <id>.jsonl.
mkdir "$tmp/tr1"
rc=0
"$MF_BIN/mf-eval" run --suite fixtures/forge/eval-suite.json --fixed-clock \
  --output "$tmp/r1.json" --traces "$tmp/tr1" >/dev/null 2>&1 || rc=$?
[[ $rc -le 1 ]] || fail "mf-eval run exited $rc"
run 0 "$replay" --report "$tmp/r1.json" "$tmp/tr1"
[[ $(jq -r .attempt "$tmp/out" | tr '\n' ' ') == \
   "invalid-without-repair one-targeted-repair provider-failure valid-first-response " ]] ||
  fail "attempts without repeats: $(jq -r .attempt "$tmp/out")"
[[ $(jq -r .path "$tmp/out" | head -1) == "$tmp/tr1/invalid-without-repair.jsonl" ]] ||
  fail "trace file of an unrepeated case: $(jq -r .path "$tmp/out" | head -1)"

# --- -j: the same bytes for any number in flight, failures included -------------------------------
mkdir "$tmp/many"
for n in $(seq -w 1 40); do cp "$tmp/tr/${files[$((10#$n % 8))]}" "$tmp/many/t$n.jsonl"; done
sed -i '2s/"t_ms":0/"t_ms":1/' "$tmp/many/t07.jsonl" "$tmp/many/t31.jsonl"
run 1 "$replay" -j 1 "$tmp/many"
cp "$tmp/out" "$tmp/j1.out"
cp "$tmp/err" "$tmp/j1.err"
for j in 2 4 16; do
  run 1 "$replay" -j "$j" "$tmp/many"
  cmp -s "$tmp/out" "$tmp/j1.out" || fail "-j $j stdout differs from -j 1"
  cmp -s "$tmp/err" "$tmp/j1.err" || fail "-j $j stderr differs from -j 1"
done
[[ $(wc -l <"$tmp/j1.out") -eq 40 ]] || fail "40 traces gave $(wc -l <"$tmp/j1.out") lines"
[[ $(jq -r 'select(.status != "ok") | .path' "$tmp/j1.out" | tr '\n' ' ') == \
   "$tmp/many/t07.jsonl $tmp/many/t31.jsonl " ]] || fail "failed traces: $(cat "$tmp/j1.out")"
[[ $(wc -l <"$tmp/j1.err") -eq 2 ]] && grep -q "t07.jsonl:3: error MF-E016" "$tmp/j1.err" &&
  grep -q "t31.jsonl:3: error MF-E016" "$tmp/j1.err" || fail "stderr: $(cat "$tmp/j1.err")"

# --- tampering ---------------------------------------------------------------------------------------
cp -r "$tmp/tr" "$tmp/t"
# One trace edited: it fails, named, in both forms; the others still pass.
sed -i '2s/"t_ms":0/"t_ms":1/' "$tmp/t/${files[3]}"
for form in "$tmp/t" "--report $r $tmp/t"; do
  # shellcheck disable=SC2086
  run 1 "$replay" $form
  [[ $(jq -r 'select(.status != "ok") | .path' "$tmp/out") == "$tmp/t/${files[3]}" ]] ||
    fail "$form: the edited trace is not the one failed: $(cat "$tmp/out")"
  [[ $(jq -c 'select(.status != "ok") | [.status, .first_error.code]' "$tmp/out") == \
     '["corrupt","MF-E016"]' ]] || fail "$form: the edit is not a broken chain"
  grep -q "$tmp/t/${files[3]}:3: error MF-E016" "$tmp/err" || fail "$form stderr: $(cat "$tmp/err")"
done
grep -q "attempt ${files[3]%.jsonl}: " "$tmp/err" || fail "--report stderr lacks the attempt"
cp "$tmp/tr/${files[3]}" "$tmp/t/"

# Two traces' files swapped: each passes alone, and the report catches both by their digests.
mv "$tmp/t/${files[1]}" "$tmp/t/swap"
mv "$tmp/t/${files[6]}" "$tmp/t/${files[1]}"
mv "$tmp/t/swap" "$tmp/t/${files[6]}"
run 0 "$replay" "$tmp/t"
run 1 "$replay" --report "$r" "$tmp/t"
[[ $(jq -c 'select(.status != "ok") | [.attempt, .first_error.code]' "$tmp/out" | tr '\n' ' ') == \
   "[\"${files[1]%.jsonl}\",\"MF-E018\"] [\"${files[6]%.jsonl}\",\"MF-E018\"] " ]] ||
  fail "swapped traces: $(jq -c 'select(.status != "ok")' "$tmp/out")"
[[ $(grep -c "error MF-E018: attempt" "$tmp/err") -eq 2 ]] || fail "stderr: $(cat "$tmp/err")"
grep -q "${files[1]}: error MF-E018: attempt ${files[1]%.jsonl}: " "$tmp/err" ||
  fail "stderr does not name the first swapped attempt: $(cat "$tmp/err")"
rm -r "$tmp/t" && cp -r "$tmp/tr" "$tmp/t"

# One deleted: the report names it (its own line, the cause); the directory no longer has it.
rm "$tmp/t/${files[4]}"
run 1 "$replay" --report "$r" "$tmp/t"
[[ $(wc -l <"$tmp/out") -eq 8 ]] || fail "a deleted trace's line is missing"
[[ $(jq -c 'select(.status != "ok") | [.attempt, .status, .first_error.code]' "$tmp/out") == \
   "[\"${files[4]%.jsonl}\",\"unreadable\",\"MF-S013\"]" ]] ||
  fail "deleted trace: $(jq -c 'select(.status != "ok")' "$tmp/out")"
grep -q "${files[4]}: error MF-S013: attempt ${files[4]%.jsonl}: cannot open trace" "$tmp/err" ||
  fail "stderr: $(cat "$tmp/err")"
run 0 "$replay" "$tmp/t"
[[ $(wc -l <"$tmp/out") -eq 7 ]] || fail "DIR without one trace gave $(wc -l <"$tmp/out") lines"
# A missing operand is its own line with the cause; the others are still verified.
run 1 "$replay" "$tmp/t/${files[0]}" "$tmp/t/${files[4]}" "$tmp/t/${files[2]}"
[[ $(jq -c '[.status, .first_error.code // null]' "$tmp/out" | tr '\n' ' ') == \
   '["ok",null] ["unreadable","MF-S013"] ["ok",null] ' ]] || fail "missing operand: $(cat "$tmp/out")"
cp "$tmp/tr/${files[4]}" "$tmp/t/"

# An extra file: the directory form replays it; --report names it as a trace it does not name
# (tests/cli/replay_report.sh), without reading it.
cp "$tmp/tr/${files[0]}" "$tmp/t/zz-extra.jsonl"
echo "not a trace" >"$tmp/t/notes.txt"
mkdir "$tmp/t/sub.jsonl.d" && cp "$tmp/tr/${files[0]}" "$tmp/t/sub.jsonl.d/"
run 0 "$replay" "$tmp/t"
[[ $(wc -l <"$tmp/out") -eq 9 && $(jq -r .path "$tmp/out" | tail -1) == "$tmp/t/zz-extra.jsonl" ]] ||
  fail "DIR with an extra trace: $(jq -r .path "$tmp/out")"
run 1 "$replay" --report "$r" "$tmp/t"
[[ $(wc -l <"$tmp/out") -eq 9 && $(tail -n 1 "$tmp/out") == "{\"path\":\"$tmp/t/zz-extra.jsonl\",\"status\":\"extra\"}" ]] ||
  fail "--report with an extra file: $(cat "$tmp/out")"
# A directory named like a trace is its own line (MF-S014).
mkdir "$tmp/t/dir.jsonl"
run 1 "$replay" "$tmp/t"
[[ $(jq -c 'select(.status != "ok") | [.path, .status, .first_error.code]' "$tmp/out") == \
   "[\"$tmp/t/dir.jsonl\",\"unreadable\",\"MF-S014\"]" ]] || fail "a directory trace: $(cat "$tmp/out")"
grep -q "dir.jsonl: error MF-S014: trace '.*dir.jsonl' is a directory" "$tmp/err" ||
  fail "stderr: $(cat "$tmp/err")"

# --- refused: options that take one trace, stdin among many, a bad --report or DIR ------------------
two=("$tmp/tr/${files[0]}" "$tmp/tr/${files[1]}")
for opt in "--expect-sha256 $(sha "$tmp/tr/${files[0]}")" --strict "--fork-at 2" "--plan p.json" \
  "--responses r.json" "--trace new.jsonl" "--workspace ." "--artifacts $tmp" "--run-id x" \
  --fixed-clock "--export otlp-json" "--start-unix-ms 5"; do
  # shellcheck disable=SC2086
  run 2 "$replay" $opt "${two[@]}"
  grep -q "usage error: ${opt%% *} takes one TRACE" "$tmp/err" || fail "$opt: $(cat "$tmp/err")"
  [[ ! -s $tmp/out ]] || fail "$opt wrote to stdout"
  # shellcheck disable=SC2086
  run 2 "$replay" $opt "$tmp/tr"
  grep -q "usage error: ${opt%% *} takes one TRACE" "$tmp/err" || fail "$opt DIR: $(cat "$tmp/err")"
done
run 2 "$replay" "${two[0]}" -
grep -q "usage error: '-' (stdin) is one TRACE" "$tmp/err" || fail "stdin among many: $(cat "$tmp/err")"
run 2 "$replay" --report "$r"
grep -q "usage error: --report takes one DIR" "$tmp/err" || fail "--report without DIR"
run 2 "$replay" --report "$r" "$tmp/tr" "$tmp/tr1"
grep -q "usage error: --report takes one DIR" "$tmp/err" || fail "--report with two DIRs"
refuse 2 MF-S013 "$replay" --report "$tmp/nope.json" "$tmp/tr"
echo '{"v":1}' >"$tmp/bad.json"
run 2 "$replay" --report "$tmp/bad.json" "$tmp/tr"
[[ ! -s $tmp/out ]] || fail "an invalid report printed lines"
mkdir "$tmp/empty"
refuse 2 MF-S013 "$replay" "$tmp/empty"
grep -q "holds no \*.jsonl trace" "$tmp/err" || fail "empty DIR: $(cat "$tmp/err")"
run 2 "$replay" -j 0 "$tmp/tr"

# --- the output cannot be written: exit 3 --------------------------------------------------------
if [[ -w /dev/full ]]; then
  rc=0
  "$replay" "$tmp/tr" >/dev/full 2>"$tmp/err" || rc=$?
  [[ $rc -eq 3 ]] || fail "lines to /dev/full exited $rc, expected 3"
fi

# --- memory: flat in the number of traces (one name per trace, the traces streamed) --------------
mkdir "$tmp/big"
for n in $(seq 1 1000); do cp "$tmp/tr/${files[1]}" "$tmp/big/t$n.jsonl"; done
rss() { /usr/bin/time -f %M "$replay" -j 2 "$@" 2>&1 >/dev/null | tail -1; }
small=$(rss "$tmp/big/t1.jsonl" "$tmp/big/t2.jsonl")
large=$(rss "$tmp/big")
# Under AddressSanitizer, whose quarantine keeps freed memory, RSS says little: not checked there.
grep -q __asan_init "$replay" || ((large * 10 < small * 13)) ||
  fail "peak RSS grew from $small KiB (2 traces) to $large KiB (1000)"

# --- help: an example of each form ---------------------------------------------------------------
run 0 "$replay" --help
for example in "mf-replay -j 4 traces/" "mf-replay a.jsonl b.jsonl" "mf-replay --report report.json traces/"; do
  grep -qF -- "$example" "$tmp/out" || fail "--help lacks '$example'"
done

echo "replay_many: ok"
