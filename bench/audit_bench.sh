#!/usr/bin/env bash
# Whole-process benchmark of auditing a campaign: `mf-audit` over a manifest naming a campaign of
# N task cases (report, traces, suite) at -j 1 and -j 2, against two peers in the same run: a
# python3 loop that only hashes every trace and compares it with the report's trace_sha256 (what
# the cheapest possible check does), and `sha256sum` over the traces (one SHA-256 pass: the limit).
# Also the audit's peak RSS at N and 10 x N (the traces are held one per worker; what grows is the
# report and the suite). Benchmarks are not tests: only correctness checks fail the script.
#
# Environment:
#   MF_BIN          bin directory holding the mf-* programs (default: build them, Release)
#   MF_BENCH_DIR    output directory (default target/bench)
#   MF_BENCH_CASES  cases of the small campaign (default 1000); the large one has 10 x as many
#   MF_BENCH_RUNS   timed runs per command, the best is kept (default 3)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out_dir=${MF_BENCH_DIR:-$root/target/bench}/audit
cases=${MF_BENCH_CASES:-1000}
runs=${MF_BENCH_RUNS:-3}

bench_name=audit_bench
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
release_bin mf-audit mf-eval mf-replay mf-compile
require_tools python3 sha256sum /usr/bin/time
mkdir -p "$out_dir"
cp "$root"/fixtures/forge/*.json "$out_dir/"

# campaign N: a suite of N cases cycling through the Forge suite's four, run once with traces.
campaign() {
  local n=$1 dir=$out_dir/c$1
  [[ -s $dir/report.json ]] && return
  mkdir -p "$dir/traces"
  python3 - "$out_dir/eval-suite.json" "$dir/suite.json" "$n" <<'PY'
import json, sys
suite = json.load(open(sys.argv[1]))
n = int(sys.argv[3])
cases = []
for i in range(n):
    c = dict(suite["cases"][i % len(suite["cases"])])
    c["id"] = "c%06d" % i
    for k in ("task",):
        c[k] = "../" + c[k]
    c["model"] = "scripted:../" + c["model"].split(":", 1)[1]
    cases.append(c)
json.dump({"suite_id": "audit-bench", "cases": cases}, open(sys.argv[2], "w"))
PY
  log "running the $n-case campaign"
  (cd "$dir" && "$bin/mf-eval" run --suite suite.json --fixed-clock --traces traces \
    --output report.json --journal journal -j 2 -q)
  printf 'v: 1\nkind: millforge_audit_manifest\ncampaigns:\n  - report: report.json\n    traces: traces\n    suite: suite.json\n' \
    >"$dir/audit.yaml"
}

peer='import json, hashlib, os, sys
d = sys.argv[1]
bad = 0
for c in json.load(open(os.path.join(d, "report.json")))["cases"]:
    with open(os.path.join(d, "traces", c["id"] + ".jsonl"), "rb") as f:
        bad += hashlib.sha256(f.read()).hexdigest() != c["trace_sha256"]
sys.exit(bad != 0)'

# best SECONDS_VAR CMD...: the best wall time of `runs` runs, in seconds.
best() {
  local var=$1 t0 t1 b=""
  shift
  for _ in $(seq "$runs"); do
    t0=$(date +%s%N)
    "$@" >/dev/null
    t1=$(date +%s%N)
    local s=$(( (t1 - t0) / 1000 ))
    [[ -z $b || $s -lt $b ]] && b=$s
  done
  printf -v "$var" '%d' "$b"
}

for n in "$cases" $((cases * 10)); do campaign "$n"; done
dir=$out_dir/c$((cases * 10))
mkdir -p "$dir/out" "$out_dir/o"
"$bin/mf-audit" "$dir/audit.yaml" --out-dir "$dir/out" -q -j 2 >/dev/null ||
  die "the audit of the generated campaign does not pass"

best a1 "$bin/mf-audit" "$dir/audit.yaml" --out-dir "$dir/out" -q -j 1
best a2 "$bin/mf-audit" "$dir/audit.yaml" --out-dir "$dir/out" -q -j 2
best py python3 -c "$peer" "$dir"
best sha sh -c "cat '$dir'/traces/*.jsonl | sha256sum"
rss_small=$(/usr/bin/time -f %M "$bin/mf-audit" "$out_dir/c$cases/audit.yaml" --out-dir "$out_dir/o" -q -j 2 2>&1 >/dev/null | tail -1)
rss_large=$(/usr/bin/time -f %M "$bin/mf-audit" "$dir/audit.yaml" --out-dir "$dir/out" -q -j 2 2>&1 >/dev/null | tail -1)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "audit of $((cases * 10)) attempts (best of $runs, microseconds):"
echo "  mf-audit -j 1                 $a1"
echo "  mf-audit -j 2                 $a2   (speed-up $(ratio "$a1" "$a2")x)"
echo "  python3 hash-and-compare      $py   (mf-audit -j 2 / python: $(ratio "$a2" "$py")x)"
echo "  cat | sha256sum               $sha  (mf-audit -j 2 / one SHA-256 pass: $(ratio "$a2" "$sha")x)"
echo "peak RSS: $cases attempts ${rss_small} KB, $((cases * 10)) attempts ${rss_large} KB"
