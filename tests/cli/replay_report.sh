#!/usr/bin/env bash
# mf-replay --report (docs/replay.md, "Many traces"): a trace in DIR the report does not name is a
# failure of its own; a trace that holds another attempt's bytes says whose; the traces of a
# campaign kept in a store (--store, MF_STORE), a missing object named by its attempt; -j bounded;
# memory beyond the report's own parse flat from 1,000 to 10,000 attempts.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

replay="$MF_BIN/mf-replay"
command -v jq >/dev/null || { echo "jq is required" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is required" >&2; exit 1; }

# A small campaign, its traces in a directory and in a store: the four Forge cases, twice each.
mkdir "$tmp/tr"
for where in "--traces $tmp/tr" "--store $tmp/s"; do
  rc=0
  # shellcheck disable=SC2086
  "$MF_BIN/mf-eval" run --suite fixtures/forge/eval-suite.json --fixed-clock --repeat 2 \
    --output "$tmp/r.json" $where >/dev/null 2>&1 || rc=$?
  [[ $rc -le 1 ]] || fail "mf-eval run $where exited $rc"
done
r=$tmp/r.json
mapfile -t attempts < <(jq -r '.cases[] | .id as $id | .attempts[] | "\($id).\(.repeat)"' "$r")
[[ ${#attempts[@]} -eq 8 ]] || fail "the campaign has ${#attempts[@]} attempts, expected 8"
run 0 "$replay" --report "$r" "$tmp/tr"
cp "$tmp/out" "$tmp/dir.out"

# --- extra traces: each *.jsonl in DIR the report does not name, after the report's lines ---------
cp -r "$tmp/tr" "$tmp/t"
cp "$tmp/tr/${attempts[0]}.jsonl" "$tmp/t/zz-copy.jsonl"
echo "not even a trace" >"$tmp/t/b-notes.jsonl"
echo "not a trace name" >"$tmp/t/notes.txt"
cp "$tmp/tr/${attempts[0]}.jsonl" "$tmp/t/.hidden.jsonl"
mkdir "$tmp/t/sub" && cp "$tmp/tr/${attempts[0]}.jsonl" "$tmp/t/sub/nested.jsonl"
run 1 "$replay" --report "$r" "$tmp/t"
[[ $(wc -l <"$tmp/out") -eq 10 ]] || fail "8 attempts and 2 extra traces gave $(wc -l <"$tmp/out") lines"
[[ $(head -n 8 "$tmp/out" | jq -c 'del(.path)') == "$(jq -c 'del(.path)' "$tmp/dir.out")" ]] ||
  fail "the report's lines changed with extra files beside them"
[[ $(tail -n 2 "$tmp/out") == "$(printf '{"path":"%s","status":"extra"}\n' "$tmp/t/b-notes.jsonl" "$tmp/t/zz-copy.jsonl")" ]] ||
  fail "extra lines: $(tail -n 2 "$tmp/out")"
[[ $(wc -l <"$tmp/err") -eq 2 ]] || fail "stderr: $(cat "$tmp/err")"
grep -qx "mf-replay: $tmp/t/b-notes.jsonl: error MF-V002: the report names no attempt \"b-notes\"" "$tmp/err" &&
  grep -qx "mf-replay: $tmp/t/zz-copy.jsonl: error MF-V002: the report names no attempt \"zz-copy\"" "$tmp/err" ||
  fail "stderr does not name the extra traces: $(cat "$tmp/err")"
rm "$tmp/t/zz-copy.jsonl" "$tmp/t/b-notes.jsonl"
run 0 "$replay" --report "$r" "$tmp/t"
# A directory that cannot be listed is refused before any line, as an empty one is in the DIR form.
refuse 2 MF-S013 "$replay" --report "$r" "$tmp/no-such-dir"

# --- swapped traces: each fails its digest, naming the attempt whose trace it holds ---------------
a=${attempts[1]} b=${attempts[6]}
mv "$tmp/t/$a.jsonl" "$tmp/t/swap" && mv "$tmp/t/$b.jsonl" "$tmp/t/$a.jsonl" && mv "$tmp/t/swap" "$tmp/t/$b.jsonl"
run 1 "$replay" --report "$r" "$tmp/t"
[[ $(jq -r 'select(.status != "ok") | [.attempt, .first_error.code, (.first_error.message | sub(".*: "; ""))] | join(" ")' "$tmp/out") == \
   "$a MF-E018 it holds the trace of attempt $b
$b MF-E018 it holds the trace of attempt $a" ]] || fail "swapped: $(jq -c 'select(.status != "ok")' "$tmp/out")"
grep -q "$a.jsonl: error MF-E018: attempt $a: the trace's SHA-256 is .*: it holds the trace of attempt $b\$" "$tmp/err" &&
  grep -q "$b.jsonl: error MF-E018: attempt $b: .*: it holds the trace of attempt $a\$" "$tmp/err" ||
  fail "stderr does not say whose traces were swapped: $(cat "$tmp/err")"
# A trace edited is not another attempt's: its message names no attempt.
cp "$tmp/tr/$a.jsonl" "$tmp/tr/$b.jsonl" "$tmp/t/"
printf '\n' >>"$tmp/t/$a.jsonl"
run 1 "$replay" --report "$r" "$tmp/t"
grep -q "error MF-E0[0-9]*: attempt $a: " "$tmp/err" && ! grep -q "holds the trace" "$tmp/err" ||
  fail "an edited trace: $(cat "$tmp/err")"

# --- from a store: each attempt's trace by its trace_sha256 ----------------------------------------
run 0 "$replay" -j 3 --report "$r" --store "$tmp/s"
[[ $(jq -c 'del(.object)' "$tmp/out") == "$(jq -c 'del(.path)' "$tmp/dir.out")" ]] ||
  fail "store lines differ from the DIR lines beyond where the trace was read"
[[ $(jq -r '.object == .trace_sha256' "$tmp/out" | sort -u) == true ]] || fail "object is not the digest"
cp "$tmp/out" "$tmp/store.out"
MF_STORE=$tmp/s run 0 "$replay" --report "$r"
cmp -s "$tmp/out" "$tmp/store.out" || fail "MF_STORE reads another store than --store"
# A DIR operand is used even with MF_STORE set; DIR and --store together are refused.
MF_STORE=$tmp/s run 0 "$replay" --report "$r" "$tmp/tr"
cmp -s "$tmp/out" "$tmp/dir.out" || fail "DIR with MF_STORE set"
run 2 "$replay" --report "$r" --store "$tmp/s" "$tmp/tr"
grep -q "usage error: --report takes one DIR, where its traces are, or --store" "$tmp/err" ||
  fail "DIR and --store: $(cat "$tmp/err")"
run 2 "$replay" --store "$tmp/s" "$tmp/tr"
grep -q "usage error: --store takes --report" "$tmp/err" || fail "--store without --report"
run 2 "$replay" --store "$tmp/s" "$tmp/tr/${attempts[0]}.jsonl"
grep -q "usage error: --store takes --report" "$tmp/err" || fail "--store with one TRACE"
refuse 2 MF-K005 "$replay" --report "$r" --store "$tmp/no-store"
[[ ! -e $tmp/no-store ]] || fail "a missing store was created"
# One object gone from the store (its refs removed, then gc): that attempt's line, the others pass.
c=${attempts[5]}
gone=$(jq -r --arg c "$c" 'select(.attempt == $c) | .object' "$tmp/store.out")
"$MF_BIN/mf-store" --store "$tmp/s" ls --refs | jq -r 'select(.ref | test("/case/") | not) | .ref' |
  while IFS= read -r ref; do "$MF_BIN/mf-store" --store "$tmp/s" ref rm "$ref" >/dev/null; done
"$MF_BIN/mf-store" --store "$tmp/s" ref rm "campaign/forge-seed/case/${c%.*}/repeat/${c##*.}/trace"
"$MF_BIN/mf-store" --store "$tmp/s" gc >/dev/null
run 1 "$replay" --report "$r" --store "$tmp/s"
[[ $(wc -l <"$tmp/out") -eq 8 ]] || fail "a missing object's line is missing"
[[ $(jq -c 'select(.status != "ok")' "$tmp/out") == \
   "{\"attempt\":\"$c\",\"first_error\":{\"code\":\"MF-K001\",\"message\":\"object $gone is not in the store\"},\"object\":\"$gone\",\"status\":\"unreadable\"}" ]] ||
  fail "missing object: $(jq -c 'select(.status != "ok")' "$tmp/out")"
[[ $(cat "$tmp/err") == "mf-replay: $gone: error MF-K001: attempt $c: object $gone is not in the store" ]] ||
  fail "stderr: $(cat "$tmp/err")"

# --- -j: at most 64 ------------------------------------------------------------------------------
run 2 "$replay" -j 65 --report "$r" "$tmp/tr"
grep -q "usage error: --jobs must be at most 64" "$tmp/err" || fail "-j 65: $(cat "$tmp/err")"
run 0 "$replay" -j 64 --report "$r" "$tmp/tr"
cmp -s "$tmp/out" "$tmp/dir.out" || fail "-j 64 output differs"

# --- memory: beyond the report's own parse, flat from 1,000 to 10,000 attempts -------------------
# Each campaign is one trace linked under N long attempt names and a report naming them (its
# summary as mf-eval computes it); bad.json is the same report with a wrong summary, refused once
# parsed whole: the report's own parse.
trace=$tmp/tr/${attempts[0]}.jsonl
cat >"$tmp/gen.py" <<'EOF'
import json, math, os, sys
trace, out, n, digest = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
os.makedirs(out + "/tr")
ids = ["%s%06d" % ("a" * 120, i) for i in range(n)]
for i in ids:
    os.link(trace, "%s/tr/%s.jsonl" % (out, i))
z = 1.959963984540054  # wilson95 as common/eval/src/stats.cpp computes it, all passed
nn, z2 = float(n), z * z
centre = 1.0 + z2 / (2 * nn)
spread = z * math.sqrt(0.0 / nn + z2 / (4 * nn * nn))
low = max(0.0, (centre - spread) / (1 + z2 / nn))
case = {"failures": [], "model_calls": 1, "repairs": 0, "status": "passed",
        "terminal": "completed", "trace_sha256": digest, "usage": {}}
report = {"cases": [dict(case, id=i) for i in ids], "kind": "millforge_eval_report",
          "suite_id": "rss", "suite_sha256": "0" * 64, "v": 1,
          "summary": {"cases": n, "failed": 0, "pass_rate": 1, "passed": n, "wilson95": [low, 1]}}
for name, cases in (("r.json", n), ("bad.json", n + 1)):
    report["summary"]["cases"] = cases
    with open(out + "/" + name, "w") as f:
        json.dump(report, f, separators=(",", ":"), sort_keys=True)
EOF
rss() { { /usr/bin/time -f %M "$replay" "$@" 2>&1 >/dev/null || true; } | tail -1; }
declare -A full parse
for n in 1000 10000; do
  python3 "$tmp/gen.py" "$trace" "$tmp/m$n" "$n" "$(sha256sum "$trace" | cut -d' ' -f1)"
  run 0 "$replay" -j 2 --report "$tmp/m$n/r.json" "$tmp/m$n/tr"
  [[ $(wc -l <"$tmp/out") -eq $n && $(jq -r .status "$tmp/out" | sort -u) == ok ]] ||
    fail "the $n-attempt campaign does not pass"
  refuse 2 MF-S020 "$replay" --report "$tmp/m$n/bad.json" "$tmp/m$n/tr"
  full[$n]=$(rss -j 2 --report "$tmp/m$n/r.json" "$tmp/m$n/tr")
  parse[$n]=$(rss -j 2 --report "$tmp/m$n/bad.json" "$tmp/m$n/tr")
done
grown=$((full[10000] - full[1000])) parsed=$((parse[10000] - parse[1000]))
echo "peak RSS KiB: 1000 attempts ${full[1000]} (parse ${parse[1000]}), 10000 ${full[10000]} (parse ${parse[10000]})"
# Under AddressSanitizer, whose quarantine keeps freed memory, RSS says little: not checked there.
grep -q __asan_init "$replay" || ((grown * 100 <= parsed * 115)) ||
  fail "from 1000 to 10000 attempts peak RSS grew $grown KiB, the report's parse $parsed KiB"

# --- help: the store form -------------------------------------------------------------------------
run 0 "$replay" --help
grep -qF -- "--report REPORT DIR|--store STORE" "$tmp/out" &&
  grep -qF -- "mf-replay -j 8 --report report.json --store .mf/store" "$tmp/out" &&
  grep -qF -- "at most 64" "$tmp/out" || fail "--help lacks the store form"

echo "replay_report: ok"
