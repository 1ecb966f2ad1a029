#!/usr/bin/env bash
# Store benchmarks, all measured in one run on one machine:
#   1. whole process, on the 100 MB JSONL corpus of bench/run.sh:
#        mf-store canon --lines  vs  jq -c -S .    (CPU seconds as well: perf stat's task-clock)
#        mf-store hash           vs  sha256sum
#        mf-store put (durable)  vs  dd conv=fsync      (a fresh store each run)
#        mf-store get            vs  cat
#      and put of a MF_BENCH_PUT_MB file into a fresh store vs dd conv=fsync, on the scratch disk and
#      on tmpfs (/dev/shm), wall clock and CPU time
#   2. peak RSS of gc, export and import on an 8 MiB and a MF_BENCH_SCAN_MB JSON object
#   3. mf_bench's Store* benchmarks (bench/store_bench.cpp, enabled by MF_BENCH_STORE=1): put and get
#      throughput for 1 KiB and 1 MiB values, one synced commit per put vs many puts per
#      transaction, gets by 1/2/4 reader processes at once, and a bulk put of 100k small objects
#      vs the same objects as files in a git-like loose-object layout, with and without fsync.
# Prints the tables and writes target/bench/store-results.txt (raw Google Benchmark JSON beside it,
# store-micro.json). Benchmarks are not tests: only the correctness checks make this script fail.
#
# Environment (as bench/run.sh):
#   MF_BIN            use these binaries (mf-store, mf_gen_corpus, mf_bench) instead of building
#   MF_BIN_BEFORE     an earlier build's bin directory: its mf-store canon --lines is timed beside
#                     (same corpus, same run) and must write the same bytes (optional)
#   MF_BENCH_BUILD    build dir when MF_BIN is unset (default build-bench, Release)
#   MF_BENCH_DIR      output dir (default target/bench)
#   MF_BENCH_MB       corpus size in MB (default 100)
#   MF_BENCH_RUNS     timed runs per whole-process command, the best is kept (default 3)
#   MF_BENCH_SCAN_MB  the large JSON object of the peak-RSS rows, in MiB (default 1024)
#   MF_BENCH_PUT_MB   the file of the put-against-dd rows, in MiB (default 1024; 0 skips them)
#   MF_BENCH_STORE_DIR  where the temporary stores go (default target/bench/store-tmp: same disk)
#   MF_JOBS           build parallelism (default 2)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out_dir=${MF_BENCH_DIR:-$root/target/bench}
mb=${MF_BENCH_MB:-100}
runs=${MF_BENCH_RUNS:-3}
jobs=${MF_JOBS:-2}
corpus=$out_dir/corpus-${mb}mb.jsonl
results=$out_dir/store-results.txt
micro=$out_dir/store-micro.json
scratch=${MF_BENCH_STORE_DIR:-$out_dir/store-tmp}
mkdir -p "$out_dir" "$scratch"
work=$(mktemp -d "$scratch/run.XXXXXX")
trap 'rm -rf "$work"' EXIT

bench_name=store_bench.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

require_tools jq sha256sum awk dd

# --- binaries ---------------------------------------------------------------------------------
if [[ -n ${MF_BIN:-} ]]; then
  bin=$(cd "$MF_BIN" && pwd)
else
  build=${MF_BENCH_BUILD:-$root/build-bench}
  log "building Release binaries in $build"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMF_BUILD_TESTS=OFF \
    -DMF_BUILD_BENCH=ON >/dev/null
  cmake --build "$build" -j "$jobs" --target mf-store mf_gen_corpus mf_bench >/dev/null
  bin=$build/bin
fi
mf_store=$bin/mf-store
[[ -x $mf_store ]] || die "$mf_store not found (set MF_BIN or unset it to build)"
[[ -x $bin/mf_bench ]] || die "$bin/mf_bench not found (Google Benchmark, libbenchmark-dev, is needed)"
before=${MF_BIN_BEFORE:+$MF_BIN_BEFORE/mf-store}
[[ -z $before || -x $before ]] || die "$before not found (MF_BIN_BEFORE)"

# --- corpus (the same bytes as bench/run.sh's) ------------------------------------------------
if [[ ! -s $corpus ]]; then
  gen=$bin/mf_gen_corpus
  [[ -x $gen ]] || die "$gen not found"
  log "generating $corpus"
  "$gen" "$corpus" --mb "$mb"
fi
bytes=$(stat -c %s "$corpus")
lines=$(wc -l <"$corpus")
cat "$corpus" >/dev/null # warm the page cache

# --- correctness, once ------------------------------------------------------------------------
log "checking correctness"
mf_lines=$("$mf_store" canon --lines "$corpus" | wc -l)
[[ $mf_lines -eq $lines ]] || die "mf-store canon --lines wrote $mf_lines lines for $lines"
if [[ -n $before ]]; then
  [[ $("$mf_store" canon --lines "$corpus" | sha256sum) == $("$before" canon --lines "$corpus" | sha256sum) ]] ||
    die "mf-store canon --lines writes other bytes than the MF_BIN_BEFORE build"
fi
jq_lines=$(jq -c -S . "$corpus" | wc -l)
[[ $jq_lines -eq $lines ]] || die "jq wrote $jq_lines lines for $lines"
peer_hash=$(sha256sum "$corpus" | cut -d' ' -f1)
[[ $("$mf_store" hash "$corpus") == "$peer_hash" ]] || die "mf-store hash differs from sha256sum"
put_digest=$("$mf_store" --store "$work/check" put "$corpus")
[[ $put_digest == "$peer_hash" ]] || die "mf-store put printed $put_digest, not $peer_hash"
[[ $("$mf_store" --store "$work/check" get "$put_digest" | sha256sum | cut -d' ' -f1) == "$peer_hash" ]] ||
  die "mf-store get does not return the corpus"
"$mf_store" --store "$work/check" verify >/dev/null || die "verify failed after put"
log "correct: same line counts, same digest, put/get round trip"

# --- whole-process timings --------------------------------------------------------------------
put_fresh() { # a new store every run: a second put of the same bytes is only a hash and a lookup
  rm -rf "$work/put"
  "$mf_store" --store "$work/put" put "$corpus"
}
dd_fsync() { dd if="$corpus" of="$work/copy" bs=1M conv=fsync status=none; }

log "timing whole processes (best of $runs)"
t_canon=$(best_of "$mf_store" canon --lines "$corpus")
t_jq=$(best_of jq -c -S . "$corpus")
# CPU seconds too: on a shared machine the wall clock of a sub-second command moves by tens of
# percent, its CPU time far less.
c_canon=$(cpu_of "$mf_store" canon --lines "$corpus")
c_jq=$(cpu_of jq -c -S . "$corpus")
c_before=""
[[ -z $before ]] || c_before=$(cpu_of "$before" canon --lines "$corpus")
t_hash=$(best_of "$mf_store" hash "$corpus")
t_sha=$(best_of sha256sum "$corpus")
t_put=$(best_of put_fresh)
t_dd=$(best_of dd_fsync)
t_get=$(best_of "$mf_store" --store "$work/check" get "$put_digest")
t_cat=$(best_of cat "$corpus")
rm -rf "$work/put" "$work/copy"

# --- put of a large file against dd, on the scratch disk and on tmpfs --------------------------------
# Each run starts from a fresh store (and dd from no copy), the file in the page cache; put and dd
# take turns, $runs rounds, so that a change in the machine's load falls on both. Wall and CPU
# (perf's task-clock, all threads, user + system) include removing the previous run's output, for
# both sides.
# wall_cpu CMD...: "WALL CPU" in seconds of one run of CMD (CPU "-" without perf).
wall_cpu() {
  local t0 t1 ms=-
  t0=$(date +%s.%N)
  if command -v perf >/dev/null; then
    ms=$(perf stat -x, -e task-clock -- "$@" 2>&1 >/dev/null | awk -F, '$3 ~ /task-clock/ { print $1 }')
  else
    "$@" >/dev/null
  fi
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" -v ms="$ms" 'BEGIN { printf "%.3f %s", b - a, ms == "-" ? "-" : sprintf("%.3f", ms / 1000) }'
}
# span LIST COLUMN: "MIN-MAX" of a column (1 wall, 2 CPU) of wall_cpu results, one per line.
span() {
  awk -v c="$2" 'NF && $c != "-" { if (n++ == 0 || $c < lo) lo = $c; if ($c > hi) hi = $c }
    END { if (n) printf "%.2f-%.2f", lo, hi; else printf "-" }' <<<"$1"
}
put_mb=${MF_BENCH_PUT_MB:-1024}
big_rows=()
if ((put_mb > 0)); then
  shm=
  if [[ -d /dev/shm && -w /dev/shm ]] &&
    (($(df -Pm /dev/shm | awk 'NR == 2 { print $4 }') > 3 * put_mb)); then
    shm=$(mktemp -d /dev/shm/mf-store-bench.XXXXXX)
    trap 'rm -rf "$work" "$shm"' EXIT
  fi
  for d in "$work" $shm; do
    fs=disk
    [[ $d == "$shm" ]] && fs=tmpfs
    log "put of a $put_mb MiB file against dd on $fs ($runs rounds, in turns)"
    head -c $((put_mb << 20)) /dev/urandom >"$d/big"
    put_big=(bash -c 'rm -rf "$1/big-store" && exec "$2" --store "$1/big-store" put "$1/big"' _ "$d"
      "$mf_store")
    dd_big=(bash -c 'rm -f "$1/big-copy" && exec dd if="$1/big" of="$1/big-copy" bs=1M conv=fsync \
      status=none' _ "$d")
    [[ $("${put_big[@]}") == "$(sha256sum "$d/big" | cut -d' ' -f1)" ]] || die "put of the big file"
    put_runs= dd_runs=
    for ((i = 0; i < runs; i++)); do
      put_runs+="$(wall_cpu "${put_big[@]}")"$'\n'
      dd_runs+="$(wall_cpu "${dd_big[@]}")"$'\n'
    done
    big_rows+=("$fs $(span "$put_runs" 1) $(span "$dd_runs" 1) $(span "$put_runs" 2) \
$(span "$dd_runs" 2)")
    rm -rf "$d/big" "$d/big-store" "$d/big-copy"
  done
fi


# --- peak RSS against object size: the reference scan (gc, export) and import ---------------------
# A JSON object of MF_BENCH_SCAN_MB MiB (default 1024) that mentions another object, against the same
# shape at 8 MiB: what gc, export and import hold as the object grows (/usr/bin/time -f %M).
scan_doc() { # scan_doc MIB LEAF > FILE
  python3 - "$1" "$2" <<'PY'
import sys
mib, leaf = int(sys.argv[1]), sys.argv[2].encode()
line = b"lorem ipsum dolor sit amet, " * 4 + b"\\n\\u00e9 "
out = sys.stdout.buffer
out.write(b'{"leaf":"' + leaf + b'","text":"')
out.write(line * ((mib << 20) // len(line)))
out.write(b'"}')
PY
}
peak_kib() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -n 1; }
scan_rows=()
if [[ -x /usr/bin/time ]] && command -v python3 >/dev/null; then
  for smb in 8 "${MF_BENCH_SCAN_MB:-1024}"; do
    log "peak RSS of gc, export and import on a ${smb} MiB JSON object"
    s=$work/scan
    rm -rf "$s" "$s.import"
    leaf=$(echo "leaf" | "$mf_store" --store "$s" put)
    scan_doc "$smb" "$leaf" >"$work/scan.json"
    root=$("$mf_store" --store "$s" put "$work/scan.json")
    "$mf_store" --store "$s" ref set big "$root"
    rm "$work/scan.json"
    "$mf_store" --store "$s" export --ref big >"$work/scan.export"
    grep -q "\"digest\":\"$leaf\"" "$work/scan.export" || die "export left out the mentioned leaf"
    scan_rows+=("$smb $(peak_kib "$mf_store" --store "$s" gc) $(peak_kib "$mf_store" --store "$s" \
      export --ref big) $(peak_kib "$mf_store" --store "$s.import" import "$work/scan.export")")
    rm -rf "$s" "$s.import" "$work/scan.export"
  done
fi

# --- mf_bench Store* --------------------------------------------------------------------------
log "running mf_bench Store* (temporary stores under $work)"
MF_BENCH_STORE=1 MF_BENCH_STORE_DIR="$work" "$bin/mf_bench" --benchmark_filter='^Store' \
  --benchmark_color=false --benchmark_min_time=0.3 \
  --benchmark_out="$micro" --benchmark_out_format=json >"$work/mf_bench.txt" 2>&1 ||
  { cat "$work/mf_bench.txt" >&2; die "mf_bench failed"; }
if grep -q '"error_occurred": true' "$micro"; then die "a Store benchmark reported an error"; fi

# Throughput rows: name prefix -> label.
throughput() {
  jq -r --arg p "$1" --arg lbl "$2" '
    [.benchmarks[] | select(.name | startswith($p))][0]
    | [$lbl, (.items_per_second // 0), ((.bytes_per_second // 0) / 1048576)]
    | @tsv' "$micro" | awk -F'\t' '{ printf "%-38s %14.0f %12.1f\n", $1, $2, $3 }'
}
# Bulk rows: objects written, seconds, objects/s, seconds for 100k (scaled from a sample when
# fewer were written), and how many times faster than loose files / loose files with fsync.
bulk_table() {
  jq -r '
    [.benchmarks[] | select(.name | startswith("StoreBulk/"))
     | {name: (.name | split("/")[1]), n: (.items_per_second * .real_time / 1000),
        s: (.real_time / 1000), ips: .items_per_second}
     | . + {s100k: (100000 / .ips)}] as $rows
    | ($rows | map(select(.name == "loose_files"))[0].s100k) as $loose
    | ($rows | map(select(.name == "loose_files_fsync"))[0].s100k) as $loose_sync
    | $rows[]
    | [.name, (.n | round), .s, .ips, .s100k, ($loose / .s100k), ($loose_sync / .s100k)]
    | @tsv' "$micro" |
    awk -F'\t' '{ printf "%-28s %8d %9.3f %12.0f %11.2f%s %9.2fx %9.2fx\n",
                   $1, $2, $3, $4, $5, ($2 < 100000 ? "*" : " "), $6, $7 }'
}

{
  echo "Millforge store benchmarks ($(date -u +%Y-%m-%dT%H:%M:%SZ), $(nproc) cores)"
  echo "build: $("$mf_store" --version 2>/dev/null || echo unknown)"
  echo "peers: $(jq --version), $(sha256sum --version | head -n 1), $(dd --version | head -n 1)"
  echo "load average at the end: $(cut -d" " -f1-3 /proc/loadavg)"
  echo "disk: $(df -T "$work" | awk 'NR == 2 { print $2 " on " $1 }') (temporary stores: $scratch)"
  awk -v f="$corpus" -v b="$bytes" -v l="$lines" -v r="$runs" \
    'BEGIN { printf "corpus: %s (%.1f MB, %d lines), best of %d wall-clock runs\n", f, b / 1e6, l, r }'
  echo "ratio = peer seconds / mf seconds: above 1.00x Millforge is faster, below it is slower"
  echo
  printf "%-30s %9s %10s %14s\n" "whole process, 100 MB" seconds MB/s "ratio vs peer"
  row "mf-store canon --lines" "$t_canon" "$t_jq" 30
  row "jq -c -S ." "$t_jq" "" 30
  row "mf-store hash" "$t_hash" "$t_sha" 30
  row "sha256sum" "$t_sha" "" 30
  row "mf-store put (fresh, synced)" "$t_put" "$t_dd" 30
  row "dd conv=fsync" "$t_dd" "" 30
  row "mf-store get (re-hashed)" "$t_get" "$t_cat" 30
  row "cat" "$t_cat" "" 30
  if ((${#big_rows[@]})); then
    echo
    echo "put of a ${put_mb} MiB file into a fresh store against dd conv=fsync ($runs rounds, in"
    echo "turns; seconds, lowest-highest; ratio of the lowest)"
    printf "%-8s %11s %11s %7s %11s %11s %7s\n" "" "put wall" "dd wall" ratio "put CPU" "dd CPU" ratio
    for r in "${big_rows[@]}"; do
      read -r fs pw dw pc dc <<<"$r"
      awk -v f="$fs" -v pw="$pw" -v dw="$dw" -v pc="$pc" -v dc="$dc" 'BEGIN {
        printf "%-8s %11s %11s %6.2fx %11s %11s %7s\n", f, pw, dw, pw / dw, pc, dc,
          (dc + 0 > 0 && pc != "-") ? sprintf("%6.2fx", pc / dc) : "-" }'
    done
  fi
  echo
  printf "%-30s %9s %10s %14s\n" "CPU seconds (task-clock), best" seconds MB/s "ratio vs jq"
  if [[ $c_canon != - ]]; then
    row "mf-store canon --lines" "$c_canon" "$c_jq" 30
    [[ -z $c_before ]] || row "  MF_BIN_BEFORE build" "$c_before" "$c_jq" 30
    row "jq -c -S ." "$c_jq" "" 30
  else
    echo "(perf is not installed)"
  fi
  if ((${#scan_rows[@]})); then
    echo
    echo "Peak RSS (MiB) against a JSON object's size (it mentions one other object)"
    printf "%-12s %10s %10s %10s\n" object gc export import
    for r in "${scan_rows[@]}"; do
      read -r smb g e i <<<"$r"
      awk -v m="$smb" -v g="$g" -v e="$e" -v i="$i" \
        'BEGIN { printf "%-12s %10.1f %10.1f %10.1f\n", m " MiB", g / 1024, e / 1024, i / 1024 }'
    done
  fi
  echo
  echo "Put and get in one process (mf_bench; MB/s = MiB/s of values)"
  printf "%-38s %14s %12s\n" benchmark "objects/s" "MiB/s"
  throughput "StorePut/1KiB/durable_each" "put 1 KiB, one synced commit each"
  throughput "StorePut/1KiB/txn_of_1000" "put 1 KiB, 1000 per transaction"
  throughput "StorePut/1MiB/durable_each" "put 1 MiB, one synced commit each"
  throughput "StorePut/1MiB/txn_of_64" "put 1 MiB, 64 per transaction"
  throughput "StoreGet/1KiB" "get 1 KiB (re-hashed)"
  throughput "StoreGet/1MiB" "get 1 MiB (re-hashed)"
  for size in 1KiB 1MiB; do
    for procs in 1 2 4; do
      throughput "StoreGetProcs/$size/procs:$procs/" "get $size, $procs reader process(es), total"
    done
  done
  echo
  echo "Bulk put of 100k small objects (~200-byte JSON) vs a git-like loose-object tree"
  echo "(objects/ab/cdef..., temp file + rename, no compression); * = time scaled from a sample,"
  echo "every object there is synced; ratio = loose-files seconds / these seconds for 100k"
  printf "%-28s %8s %9s %12s %12s %10s %10s\n" variant objects seconds "objects/s" "s for 100k" \
    "vs loose" "vs +fsync"
  bulk_table
} | tee "$results"
log "results written to $results (raw: $micro)"
