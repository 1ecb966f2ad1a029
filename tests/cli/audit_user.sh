#!/usr/bin/env bash
# mf-audit on a user's own project, from an installed prefix (docs/audit.md, "Auditing your own
# project"): the project is built in a temporary directory outside the source tree from the files,
# commands and manifest the installed docs/audit.md shows, so the page cannot drift from what runs.
# Every receipt holds; the report is the same bytes from a copy in another directory; the signed
# report verifies. Each tampering of a fresh copy fails the audit naming its culprit, and a manifest
# with an unknown member, a missing file or a malformed pin is refused before anything runs.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

# The installed programs: MF_BIN itself when it already is an installed prefix (tests/cli/install.sh
# runs every script so), else an install of the build MF_BIN belongs to.
if [[ -f $MF_BIN/../share/doc/millforge/audit.md ]]; then
  prefix=$(cd "$MF_BIN/.." && pwd)
else
  prefix=$tmp/prefix
  cmake --install "$(dirname "$MF_BIN")" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }
fi
export PATH=$prefix/bin:$PATH
doc=$prefix/share/doc/millforge/audit.md

# block NAME: the fenced block that follows the line `<!-- audit-user: NAME -->` in the docs.
block() {
  awk -v m="<!-- audit-user: $1 -->" '
    $0 == m { found = 1; next }
    found == 1 && /^```/ { found = 2; next }
    found == 2 && /^```/ { exit }
    found == 2 { print }' "$doc"
}
for name in harness/notes.yaml workspace/notes/monday.txt harness/runs/direct-monday.json case commands \
            digests audit.yaml run table receipt swapped sign github gitlab; do
  [[ -n $(block "$name") ]] || fail "docs/audit.md has no block '$name'"
done

# The project, outside the source tree: the docs' files, then the other notes, scripted replies
# and the twenty cases the docs describe.
project=$tmp/notes
mkdir -p "$project"/{harness/runs,workspace/notes,eval}
cd "$project"
for f in harness/notes.yaml workspace/notes/monday.txt harness/runs/direct-monday.json; do
  block "$f" >"$f"
done
days=(monday tuesday wednesday thursday)
# step CALL: a scripted reply making that tool call; steps: the script of the replies on stdin.
step() { jq -nc --argjson c "$1" '{tool_calls: [$c]}'; }
steps() { jq -s '{steps: .}'; }
for day in "${days[@]}"; do
  note="The ${day^} release ships after the migration."
  [[ $day == monday ]] || echo "$note" >"workspace/notes/$day.txt"
  read=$(jq -nc --arg p "notes/$day.txt" '{name: "read", arguments: {path: $p}}')
  submit=$(jq -nc --arg s "$note" '{name: "submit", arguments: {terminal_result: "COMPLETE", summary: $s}}')
  { step "$read"; step "$submit"; } | steps >"$tmp/direct-$day.json"
  [[ $day == monday ]] || cp "$tmp/direct-$day.json" "harness/runs/direct-$day.json"
  { jq -nc '{content: "I will read the note first."}'; step "$read"; step "$submit"; } |
    steps >"harness/runs/chatty-$day.json"
  { step "$submit"; step "$read"; step "$submit"; } | steps >"harness/runs/hasty-$day.json"
  { step "$(jq -c '.name = "cat"' <<<"$read")"; step "$read"; step "$submit"; } |
    steps >"harness/runs/guess-$day.json"
  { jq -nc --arg t "$read" '{content: $t}'; step "$submit"; } | steps >"harness/runs/textual-$day.json"
done
[[ $(jq -c . harness/runs/direct-monday.json) == "$(jq -c . "$tmp/direct-monday.json")" ]] ||
  fail "the docs' direct-monday.json is not the direct behaviour of the other days"
declare -A calls=([direct]=2 [chatty]=3 [hasty]=3 [guess]=3 [textual]=2)
declare -A violations=([direct]='{}' [chatty]='{"text_response": 1}' [hasty]='{"premature_terminal": 1}'
                       [guess]='{"unknown_tool": 1}' [textual]='{"rescue": 1}')
for day in "${days[@]}"; do
  for b in direct chatty hasty guess textual; do
    jq -nc --arg id "$b-$day" --arg day "$day" --arg note "The ${day^} release ships after the migration." \
      --argjson calls "${calls[$b]}" --argjson v "${violations[$b]}" '
      {id: $id, plan: "../plans/notes.plan.json", model: ("scripted:../harness/runs/" + $id + ".json"),
       workspace: "../workspace", request: {instruction: ("Summarise notes/" + $day + ".txt.")},
       expect: ({terminal: "completed", disposition: "success", model_calls: $calls, tool_calls: 2}
                + (if $v == {} then {} else {violations: $v} end)
                + {pointers: {"/summary": $note}})}'
  done
done | jq -s '{suite_id: "notes", cases: .}' >eval/suite.json
# The docs show one case of the suite: it is this suite's.
jq -e --argjson c "$(block case)" '.cases | index([$c]) != null' eval/suite.json >/dev/null ||
  fail "the case docs/audit.md shows is not in the suite"

# The docs' commands, as a user types them.
bash -euo pipefail <(block commands) >"$tmp/commands.log" 2>&1 ||
  { cat "$tmp/commands.log" >&2; fail "the docs' commands failed"; }
[[ $(ls eval/traces | wc -l) -eq 20 ]] || fail "the campaign did not write 20 traces"
jq -e '.summary.cases == 20 and .summary.passed == 20' eval/report.json >/dev/null ||
  fail "the campaign did not pass: $(jq -c .summary eval/report.json)"

# The docs' manifest pins what the project is.
block audit.yaml >audit.yaml
compiled=$(jq -r .compiled_sha256 plans/notes.plan.json)
trace=$(sha256sum runs/release.jsonl | cut -d' ' -f1)
note=$(sha256sum workspace/notes/monday.txt | cut -d' ' -f1)
for pin in "$compiled" "$trace" "$note"; do
  grep -q "sha256: \"$pin\"\$" audit.yaml ||
    fail "docs/audit.md's manifest does not pin $pin (compiled $compiled, trace $trace, note $note)"
done
[[ $(block digests | bash 2>&1) == *"$trace  runs/release.jsonl"* ]] || fail "the docs' digests"
project_files=$(find . -type f | sort)

# The audit, as the docs run it: every receipt holds.
audit_cmd=$(block run)
[[ $audit_cmd == $'mkdir -p audit-out\nmf-audit audit.yaml --out-dir audit-out' ]] ||
  fail "the docs run '$audit_cmd'"
mkdir -p audit-out
run 0 mf-audit audit.yaml --out-dir audit-out
report=$project/audit-out/exit-report.json
cmp -s "$tmp/out" "$report" || fail "stdout differs from exit-report.json"
receipts=(compiled_harness verified_plan replayed_trace strict_replay campaign_traces
          campaign_statistics evaluation_gate pinned_file)
jq -e --argjson want "$(printf '%s\n' "${receipts[@]}" | jq -R . | jq -sc 'sort')" '
  .passed and ([.receipts[] | select(.holds | not)] | length) == 0 and
  ([.receipts[].capability] | unique) == $want and
  ([.receipts[] | select(.failures != [])] | length) == 0' "$report" >/dev/null ||
  fail "not every receipt holds: $(jq -c '[.receipts[] | {capability, subject, holds, failures}]' "$report")"
# Every input is named by its path in the project, never by where the project is.
! grep -qF "$tmp" "$report" || fail "the report names the temporary directory"
digest=$(jq -r .report_sha256 "$report")
# What the docs show of the report is this report: its table (digest included) and first receipt.
[[ $(cat "$tmp/err") == "$(block table)" ]] ||
  fail "docs/audit.md's table is not the audit's: $(cat "$tmp/err")"
jq -e --argjson r "$(block receipt)" '.receipts[0] == $r' "$report" >/dev/null ||
  fail "docs/audit.md's receipt is not the report's first: $(jq -c '.receipts[0]' "$report")"

# The same project elsewhere, audited from another working directory: the same bytes.
mkdir -p "$tmp/elsewhere" "$tmp/cwd"
cp -r "$project" "$tmp/elsewhere/copy"
rm -rf "$tmp/elsewhere/copy/audit-out"
mkdir "$tmp/cwd/out"
(cd "$tmp/cwd" && mf-audit ../elsewhere/copy/audit.yaml --out-dir out -q >/dev/null) ||
  fail "the audit of the copy failed"
cmp -s "$report" "$tmp/cwd/out/exit-report.json" || fail "the copy's report differs"
mkdir "$tmp/pinned"
run 0 mf-audit audit.yaml --out-dir "$tmp/pinned" -q --expect-sha256 "$digest"

# Signed as the docs sign it, in a copy (the key beside it): mf-audit verify accepts the envelope, and
# the report is the unsigned one.
mkdir "$tmp/sign"
cp -r "$project" "$tmp/sign/notes"
rm -rf "$tmp/sign/notes/audit-out"
mkdir "$tmp/sign/notes/audit-out"
cd "$tmp/sign/notes"
bash -euo pipefail <(block sign) >"$tmp/sign.log" 2>&1 || { cat "$tmp/sign.log" >&2; fail "the docs' signing"; }
cmp -s "$report" audit-out/exit-report.json || fail "signing changed the report"
cp audit-out/exit-report.dsse.json "$tmp/envelope.json"
jq -c '.signatures[0].sig |= (if startswith("A") then "B" else "A" end + .[1:])' \
  "$tmp/envelope.json" >"$tmp/badsig.json"
run 1 mf-audit verify audit-out/exit-report.json --envelope "$tmp/badsig.json" --public-key audit.pub.pem
grep -q "does not verify: signature" "$tmp/err" || fail "a changed signature: $(cat "$tmp/err")"

# The CI jobs run one command, with the key in the environment: the same envelope (Ed25519 is
# deterministic). Both jobs keep audit-out/ and are YAML.
ci="mkdir -p audit-out && mf-audit audit.yaml --out-dir audit-out --sign-key-env MF_AUDIT_SIGNING_KEY"
[[ $(block github | sed -n 's#^ *run: \(.*\)$RUNNER_TEMP/millforge/bin/mf-audit #\1mf-audit #p') == "$ci" ]] ||
  fail "the GitHub job does not run '$ci'"
[[ $(block gitlab | sed -n 's#^ *- \(.*\)/opt/millforge/bin/mf-audit #\1mf-audit #p') == "$ci" ]] ||
  fail "the GitLab job does not run '$ci'"
MF_AUDIT_SIGNING_KEY=$(cat ../audit.key.pem) bash -euo pipefail -c "$ci" >/dev/null 2>"$tmp/ci.err" ||
  fail "the CI command: $(cat "$tmp/ci.err")"
cmp -s "$tmp/envelope.json" audit-out/exit-report.dsse.json || fail "the CI command signs another envelope"
# Without the key (a pull request from a fork) the job is refused, and writes nothing.
rm -rf audit-out
MF_AUDIT_SIGNING_KEY='' run 2 bash -c "$ci"
[[ -z $(ls -A audit-out) ]] || fail "the CI command without a key wrote into audit-out"
for job in github gitlab; do
  block $job | grep -q '^ *- audit-out/$\|^ *path: audit-out/$' || fail "the $job job does not keep audit-out/"
  # The packages the job installs are the project's own (and ca-certificates, for git over
  # https in a bare image), and its build options exist.
  if [[ -n ${MF_SOURCE_DIR:-} ]]; then
    for package in $(block $job | sed -n 's/.*--no-install-recommends//p; /^ *lib[a-z0-9+.-]* /p' |
                     tr ' ' '\n' | grep -E '^[a-z0-9][a-z0-9+.-]+$' | grep -vx ca-certificates |
                     sort -u); do
      tr -s ' \t' '\n\n' <"$MF_SOURCE_DIR/scripts/install-deps.sh" | grep -qxF -- "$package" ||
        fail "the $job job installs $package, which scripts/install-deps.sh does not"
    done
    for option in $(block $job | grep -oE -- '-DMF_[A-Z_]+' | sort -u); do
      grep -q "option(${option#-D} " "$MF_SOURCE_DIR/CMakeLists.txt" || fail "the $job job sets ${option#-D}"
    done
  fi
  if python3 -c 'import yaml' 2>/dev/null; then
    block $job | python3 -c 'import sys, yaml; yaml.safe_load(sys.stdin)' || fail "the $job job is not YAML"
  fi
done
cd "$project"

# tamper NAME: a fresh copy of the project in $tmp/NAME, the working directory of what follows.
tamper() {
  rm -rf "${tmp:?}/$1"
  cp -r "$project" "$tmp/$1"
  rm -rf "$tmp/$1/audit-out"
  mkdir "$tmp/$1/audit-out"
  cd "$tmp/$1"
}
# caught CAPABILITY SUBJECT CULPRIT...: the audit exits 1; the CAPABILITY receipt of SUBJECT does not
# hold and its failures name every CULPRIT; its stderr line (the receipt's first failure) names the
# first.
caught() {
  local capability=$1 subject=$2
  shift 2
  run 1 mf-audit audit.yaml --out-dir audit-out -q
  grep -F "$capability $subject does not hold" "$tmp/err" | grep -qF "$1" ||
    fail "stderr does not name $capability of $subject and $1: $(cat "$tmp/err")"
  for culprit in "$@"; do
    jq -e --arg c "$capability" --arg s "$subject" --arg x "$culprit" '
      .passed == false and
      ([.receipts[] | select(.capability == $c and .subject == $s and (.holds | not))
        | .failures[] | select(contains($x))] | length) > 0' audit-out/exit-report.json \
      >/dev/null ||
      fail "the report's $capability failures do not name $culprit: $(jq -c '[.receipts[] |
        select(.holds | not) | {capability, subject, failures}]' audit-out/exit-report.json)"
  done
  last=$PWD/audit-out/exit-report.json
  cd "$project"
}
# failing CAPABILITY...: exactly these receipts failed in the last audit caught, as docs/audit.md's
# table says.
failing() {
  [[ $(jq -r '[.receipts[] | select(.holds | not) | .capability] | unique | join(" ")' "$last") == \
     "$(printf '%s\n' "$@" | sort | paste -sd' ')" ]] ||
    fail "failed receipts: $(jq -c '[.receipts[] | select(.holds | not) | .capability]' "$last"), not $*"
}

# One byte of a campaign trace (the summary the model submitted): its chain breaks.
tamper edited
sed -i 's/The Tuesday release/The Tuesday Release/' eval/traces/guess-tuesday.jsonl
caught campaign_traces eval/report.json guess-tuesday
failing campaign_traces campaign_statistics
# The same edit with the chain written again, as anyone can: only the report's digest shows it.
tamper relinked
sed 's/The Tuesday release/The Tuesday Release/' "$project/eval/traces/guess-tuesday.jsonl" |
  jq -c 'del(.prev)' | link >eval/traces/guess-tuesday.jsonl
mf-replay eval/traces/guess-tuesday.jsonl >/dev/null || fail "the relinked trace does not verify"
caught campaign_traces eval/report.json guess-tuesday
failing campaign_traces campaign_statistics
# A trace deleted.
tamper deleted
rm eval/traces/chatty-wednesday.jsonl
caught campaign_traces eval/report.json chatty-wednesday
failing campaign_traces campaign_statistics
# A trace no attempt names.
tamper extra
cp eval/traces/direct-monday.jsonl eval/traces/direct-friday.jsonl
caught campaign_traces eval/report.json direct-friday
failing campaign_traces
# Two traces swapped.
tamper swapped
mv eval/traces/hasty-monday.jsonl "$tmp/swap.jsonl"
mv eval/traces/hasty-thursday.jsonl eval/traces/hasty-monday.jsonl
mv "$tmp/swap.jsonl" eval/traces/hasty-thursday.jsonl
caught campaign_traces eval/report.json hasty-monday hasty-thursday
failing campaign_traces campaign_statistics
[[ $(cat "$tmp/err") == "$(block swapped)" ]] || fail "docs/audit.md's swapped traces: $(cat "$tmp/err")"
# One byte of a tool description in the plan.
tamper plan
sed -i '0,/"description":"R/s//"description":"r/' plans/notes.plan.json
cmp -s plans/notes.plan.json "$project/plans/notes.plan.json" && fail "the plan edit changed nothing"
caught verified_plan plans/notes.plan.json "plans/notes.plan.json: error MF-L004"
failing verified_plan strict_replay campaign_statistics
# The harness source edited: it compiles to another digest than the pinned one.
tamper harness
sed -i 's/max_iterations: 5/max_iterations: 6/' harness/notes.yaml
caught compiled_harness harness/notes.yaml "$compiled"
failing compiled_harness
# One statistic of the report.
tamper statistic
jq -c '.summary.pass_rate = 0.95' eval/report.json | mf-store canon >eval/report.tmp
mv eval/report.tmp eval/report.json
caught campaign_statistics eval/report.json pass_rate
failing campaign_statistics campaign_traces evaluation_gate
# A case's status flipped, the report otherwise consistent (the report of a run whose suite
# expected 2 model calls there, under this suite's digest): mf-eval compare accepts it and every
# trace matches; only the suite's expectations, regraded against the trace, show it.
tamper flipped
(cd eval && jq '(.cases[] | select(.id == "guess-thursday") | .expect.model_calls) = 2' suite.json |
  mf-eval run --suite - --fixed-clock --output "$tmp/flipped.json" -q) && fail "the flipped run passed"
suite_sha256=$(jq -r .suite_sha256 eval/report.json)
jq -c --arg s "$suite_sha256" '.suite_sha256 = $s' "$tmp/flipped.json" | mf-store canon >eval/report.json
jq -e '[.cases[] | select(.status == "failed") | .id] == ["guess-thursday"]' eval/report.json \
  >/dev/null || fail "the flipped report"
caught campaign_statistics eval/report.json guess-thursday
failing campaign_statistics evaluation_gate

# Refused before anything runs: exit 2, the code, nothing written.
cd "$project"
# refused NAME CODE WHERE: the manifest $tmp/NAME.yaml, beside the project's, is refused with CODE
# on one line naming WHERE (line:column and pointer), and nothing is written.
refused() {
  ! cmp -s "$tmp/$1.yaml" audit.yaml || fail "the manifest $1 is the project's"
  cp "$tmp/$1.yaml" "$1.yaml"
  mkdir "$tmp/refused-$1"
  refuse 2 "$2" mf-audit "$1.yaml" --out-dir "$tmp/refused-$1"
  grep -qF "$3" "$tmp/err" || fail "the $1 manifest's refusal does not name $3: $(cat "$tmp/err")"
  [[ $(wc -l <"$tmp/err") -eq 1 ]] || fail "more than one diagnostic: $(cat "$tmp/err")"
  [[ -z $(ls -A "$tmp/refused-$1") ]] || fail "a refused manifest ($1) wrote into $tmp/refused-$1"
  rm "$1.yaml"
}
pin_line=$(grep -n "sha256: \"$note\"" audit.yaml | cut -d: -f1)
{ cat audit.yaml; echo "colour: blue"; } >"$tmp/unknown.yaml"
refused unknown MF-S021 "unknown.yaml:$(($(wc -l <audit.yaml) + 1)):1: error MF-S021: unknown field \"colour\" (at /colour)"
sed 's#path: workspace/notes/monday.txt#path: workspace/notes/friday.txt#' audit.yaml >"$tmp/missing.yaml"
refused missing MF-S013 "workspace/notes/friday.txt is not a file (relative to the manifest) (at /pins/0/path)"
sed "s/sha256: \"$note\"/sha256: \"${note%?}\"/" audit.yaml >"$tmp/short.yaml"
refused short MF-S020 "short.yaml:$pin_line:5: error MF-S020: must be a SHA-256 digest: 64 lowercase hexadecimal digits (at /pins/0/sha256)"
sed "s/sha256: \"$note\"/sha256: \"${note^^}\"/" audit.yaml >"$tmp/upper.yaml"
refused upper MF-S020 "upper.yaml:$pin_line:5: error MF-S020: must be a SHA-256 digest"
[[ $(find . -type f -not -path './audit-out/*' | sort) == "$project_files" ]] ||
  fail "the audit changed the project's files"
echo "audit_user: ok"
