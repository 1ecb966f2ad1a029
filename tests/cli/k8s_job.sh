#!/usr/bin/env bash
# The Kubernetes Indexed Job of docs/campaigns.md, run as its pods would run it. There is no
# cluster here, so the test plays the Job controller and the kubelet: it reads the manifest from
# the docs, checks that it is an Indexed Job whose completion count is the shard count its
# command names, and starts `parallelism` pods at once — each the container's command
# (`sh -c ARGS`) with JOB_COMPLETION_INDEX set and the volume's mount path (/data) mapped to a
# directory of the test. One pod is pre-empted (SIGTERM) once its journal holds two attempts and,
# as `restartPolicy: OnFailure` does, started again with the same index. Then the docs' follow-up
# merge command runs. Checks:
#   - every pod but the pre-empted one succeeds first time; the pre-empted one fails, and its
#     restart succeeds having resumed from its journal: every attempt's tool call appends a line
#     to a log in the workspace, and the log holds one line per attempt plus at most the one
#     attempt the pre-emption cut short;
#   - the merged report is byte-identical to one unsharded `mf-eval run` of the same campaign.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/slow_shell.bash"
bin=$(cd "$MF_BIN" && pwd)
docs=$MF_SOURCE_DIR/docs/campaigns.md

# --- The recipe, from the docs ----------------------------------------------------------------
manifest=$(awk '/^## Kubernetes/ {m = 1; next}
                m == 1 && /^```yaml$/ {m = 2; next}
                m == 2 && /^```$/ {exit}
                m == 2 {print}' "$docs")
[[ -n $manifest ]] || fail "no Kubernetes manifest in docs/campaigns.md"
python3 -c '
import json, sys, yaml
job = yaml.safe_load(sys.stdin)
c = job["spec"]["template"]["spec"]["containers"][0]
v = job["spec"]["template"]["spec"]["volumes"][0]
print(json.dumps({"kind": job["kind"], "mode": job["spec"].get("completionMode"),
  "completions": job["spec"]["completions"], "parallelism": job["spec"]["parallelism"],
  "restart": job["spec"]["template"]["spec"]["restartPolicy"], "command": c["command"],
  "args": c["args"], "mount": c["volumeMounts"][0]["mountPath"],
  "same_volume": c["volumeMounts"][0]["name"] == v["name"]}))' <<<"$manifest" >"$tmp/job.json" ||
  fail "the manifest in docs/campaigns.md is not YAML a Job can be read from"
[[ $(jq -c '[.kind, .mode, .restart, .command, (.args | length), .same_volume]' "$tmp/job.json") == \
  '["Job","Indexed","OnFailure",["sh","-c"],1,true]' ]] ||
  fail "the manifest is not an Indexed Job running one sh -c command: $(cat "$tmp/job.json")"
completions=$(jq -r .completions "$tmp/job.json")
parallelism=$(jq -r .parallelism "$tmp/job.json")
mount=$(jq -r .mount "$tmp/job.json")
args=$(jq -r '.args[0]' "$tmp/job.json")
[[ $args == *"--shard \$((JOB_COMPLETION_INDEX + 1))/$completions "* ]] ||
  fail "the command's shard count is not the Job's $completions completions: $args"
repeat=$(grep -oE -- '--repeat [0-9]+' <<<"$args" | cut -d' ' -f2)
merge=$(awk '/doc-test: skip: .*tests\/cli\/k8s_job\.sh/ {m = 1; next}
             m == 1 && /^```sh$/ {m = 2; next}
             m == 2 && /^```$/ {exit}
             m == 2 {print}' "$docs")
[[ $merge == *"mf-eval merge"* ]] || fail "no merge command for the Job in docs/campaigns.md"

# --- The volume: a suite of twice as many cases as pods, each attempt a real shell call -------
data=$tmp/data
cases=$((2 * completions))
slow_shell_suite "$data" "$cases" 0.2 1 '{"terminal": "completed", "tools": ["bash", "submit"]}'
sed -i 's/echo done/echo ran >>attempts.log/' "$data/run.json"
attempts=$((cases * repeat))
run 0 "$bin/mf-eval" run --suite "$data/suite.json" --repeat "$repeat" --fixed-clock -j 8 --quiet \
  --output "$tmp/whole.json"
[[ $(wc -l <"$data/ws/attempts.log") -eq $attempts ]] || fail "the unsharded run made $(wc -l <"$data/ws/attempts.log") calls"
: >"$data/ws/attempts.log"

# A pod: the container's command with the index set, the programs on PATH, the mount mapped.
pod() {
  local script=${2//"$mount/"/"$data/"}
  ( cd "$tmp" && exec env JOB_COMPLETION_INDEX="$1" PATH="$bin:$PATH" sh -c "$script" ) \
    >"$tmp/pod-$1.out" 2>&1
}
# On a failure, no pod outlives the test (each pod's processes carry its cwd, $tmp).
pids=()
stop_pods() {
  local p
  for p in $(pgrep -x mf-eval || true); do
    [[ $(readlink "/proc/$p/cwd" 2>/dev/null) == "$tmp" ]] && kill -KILL "$p" 2>/dev/null
  done
  wait 2>/dev/null || true
}
trap 'stop_pods; [[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"' EXIT
for ((i = 0; i < completions; i++)); do
  (( i < parallelism )) || fail "the manifest runs fewer pods at once than it has completions"
  pod "$i" "$args" &
  pids+=($!)
done

# Pre-empt pod 0 once its journal holds two of its attempts: SIGTERM to its mf-eval, as the
# kubelet sends it to the container.
journal=$data/shards/shard-1.json.journal
for ((i = 0; i < 600; i++)); do
  [[ -f $journal && $(grep -c '"attempt"' "$journal" || true) -ge 2 ]] && break
  sleep 0.02
done
cut_at=$(grep -c '"attempt"' "$journal" 2>/dev/null || true)
[[ $cut_at -ge 2 ]] || fail "pod 0's journal never held two attempts: $(cat "$tmp/pod-0.out")"
# `sh -c` runs mf-eval as its child (the command goes on with `|| [ $? -eq 1 ]`).
eval_pid=""
for ((i = 0; i < 100; i++)); do
  for p in $(pgrep -x mf-eval || true); do
    grep -qzx 'JOB_COMPLETION_INDEX=0' "/proc/$p/environ" 2>/dev/null && [[ $(readlink "/proc/$p/cwd") == "$tmp" ]] &&
      eval_pid=$p
  done
  [[ -z $eval_pid ]] || break
  sleep 0.02
done
[[ -n $eval_pid ]] || fail "pod 0's mf-eval was not found"
kill -TERM "$eval_pid" || fail "pod 0 ended before it could be pre-empted"
rc=0
wait "${pids[0]}" || rc=$?
[[ $rc -ne 0 ]] || fail "the pre-empted pod succeeded: $(cat "$tmp/pod-0.out")"
[[ ! -e $data/shards/shard-1.json ]] || fail "the pre-empted pod left a shard report"
# restartPolicy: OnFailure — the same index again.
pod 0 "$args" || fail "pod 0's restart failed: $(cat "$tmp/pod-0.out")"
for ((i = 1; i < completions; i++)); do
  wait "${pids[$i]}" || fail "pod $i failed: $(cat "$tmp/pod-$i.out")"
done

# --- The follow-up merge, as the docs give it --------------------------------------------------
( cd "$tmp" && PATH="$bin:$PATH" bash -euo pipefail -c "${merge//"$mount/"/"$data/"}" ) >"$tmp/merge.out" 2>&1 ||
  fail "the documented merge failed: $(cat "$tmp/merge.out")"
cmp -s "$tmp/whole.json" "$data/report.json" ||
  fail "the merged report differs from the unsharded run: $(diff <(jq -S . "$tmp/whole.json") <(jq -S . "$data/report.json") | head -n 20)"
calls=$(wc -l <"$data/ws/attempts.log")
[[ $calls -ge $attempts && $calls -le $((attempts + 1)) ]] ||
  fail "$calls tool calls for $attempts attempts: the restarted pod ran journaled attempts again"
echo "k8s_job: $completions pods, pod 0 pre-empted after $cut_at journaled attempts; $calls tool calls for $attempts attempts"
