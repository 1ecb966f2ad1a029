#!/usr/bin/env bash
# The campaign of examples/campaign on a real Slurm cluster, submitted exactly as docs/campaigns.md
# shows it. The test starts a single-node cluster of its own (munged, slurmctld and slurmd on a
# generated slurm.conf in its temporary directory; nothing is installed as a service), runs the
# documented submission block (an array job of shard.sbatch, then merge.sbatch after it),
# requeues one array task while it runs, and checks:
#   - the merged report is byte-identical to one unsharded `mf-eval run` of the same campaign, and
#     the campaign's one store (STORE: the shard stores merged) holds it and every trace;
#   - the requeued task resumed from its journal: every attempt's tool call appends one line to a
#     log in the workspace, and the log holds one line per attempt plus at most the one attempt
#     the requeue cut short (-j 1 per task), so no journaled attempt ran twice;
#   - the cluster is torn down and none of its processes is left.
# Needs munged, slurmctld, slurmd and the Slurm client (scripts/install-deps.sh installs them).
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/slow_shell.bash"

for p in munged slurmctld slurmd sbatch scontrol squeue; do
  command -v "$p" >/dev/null ||
    PATH=$PATH:/usr/sbin command -v "$p" >/dev/null ||
    fail "$p is missing (scripts/install-deps.sh installs munge, slurmctld, slurmd, slurm-client)"
done
export PATH=$PATH:/usr/sbin
bin=$(cd "$MF_BIN" && pwd)

# --- The campaign: twelve cases, two repeats, each attempt a real 0.3 s shell call that also ----
# appends a line to attempts.log in the workspace. The requeue sends SIGTERM to every process of
# the task, children first: the call's `sleep` before mf-eval. A `sleep` that died of it would make
# bash print "Terminated" and exit 0, and on a loaded machine mf-eval can finish and journal that
# attempt before its own signal arrives: a result the requeue changed, not the resume. So the call
# ignores the signal (as does its reaper, which takes orders from mf-eval alone), and only mf-eval's
# own stop ends the attempt, which is then not journaled.
c=$tmp/campaign
slow_shell_suite "$c" 12 0.3 10 '{"terminal": "completed", "tools": ["bash", "submit"]}'
sed -i "s/sleep 0.3; echo done/trap '' TERM; sleep 0.3; echo ran >>attempts.log/" "$c/run.json"
grep -q "trap '' TERM; sleep 0.3; echo ran >>attempts.log" "$c/run.json" || fail "run.json: $(cat "$c/run.json")"
jq '.suite_id = "slurm"' "$c/suite.json" >"$tmp/suite.json" && mv "$tmp/suite.json" "$c/suite.json"
attempts=24

# The reference: one unsharded run, before the cluster starts.
run 0 "$bin/mf-eval" run --suite "$c/suite.json" --repeat 2 --fixed-clock -j 2 --quiet \
  --output "$tmp/whole.json"
[[ $(wc -l <"$c/ws/attempts.log") -eq $attempts ]] || fail "the unsharded run made $(wc -l <"$c/ws/attempts.log") calls"
: >"$c/ws/attempts.log"

# --- A single-node cluster in $tmp/slurm ------------------------------------------------------
s=$tmp/slurm
mkdir -p "$s/key" "$s/run" "$s/state" "$s/spool" "$s/log"
chmod 0700 "$s/key"
chmod 0755 "$tmp" "$s" "$s/run"
head -c 1024 /dev/urandom >"$s/key/munge.key"
chmod 0400 "$s/key/munge.key"
read -r port1 port2 < <(python3 -c '
import socket
ss = [socket.socket() for _ in range(2)]
for x in ss: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in ss])')
node=$(hostname -s)
cat >"$s/slurm.conf" <<EOF
ClusterName=mftest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$port1
SlurmdPort=$port2
SlurmUser=$(id -un)
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$s/run/munge.socket
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/run/slurmctld.pid
SlurmdPidFile=$s/run/slurmd.pid
SlurmctldLogFile=$s/log/slurmctld.log
SlurmdLogFile=$s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=mf Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$s/slurm.conf
# Every process of the cluster and of its jobs carries MF_SLURM_TEST (given to the daemons and to
# the submission, not to this shell): the teardown looks for it.

ours() {
  { grep -lzxF "MF_SLURM_TEST=$tmp" /proc/[0-9]*/environ | cut -d/ -f3; } 2>/dev/null
  local p
  for p in $(cat "$s/run/"*.pid 2>/dev/null); do [[ -d /proc/$p ]] && echo "$p"; done
  true
}
torn=""
teardown() {
  [[ -z $torn ]] || return 0
  torn=1
  set +e
  scancel --quiet --full --user="$(id -un)" 2>/dev/null
  scontrol shutdown >/dev/null 2>&1
  [[ -S $s/run/munge.socket ]] && sleep 0.2
  for ((i = 0; i < 100; i++)); do
    [[ -z $(ours) ]] && break
    sleep 0.1
  done
  munged -s --socket="$s/run/munge.socket" >/dev/null 2>&1
  for ((i = 0; i < 50; i++)); do
    [[ -z $(ours) ]] && break
    sleep 0.1
  done
  ours | xargs -r kill -KILL 2>/dev/null
}
trap 'teardown; [[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"' EXIT
diagnose() {
  echo "--- squeue" >&2; squeue -a >&2
  for f in "$s/log/"*.log "$c"/slurm-*.out; do
    [[ -f $f ]] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
  done
  fail "$*"
}

MF_SLURM_TEST=$tmp munged --socket="$s/run/munge.socket" --key-file="$s/key/munge.key" --seed-file="$s/key/seed" \
  --pid-file="$s/run/munged.pid" --log-file="$s/log/munged.log" ||
  fail "munged did not start: $(tail -n 3 "$s/log/munged.log" 2>/dev/null)"
MF_SLURM_TEST=$tmp slurmctld -i || diagnose "slurmctld did not start"
MF_SLURM_TEST=$tmp slurmd -N "$node" || diagnose "slurmd did not start"
for ((i = 0; i < 100; i++)); do
  [[ $(sinfo -h -N -o %t 2>/dev/null) == idle ]] && break
  sleep 0.1
done
[[ $(sinfo -h -N -o %t) == idle ]] || diagnose "the node did not come up: $(sinfo -h -N -o %t)"

# --- The documented submission, in a copy of examples/campaign --------------------------------
cp "$MF_SOURCE_DIR/examples/campaign/"{Makefile,shard.sbatch,merge.sbatch} "$c/"
block=$(awk '/doc-test: skip: .*tests\/cli\/slurm\.sh/ {m = 1; next}
             m == 1 && /^```sh$/ {m = 2; next}
             m == 2 && /^```$/ {exit}
             m == 2 {print}' "$MF_SOURCE_DIR/docs/campaigns.md")
grep -q 'sbatch --parsable --array=' <<<"$block" || fail "no Slurm block in docs/campaigns.md"
(
  cd "$c"
  export SUITE=$c/suite.json REPEAT=2 STORE=out/store MF_BIN=$bin MF_SLURM_TEST=$tmp
  bash -euo pipefail -c "$block"
) >"$tmp/submitted" 2>"$tmp/err" || diagnose "the documented submission failed: $(cat "$tmp/err")"
merge_id=$(tail -n 1 "$tmp/submitted")
[[ $merge_id =~ ^[0-9]+$ ]] || fail "sbatch printed no job id: $(cat "$tmp/submitted")"
array_id=$(squeue -h -n mf-shard -o %F | head -n 1)
[[ $array_id =~ ^[0-9]+$ ]] || diagnose "the array job is not queued"

# Requeue task 1 while it runs: once its journal (in its shard store) holds two of its six attempts.
journaled() {
  { "$bin/mf-store" --store "$c/out/stores/shard-1" ls --refs || true; } 2>/dev/null |
    grep -c '"ref":"campaign/slurm/journal/' || true
}
for ((i = 0; i < 600; i++)); do
  [[ $(journaled) -ge 2 ]] && break
  sleep 0.05
done
done_before=$(journaled)
[[ $done_before -ge 2 && $done_before -lt 6 ]] || diagnose "task 1 was not caught mid-shard ($done_before attempts)"
scontrol requeue "${array_id}_1" || diagnose "scontrol requeue failed"
# A requeued job waits out a begin time (two minutes); the test moves it to now once the task is
# back in the queue.
for ((i = 0; i < 300; i++)); do
  [[ $(squeue -h -j "${array_id}_1" -o %T) == PENDING ]] && break
  sleep 0.05
done
scontrol update JobId="${array_id}_1" StartTime=now || diagnose "the requeued task kept its begin time"

for ((i = 0; i < 1800; i++)); do
  [[ -z $(squeue -h -j "$array_id,$merge_id" 2>/dev/null) ]] && break
  sleep 0.1
done
[[ -z $(squeue -h -j "$array_id,$merge_id") ]] || diagnose "the campaign did not end"
state=$(scontrol show job "$merge_id" | grep -o 'JobState=[A-Z_]*')
[[ $state == JobState=COMPLETED ]] || diagnose "the merge job ended $state"
restarts=$(scontrol show job "${array_id}_1" | grep -o 'Restarts=[0-9]*')
[[ $restarts == Restarts=1 ]] || diagnose "task 1 was not requeued ($restarts)"

cmp -s "$tmp/whole.json" "$c/out/report.json" ||
  fail "the merged report differs from the unsharded run: $(diff <(jq -S . "$tmp/whole.json") <(jq -S . "$c/out/report.json") | head -n 20)"
for f in report.md junit.xml report.html; do [[ -s $c/out/$f ]] || fail "the merge job wrote no $f"; done
[[ $(journaled) -eq 6 ]] || fail "the requeued shard's journal holds $(journaled) attempts, not 6"
# One store for the campaign: it verifies, holds the merged report under the campaign's ref, and
# every attempt's trace (the merge job derived the report from them again: mf-eval verify).
run 0 "$bin/mf-store" --store "$c/out/store" verify
[[ $(jq -r .ok "$tmp/out") == true ]] || fail "the campaign's store does not verify: $(cat "$tmp/out")"
run 0 "$bin/mf-store" --store "$c/out/store" get "$("$bin/mf-store" --store "$c/out/store" ref get campaign/slurm/report)"
cmp -s "$tmp/out" "$c/out/report.json" || fail "the store's campaign report is not the merged report"
[[ $("$bin/mf-store" --store "$c/out/store" ls --refs | grep -cE '/repeat/[0-9]+/trace"}$') -eq $attempts ]] ||
  fail "the campaign's store lacks traces: $("$bin/mf-store" --store "$c/out/store" ls --refs)"
calls=$(wc -l <"$c/ws/attempts.log")
[[ $calls -ge $attempts && $calls -le $((attempts + 1)) ]] ||
  fail "$calls tool calls for $attempts attempts: the requeued task ran journaled attempts again"

teardown
left=$(ours)
[[ -z $left ]] || fail "processes left after the teardown: $(ps -o pid=,comm= -p ${left//$'\n'/,})"
[[ ! -S $s/run/munge.socket ]] || fail "munged left its socket"
echo "slurm: $done_before of 6 attempts journaled when task 1 was requeued; $calls tool calls for $attempts attempts"
