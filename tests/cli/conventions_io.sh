#!/usr/bin/env bash
# The path rules of docs/cli.md ("Paths and `-`", "Output files and directories") on every binary:
# a missing output directory is refused before any work (exit 2, MF-S017 naming it and the mkdir,
# nothing written, nothing created) except a store made in an existing parent; '-' is stdin or
# stdout wherever a file is taken and never a directory; -o/--output FILE writes that file.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

f=$PWD/fixtures
h=(--catalog "$f/harness/catalog.json" --profiles "$f/harness/profiles.json")
task=$f/forge/task-valid.json
model=scripted:$f/forge/responses-valid.json
suite=$f/forge/eval-suite.json
ct=(custom-tools "$f/custom_tools/two-tools.manifest.json" --policy "$f/custom_tools/policy.json")
bin=$MF_BIN

# Inputs the commands below read: a plan, a trace of it (in a workspace of its own), eval reports,
# a store.
run 0 "$bin/mf-compile" "$f/harness/golden.yaml" "${h[@]}" -o -
cp "$tmp/out" "$tmp/plan.json"
mkdir -p "$tmp/ws/src" "$tmp/art"
cp "$f/repository/src/lib.rs" "$tmp/ws/src/"
plan_run=(--plan "$tmp/plan.json" --model "scripted:$f/harness/runs/golden-ok.json"
          --workspace "$tmp/ws")
run 0 "$bin/mf-run" "${plan_run[@]}" --artifacts "$tmp/art" --fixed-clock --run-id r \
  --trace-content inline --trace "$tmp/run.jsonl"
run 0 "$bin/mf-eval" run --suite "$suite" --fixed-clock --output "$tmp/report.json" -q
for i in 1 2; do
  run 0 "$bin/mf-eval" run --suite "$suite" --fixed-clock --output "$tmp/shard$i.json" --shard $i/2 -q
done
run 0 "$bin/mf-store" --store "$tmp/st" put "$task"
digest=$(cat "$tmp/out")

# Each table's lines are commands, eval'd in an empty working directory $tmp/w.
# --- 1. A missing output directory: every output-taking option of every binary. "missing" is the
# directory the command needs and does not exist.
missing=(
  '"$bin/mf-compile" "$f/harness/golden.yaml" "${h[@]}" -o missing/plan.json'
  '"$bin/mf-compile" "$f/harness/golden.yaml" "${h[@]}" --out-dir missing'
  '"$bin/mf-compile" "$f/harness/golden.yaml" "${h[@]}" --diagnostics missing/report.json'
  '"$bin/mf-compile" "$f/harness/golden.yaml" "${h[@]}" --store missing/store'
  '"$bin/mf-compile" "${ct[@]}" -o missing/catalog.json'
  '"$bin/mf-run" --task "$task" --model "$model" --trace missing/t.jsonl'
  '"$bin/mf-run" --task "$task" --model "$model" --trace t.jsonl --output missing/r.json'
  '"$bin/mf-run" --task "$task" --model "$model" --trace t.jsonl --store missing/store'
  '"$bin/mf-run" "${plan_run[@]}" --trace t.jsonl --artifacts missing'
  '"$bin/mf-run" tool ls --workspace "$f/repository" --args "{}" --artifacts missing'
  '"$bin/mf-replay" --fork-at 3 --responses "$f/harness/runs/golden-ok.json" --plan "$tmp/plan.json" --workspace "$tmp/ws" --trace missing/t.jsonl "$tmp/run.jsonl"'
  '"$bin/mf-replay" --strict --plan "$tmp/plan.json" --workspace "$tmp/ws" --artifacts missing "$tmp/run.jsonl"'
  '"$bin/mf-eval" run --suite "$suite" --output missing/r.json'
  '"$bin/mf-eval" run --suite "$suite" --output r.json --traces missing'
  '"$bin/mf-eval" run --suite "$suite" --output r.json --journal missing/r.journal'
  '"$bin/mf-eval" run --suite "$suite" --output r.json --store missing/store'
  '"$bin/mf-eval" merge --output missing/r.json "$tmp/shard1.json" "$tmp/shard2.json"'
  '"$bin/mf-eval" report "$tmp/report.json" --format md --output missing/r.md'
  '"$bin/mf-audit" --fixtures "$f" --out-dir missing'
  '"$bin/mf-audit" --fixtures "$f" --store missing/store'
  '"$bin/mf-store" --store missing/store put "$task"'
  '"$bin/mf-store" --store "$tmp/st" export -o missing/stream "$digest"'
)
want="error MF-S017: output directory 'missing' does not exist (create it: mkdir -p missing)"
for line in "${missing[@]}"; do
  rm -rf "$tmp/w" && mkdir "$tmp/w"
  (cd "$tmp/w" && eval "run 2 $line")
  [[ $(cat "$tmp/err") =~ ^mf-[a-z]+:\ "$want"$ ]] || fail "$line: stderr: $(cat "$tmp/err")"
  [[ ! -s $tmp/out ]] || fail "$line: wrote to stdout"
  [[ -z $(ls -A "$tmp/w") ]] || fail "$line: wrote $(ls -A "$tmp/w")"
done
# A path that is there but no directory is refused the same way.
: >"$tmp/file"
run 2 "$bin/mf-run" --task "$task" --model "$model" --trace "$tmp/file/t.jsonl"
grep -qx "mf-run: error MF-S017: output directory '$tmp/file' is not a directory" "$tmp/err" ||
  fail "a file as the output directory: $(cat "$tmp/err")"
# The fix is one paste: a name with a space is quoted.
run 2 "$bin/mf-audit" --fixtures "$f" --out-dir "$tmp/my dir"
grep -qF "(create it: mkdir -p '$tmp/my dir')" "$tmp/err" || fail "unquoted fix: $(cat "$tmp/err")"

# The one exception: a store is made by the first command that writes to it, in an existing parent.
rm -rf "$tmp/w" && mkdir "$tmp/w"
(cd "$tmp/w" && run 0 "$bin/mf-store" --store st put "$task")
[[ -f $tmp/w/st/data.mdb ]] || fail "mf-store put did not make the store"
(cd "$tmp/w" && run 0 "$bin/mf-run" --task "$task" --model "$model" --trace t.jsonl --store st2)
[[ -f $tmp/w/st2/data.mdb ]] || fail "mf-run --store did not make the store"
# A command that only reads a store does not make one.
run 2 "$bin/mf-store" --store "$tmp/w/st3" ls
[[ ! -e $tmp/w/st3 ]] || fail "mf-store ls made a store"

# --- 2. '-' never names a directory: a usage error, before any work.
dash=(
  '"$bin/mf-compile" "$f/harness/golden.yaml" "${h[@]}" --out-dir -'
  '"$bin/mf-compile" "$f/harness/golden.yaml" "${h[@]}" --store -'
  '"$bin/mf-run" "${plan_run[@]}" --trace t.jsonl --artifacts -'
  '"$bin/mf-run" tool ls --workspace - --args "{}"'
  '"$bin/mf-replay" --strict --plan "$tmp/plan.json" --workspace - "$tmp/run.jsonl"'
  '"$bin/mf-replay" --report "$tmp/report.json" --store -'
  '"$bin/mf-eval" run --suite "$suite" --output r.json --traces -'
  '"$bin/mf-eval" run --suite "$suite" --output r.json --store -'
  '"$bin/mf-toolread" --root - --path README.md'
  '"$bin/mf-toolread" search --root "$f" --query max --path -'
  '"$bin/mf-audit" --out-dir -'
  '"$bin/mf-audit" --fixtures -'
  '"$bin/mf-store" --store - ls'
)
for line in "${dash[@]}"; do
  rm -rf "$tmp/w" && mkdir "$tmp/w"
  (cd "$tmp/w" && eval "run 2 $line")
  grep -Eq "^mf-[a-z]+: usage error: --[a-z-]+ names a directory; '-'" "$tmp/err" ||
    fail "$line: $(cat "$tmp/err")"
  [[ ! -s $tmp/out && -z $(ls -A "$tmp/w") ]] || fail "$line: wrote something"
done

# --- 3. '-' is stdin or stdout wherever a file is taken.
# mf-compile: the source from stdin, the plan to stdout.
stdin=$f/harness/golden.yaml run 0 "$bin/mf-compile" - "${h[@]}" --format yaml -o -
cmp -s "$tmp/out" "$tmp/plan.json" || fail "mf-compile - -o - is another plan"
# mf-run --trace - | mf-replay - (and with no operand): the trace alone on stdout.
for replay_args in - ""; do
  rc=0
  "$bin/mf-run" --task "$task" --model "$model" --fixed-clock --run-id p --trace - 2>"$tmp/run.err" |
    tee "$tmp/piped.jsonl" | "$bin/mf-replay" $replay_args >"$tmp/out" 2>"$tmp/err" || rc=$?
  [[ $rc -eq 0 ]] || fail "mf-run --trace - | mf-replay $replay_args: $rc: $(cat "$tmp/run.err" "$tmp/err")"
  [[ $(jq -r .status "$tmp/out") == ok ]] || fail "mf-replay $replay_args: $(cat "$tmp/out")"
  jq -e 'has("event")' "$tmp/piped.jsonl" >/dev/null || fail "mf-run --trace - printed more than the trace"
done
# With --output FILE the result goes there too.
run 0 "$bin/mf-run" --task "$task" --model "$model" --fixed-clock --run-id p --trace - --output "$tmp/r.json"
cmp -s "$tmp/out" "$tmp/piped.jsonl" || fail "--trace - --output FILE: stdout is not the trace"
jq -e .risk "$tmp/r.json" >/dev/null || fail "--output FILE holds no result"
# mf-eval: the report to stdout, rendered from stdin.
run 0 "$bin/mf-eval" run --suite "$suite" --fixed-clock --output - -q
cp "$tmp/out" "$tmp/eval-stdout.json"
cmp -s "$tmp/eval-stdout.json" "$tmp/report.json" || fail "mf-eval run --output - is another report"
stdin=$tmp/eval-stdout.json run 0 "$bin/mf-eval" report - --format md
grep -q '|' "$tmp/out" || fail "mf-eval report - rendered nothing"
# mf-toolread --path -: stdin under the bounds of a file.
run 0 "$bin/mf-toolread" --root "$f" --path forge/task-valid.json --start-line 2 --end-line 4
cp "$tmp/out" "$tmp/slice.json"
stdin=$f/forge/task-valid.json run 0 "$bin/mf-toolread" --path - --start-line 2 --end-line 4
[[ $(jq -c 'del(.path)' "$tmp/out") == "$(jq -c 'del(.path)' "$tmp/slice.json")" ]] ||
  fail "--path - read another slice: $(cat "$tmp/out")"
[[ $(jq -r .path "$tmp/out") == - ]] || fail "--path -: path $(jq -r .path "$tmp/out")"
head -c 1048577 /dev/zero | tr '\0' a >"$tmp/big"
stdin=$tmp/big refuse 2 MF-T005 "$bin/mf-toolread" --path -
printf '\xff\n' >"$tmp/latin1"
stdin=$tmp/latin1 refuse 2 MF-T008 "$bin/mf-toolread" --path -
# mf-store: canon from stdin, export to stdout.
stdin=$task run 0 "$bin/mf-store" canon -
run 0 "$bin/mf-store" --store "$tmp/w/st" put "$task"
run 0 "$bin/mf-store" --store "$tmp/w/st" export -o - "$digest"
[[ -s $tmp/out ]] || fail "mf-store export -o - wrote nothing"

# --- 4. -o/--output FILE writes the file (its record, if any, on stdout).
rm -rf "$tmp/w" && mkdir "$tmp/w" && cd "$tmp/w"
run 0 "$bin/mf-compile" "$f/harness/golden.yaml" "${h[@]}" -o plan.json
cmp -s plan.json "$tmp/plan.json" || fail "mf-compile -o plan.json wrote another plan"
[[ $(jq -r .plan_file "$tmp/out") == *.compiled.json ]] || fail "mf-compile -o FILE: stdout $(cat "$tmp/out")"
run 0 "$bin/mf-compile" "$f/harness/golden.yaml" "${h[@]}" --output plan2.json
cmp -s plan2.json "$tmp/plan.json" || fail "mf-compile --output plan2.json wrote another plan"
run 2 "$bin/mf-compile" "$f/harness/golden.yaml" "${h[@]}" -o plan3.json --out-dir .
grep -q 'usage error: --out-dir and -o both' "$tmp/err" || fail "--out-dir with -o: $(cat "$tmp/err")"
run 0 "$bin/mf-compile" "${ct[@]}" -o catalog.json
jq -e .tools catalog.json >/dev/null || fail "mf-compile custom-tools -o FILE"
run 0 "$bin/mf-run" --task "$task" --model "$model" --trace t.jsonl --output result.json
[[ ! -s $tmp/out ]] && jq -e .risk result.json >/dev/null || fail "mf-run --output FILE"
run 0 "$bin/mf-eval" run --suite "$suite" --fixed-clock --output report.json -q
cmp -s report.json "$tmp/report.json" || fail "mf-eval run --output FILE"
run 0 "$bin/mf-store" --store st put "$task"
run 0 "$bin/mf-store" --store st export -o stream "$digest"
[[ -s stream && ! -s $tmp/out ]] || fail "mf-store export -o FILE"
cd "$OLDPWD"

echo "conventions_io: ok"
