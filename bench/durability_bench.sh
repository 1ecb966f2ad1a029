#!/usr/bin/env bash
# What durability costs a whole `mf-run --plan` process: the golden conversation
# (fixtures/harness/runs/golden-ok.json: 3 model calls, 3 tool calls, the artifacts draft and
# report) with its trace and artifacts on disk under `--durability event` and `batch`, and on tmpfs
# (/dev/shm) where a sync costs nothing, beside forge's WorkflowRunner on the same conversation
# (bench/forge_runner.py) when its snapshot is given. With MF_BIN_BEFORE, the same rows for an
# earlier build, measured in the same run. The syncs each configuration makes are counted with
# strace when it is installed.
#
# Benchmarks are not tests: only the correctness checks (each run completes, its trace verifies)
# fail the script.
#
# Environment:
#   MF_BIN            bin directory holding mf-compile, mf-run, mf-replay (default build/bin)
#   MF_BIN_BEFORE     an earlier build's bin directory, timed beside MF_BIN (optional)
#   MF_BENCH_DIR      output directory, on disk (default target/bench)
#   MF_BENCH_TMPFS    a directory on tmpfs (default /dev/shm; the tmpfs rows are skipped without)
#   MF_BENCH_RUNS     processes timed per row (default 30)
#   MF_BENCH_DIRTY_MB adds "dirty" rows: the disk rows again, each run with another process writing
#                     this many MB (unsynced) to the same file system meanwhile (default 0: none)
#   MF_FORGE_REPO     a git clone of antoinezambelli/forge (optional: the forge row and the ratios)
#   MF_FORGE_PYTHON   the Python to run forge with (default python3; needs pydantic >= 2)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MF_BIN:-$root/build/bin}
before=${MF_BIN_BEFORE:-}
out_dir=${MF_BENCH_DIR:-$root/target/bench}
tmpfs=${MF_BENCH_TMPFS:-/dev/shm}
runs=${MF_BENCH_RUNS:-30}
dirty_mb=${MF_BENCH_DIRTY_MB:-0}
repo=${MF_FORGE_REPO:-}
py=${MF_FORGE_PYTHON:-python3}

bench_name=durability
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

for b in mf-compile mf-run mf-replay; do
  [[ -x $bin/$b ]] || die "$bin/$b not found (set MF_BIN)"
done
[[ -z $before || -x $before/mf-run ]] || die "$before/mf-run not found (MF_BIN_BEFORE)"
require_tools awk jq

h=$root/fixtures/harness
disk=$out_dir/durability
rm -rf "$disk" && mkdir -p "$disk"
places=(disk)
mem=""
if [[ $(stat -f -c %T "$tmpfs" 2>/dev/null) == tmpfs ]]; then
  mem=$(mktemp -d "$tmpfs/mf-durability.XXXXXX")
  trap 'rm -rf "$mem"' EXIT
  places+=(tmpfs)
else
  log "no tmpfs at $tmpfs: the tmpfs rows are skipped"
fi
((dirty_mb > 0)) && places+=(dirty)
place_dir() { if [[ $1 == tmpfs ]]; then echo "$mem"; else echo "$disk"; fi; }
for p in "${places[@]}"; do
  d=$(place_dir "$p")
  mkdir -p "$d/ws/src" "$d/art"
  cp "$root/fixtures/repository/src/lib.rs" "$d/ws/src/"
done
"$bin/mf-compile" "$h/golden.yaml" --catalog "$h/catalog.json" --profiles "$h/profiles.json" \
  -o - >"$disk/plan.json"

# golden BIN PLACE DURABILITY: one run of the golden conversation.
golden() {
  local d
  d=$(place_dir "$2")
  "$1/mf-run" --plan "$disk/plan.json" --model "scripted:$h/runs/golden-ok.json" \
    --workspace "$d/ws" --artifacts "$d/art" --fixed-clock --run-id durability \
    --trace "$d/t.jsonl" --durability "$3"
}

# --- correctness, once per configuration ------------------------------------------------------
bins=("$bin")
[[ -n $before ]] && bins+=("$before")
for b in "${bins[@]}"; do
  for p in "${places[@]}"; do
    for dur in event batch; do
      [[ $(golden "$b" "$p" "$dur" | jq -r .terminal) == completed ]] ||
        die "$b/mf-run ($p, $dur) did not complete"
      "$bin/mf-replay" "$(place_dir "$p")/t.jsonl" >/dev/null || die "the trace does not verify"
    done
  done
done

# syncs BIN PLACE DURABILITY: fsync + fdatasync + syncfs + msync calls of one run (strace -c).
syncs() {
  command -v strace >/dev/null || {
    echo "-"
    return
  }
  strace -f -c -e trace=fsync,fdatasync,syncfs,msync,sync_file_range -o "$disk/strace.txt" \
    bash -c 'golden "$@"' bash "$@" >/dev/null 2>&1 || true
  awk '$NF ~ /^(fsync|fdatasync|syncfs|msync|sync_file_range)$/ { n += $4 } END { print n + 0 }' \
    "$disk/strace.txt"
}
# The strace wrapper runs a shell function: export what it needs.
export -f golden place_dir
export disk mem h

# The configurations are timed interleaved, one process of each per round, so that load on a shared
# machine falls on all of them alike. ns_of CMD...: nanoseconds of one process (stdout discarded).
ns_of() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null
  t1=$(date +%s%N)
  echo $((t1 - t0))
}
# best_mean NS...: "BEST MEAN" seconds.
best_mean() {
  printf '%s\n' "$@" | awk '{ d = $1 / 1e9; sum += d; if (NR == 1 || d < best) best = d }
    END { printf "%.4f %.4f\n", best, sum / NR }'
}

# --- forge, when its snapshot and a Python with pydantic 2 are there ---------------------------
forge_best=""
runner=()
if [[ -n $repo ]] && git -C "$repo" rev-parse --verify -q HEAD >/dev/null 2>&1 &&
  pyd=$("$py" -c 'import pydantic; print(pydantic.VERSION)' 2>/dev/null) && [[ ${pyd%%.*} -ge 2 ]]; then
  mkdir -p "$disk/forge" "$disk/art-forge"
  git -C "$repo" archive HEAD src | tar -x -C "$disk/forge"
  runner=("$py" "$root/bench/forge_runner.py" --forge "$disk/forge" --script "$h/runs/golden-ok.json"
    --artifacts "$disk/art-forge")
  "${runner[@]}" >/dev/null || die "forge_runner.py failed"
else
  log "no forge snapshot with pydantic >= 2 (MF_FORGE_REPO, MF_FORGE_PYTHON): no forge row"
fi

log "timing ($runs processes per row, interleaved)"
configs=()
for b in "${bins[@]}"; do
  for p in "${places[@]}"; do
    for dur in event batch; do configs+=("$b|$p|$dur"); done
  done
done
declare -A samples=()
for ((i = 0; i < runs; i++)); do
  for c in "${configs[@]}"; do
    IFS='|' read -r b p dur <<<"$c"
    if [[ $p == dirty ]]; then
      # Another process dirties the same file system, started just before the run.
      dd if=/dev/zero of="$disk/dirty" bs=1M count="$dirty_mb" status=none &
      sleep 0.2
      samples[$c]+=" $(ns_of golden "$b" "$p" "$dur")"
      wait $!
      rm -f "$disk/dirty"
    else
      samples[$c]+=" $(ns_of golden "$b" "$p" "$dur")"
    fi
  done
  if ((${#runner[@]})); then samples[forge]+=" $(ns_of "${runner[@]}")"; fi
  samples[true]+=" $(ns_of /bin/true)"
done
rows=()
for c in "${configs[@]}"; do
  IFS='|' read -r b p dur <<<"$c"
  label=""
  [[ -n $before ]] && { [[ $b == "$bin" ]] && label=after || label=before; }
  # shellcheck disable=SC2086 # the samples are words
  read -r best mean < <(best_mean ${samples[$c]})
  rows+=("${label:+$label, }$p, --durability $dur|$(syncs "$b" "$p" "$dur")|$best|$mean")
done
if ((${#runner[@]})); then
  # shellcheck disable=SC2086
  read -r forge_best forge_mean < <(best_mean ${samples[forge]})
fi
# shellcheck disable=SC2086
read -r true_best true_mean < <(best_mean ${samples[true]})

{
  echo "mf-run --plan on the golden conversation ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores)"
  echo "disk: $(df -T "$disk" | awk 'NR == 2 { print $2 }') at $disk${mem:+; tmpfs: $mem}"
  echo "wall-clock seconds per process, best and mean of $runs; ratio = forge's best / this best"
  echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
  ((dirty_mb == 0)) ||
    echo "dirty: the disk rows with another process writing $dirty_mb MB to that file system meanwhile"
  echo
  printf "%-44s %6s %8s %8s %8s\n" process syncs best mean ratio
  for r in "${rows[@]}"; do
    IFS='|' read -r name n best mean <<<"$r"
    awk -v name="$name" -v n="$n" -v b="$best" -v m="$mean" -v f="$forge_best" 'BEGIN {
      r = (f == "") ? "" : sprintf("%.1fx", f / b)
      printf "%-44s %6s %8.4f %8.4f %8s\n", name, n, b, m, r }'
  done
  [[ -n $forge_best ]] && printf "%-44s %6s %8.4f %8.4f %8s\n" "python3 forge_runner.py" "" \
    "$forge_best" "$forge_mean" "(peer)"
  printf "%-44s %6s %8.4f %8.4f\n" "/bin/true (spawn floor)" "" "$true_best" "$true_mean"
} | tee "$out_dir/durability-results.txt"
log "results written to $out_dir/durability-results.txt"
