# Shared by the whole-process benchmark scripts (sourced). Callers set `bench_name` (log prefix),
# `runs` (timed runs per command) and, for `row`, `bytes` (input size).

log() { echo "$bench_name: $*" >&2; }
die() {
  log "error: $*"
  exit 1
}

# require_tools TOOL...: every tool must be on PATH.
require_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || die "$tool is not installed"
  done
}

# release_bin TARGET...: sets `bin` to $MF_BIN when set, else builds the TARGETs as Release in
# $MF_BENCH_BUILD (default build-bench, $MF_JOBS jobs) and sets `bin` to its bin directory.
release_bin() {
  if [[ -n ${MF_BIN:-} ]]; then
    bin=$MF_BIN
    return
  fi
  local build=${MF_BENCH_BUILD:-$root/build-bench}
  log "building Release binaries in $build"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMF_BUILD_TESTS=OFF \
    -DMF_BUILD_BENCH=ON >/dev/null
  cmake --build "$build" -j "${MF_JOBS:-2}" --target "$@" >/dev/null
  bin=$build/bin
}

# best_of CMD...: the best wall-clock seconds of $runs runs (stdout discarded, page cache warm).
best_of() {
  local best="" t0 t1 i
  for ((i = 0; i < runs; i++)); do
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    best=$(awk -v a="$t0" -v b="$t1" -v best="$best" \
      'BEGIN { d = b - a; if (best == "" || d < best) best = d; printf "%.3f", best }')
  done
  echo "$best"
}

# row NAME SECONDS PEER_SECONDS [WIDTH]: one table row with MB/s (1 MB = 10^6 bytes of $bytes) and
# the ratio peer seconds / our seconds; an empty PEER_SECONDS marks the peer's own row.
row() {
  awk -v name="$1" -v t="$2" -v peer="$3" -v bytes="$bytes" -v w="${4:-26}" 'BEGIN {
    mbs = (t > 0) ? bytes / 1e6 / t : 0
    ratio = (peer == "") ? "(peer)" : sprintf("%.2fx", (t > 0) ? peer / t : 0)
    printf "%-*s %9.3f %10.1f %14s\n", w, name, t, mbs, ratio
  }'
}

# cpu_seconds CMD...: the CPU seconds (every thread, user + system) of one run, from `perf stat`'s
# task-clock, to the microsecond. On a machine other work shares, CPU time moves far less than the
# wall clock, and for a one-thread peer it is what the wall clock would be unloaded.
cpu_seconds() {
  perf stat -x, -e task-clock -- "$@" 2>&1 >/dev/null |
    awk -F, '$3 ~ /task-clock/ { printf "%.6f\n", $1 / 1000 }'
}

# cpu_of CMD...: the least CPU seconds of $runs runs (cpu_seconds), to the millisecond; "-" without
# perf.
cpu_of() {
  command -v perf >/dev/null || {
    echo "-"
    return
  }
  local best="" s i
  for ((i = 0; i < runs; i++)); do
    s=$(cpu_seconds "$@")
    best=$(awk -v s="$s" -v best="$best" 'BEGIN { if (best == "" || s < best) best = s; printf "%.3f", best }')
  done
  echo "$best"
}
