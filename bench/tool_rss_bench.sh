#!/usr/bin/env bash
# Peak RSS of the pack's read and edit on large files, as whole `mf-run tool` processes
# (/usr/bin/time -f %M), against the file's size: the factor docs/tools.md states. Two shapes of
# 64 MiB (the tools' limit): a file of newlines around one marker line (one token per byte, the
# worst case for anything kept per line) and source-like text (lines of about 40 bytes). Benchmarks
# are not tests: only correctness checks (the edit happened, read answered) fail the script.
#
# Environment:
#   MF_BIN          bin directory holding mf-run (default: build/bin)
#   MF_BENCH_DIR    output directory (default target/bench)
#   MF_BENCH_MB     file size in MiB (default 64, the most read and edit accept)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${MF_BIN:-$root/build/bin}
out_dir=${MF_BENCH_DIR:-$root/target/bench}
mib=${MF_BENCH_MB:-64}
mfrun=$bin/mf-run

bench_name=tool_rss_bench
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
[[ -x $mfrun ]] || die "$mfrun not found (set MF_BIN)"
require_tools awk jq /usr/bin/time python3
gen=$out_dir/tool-rss
mkdir -p "$gen/ws"

# generate SHAPE FILE: MIB MiB with one line "MARKER" in the middle.
generate() {
  python3 - "$1" "$2" "$mib" <<'PY'
import sys
shape, path, mib = sys.argv[1], sys.argv[2], int(sys.argv[3])
size = mib << 20
marker = b"MARKER\n"
if shape == "newlines":
    half = (size - len(marker)) // 2
    body = b"\n" * half + marker + b"\n" * (size - len(marker) - half)
else:
    line = b"    const int value_%07d = compute(alpha, beta);\n"
    lines = [line % i for i in range(size // len(line % 0))]
    lines[len(lines) // 2] = marker
    body = b"".join(lines)
with open(path, "wb") as f:
    f.write(body)
PY
}

# rss CMD...: peak resident set of one process, in KiB.
rss() { /usr/bin/time -f %M "$@" 2>&1 >/dev/null | tail -1; }

printf '{"path":"big.txt","edits":[{"oldText":"MARKER\\n","newText":"CHANGED\\n"}]}' >"$gen/edit.json"
printf '{"path":"big.txt"}' >"$gen/read.json"
{
  echo "mf-run tool read/edit peak RSS ($(date -u +%Y-%m-%dT%H:%M:%SZ), ${mib} MiB files)"
  printf "%-10s %-6s %12s %12s %8s\n" shape tool "file MiB" "RSS MiB" factor
  for shape in newlines source; do
    file=$gen/$shape.txt
    [[ -s $file ]] || generate "$shape" "$file"
    size=$(stat -c %s "$file")
    for t in read edit; do
      cp "$file" "$gen/ws/big.txt"
      kib=$(rss "$mfrun" tool "$t" --workspace "$gen/ws" --args "@$gen/$t.json")
      if [[ $t == edit ]]; then
        grep -q '^CHANGED$' "$gen/ws/big.txt" || die "edit of the $shape file did not happen"
      fi
      awk -v s="$shape" -v t="$t" -v size="$size" -v kib="$kib" 'BEGIN {
        printf "%-10s %-6s %12.1f %12.1f %7.1fx\n", s, t, size / 1048576, kib / 1024, kib * 1024 / size
      }'
    done
  done
} | tee "$out_dir/tool-rss-results.txt"
rm -f "$gen/ws/big.txt"
