#!/usr/bin/env bash
# The tool pack's grep and find against the programs Pi runs for them, ripgrep and fd, on one
# generated tree: a git repository of source-like text files (default 100k files, ~1 GiB) with a
# few .gitignore files and ignored files among them. Times, best of $runs with a warm page cache:
#   grep, literal  tool_bench grep {"pattern":LIT,"literal":true}  vs  rg --fixed-strings LIT
#   grep, regex    tool_bench grep {"pattern":RE}                  vs  rg RE   (~1k matching lines)
#   grep, dense    the same with a regex matching ~2M lines (the cost per reported line)
#   find, glob     tool_bench find {"pattern":GLOB}                vs  fdfind --glob GLOB
# with Pi's flags on the peers (--json --line-number --color=never --hidden for rg; --glob
# --color=never --hidden for fd) and limits on ours high enough that both sides do the whole walk.
# rg and fd use every core, as grep and mf-toolread search do by default; each grep is also timed
# on one thread (`tool_bench -j 1`) against `rg -j1`. Before timing, the number of matching lines
# and found paths is checked against the peers (paths under .git excluded: the tools never enter
# it), and grep's and mf-toolread's output on one thread against their output on every core (the
# same bytes). Benchmarks are not tests: only the checks fail it.
# Also `mf-toolread search` (literal, no ignore rules, every bound raised) at -j 1 and by default
# against `rg -uu --fixed-strings` at -j1 and by default, which likewise reads every file; with
# MF_BIN_BEFORE an earlier build's tool_bench and mf-toolread are timed in the same run.
#
# Usage: bench/search_bench.sh
# Environment:
#   MF_BIN          bin directory holding tool_bench and mf-toolread (default: build Release in
#                   $MF_BENCH_BUILD)
#   MF_BIN_BEFORE   bin directory of an earlier build's tool_bench and mf-toolread (optional)
#   MF_BENCH_BUILD  build dir when MF_BIN is unset (default build-bench)
#   MF_BENCH_DIR    where the tree is generated, once (default /tmp/mf-search-bench)
#   MF_BENCH_FILES  files in the tree (default 100000)
#   MF_BENCH_MB     total size of the files in MiB (default 1024)
#   MF_BENCH_RUNS   timed runs per command, the best is kept (default 3)
#   MF_JOBS         build parallelism (default 2)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
files=${MF_BENCH_FILES:-100000}
mb=${MF_BENCH_MB:-1024}
runs=${MF_BENCH_RUNS:-3}
jobs=${MF_JOBS:-2}
base=${MF_BENCH_DIR:-/tmp/mf-search-bench}
tree=$base/tree-${files}f-${mb}mb

bench_name=search_bench
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
require_tools rg fdfind git python3 awk jq

# --- binary ---------------------------------------------------------------------------------------
if [[ -n ${MF_BIN:-} ]]; then
  bin=$(cd "$MF_BIN" && pwd)
else
  build=${MF_BENCH_BUILD:-$root/build-bench}
  log "building a Release tool_bench in $build"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DMF_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j "$jobs" --target tool_bench mf-toolread >/dev/null
  bin=$build/bin
fi
tb=$bin/tool_bench
tr=$bin/mf-toolread
[[ -x $tb && -x $tr ]] || die "$tb or $tr not found (set MF_BIN or unset it to build)"
tb0=${MF_BIN_BEFORE:+$MF_BIN_BEFORE/tool_bench}
tr0=${MF_BIN_BEFORE:+$MF_BIN_BEFORE/mf-toolread}
[[ -z $tb0 || (-x $tb0 && -x $tr0) ]] || die "MF_BIN_BEFORE holds no tool_bench and mf-toolread"

# --- tree (generated once; the marker records that it is complete) -------------------------------
if [[ ! -f $tree/.bench-complete ]]; then
  log "generating $files files, ~$mb MiB in $tree"
  rm -rf "$tree"
  mkdir -p "$tree"
  python3 - "$tree" "$files" "$mb" <<'PY'
import os, random, sys
tree, files, mb = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(20240601)
words = ("fn let mut impl struct enum match return self value error result config handler "
         "request response buffer index count total parse write read open close state event "
         "token stream client server option default build test check update create delete "
         "string number array object field method module import export public private static "
         "Error Result Handler Config Parser Stream Buffer Client Server").split()
# A pool of source-like lines; files are runs of it, so generating 1 GiB stays quick.
lines = []
for _ in range(40000):
    n = rng.randint(2, 12)
    indent = " " * (4 * rng.randint(0, 3))
    body = " ".join(rng.choice(words) for _ in range(n))
    lines.append(indent + rng.choice(["", "let ", "fn ", "// ", "return "]) + body +
                 rng.choice([";", " {", "", ",", ")"]))
pool = "\n".join(lines) + "\n"
starts = [0]
for i, c in enumerate(pool):
    if c == "\n":
        starts.append(i + 1)
starts.pop()
exts = [".rs", ".go", ".py", ".ts", ".txt", ".md", ".c", ".h"]
avg = mb * 1024 * 1024 // files
top, mid = 20, 50
per_leaf = max(1, -(-files // (top * mid)))
written = 0
for i in range(files):
    t, m = i // (mid * per_leaf), (i // per_leaf) % mid
    d = os.path.join(tree, f"pkg{t:02d}", f"mod{m:02d}")
    if i % per_leaf == 0:
        os.makedirs(d, exist_ok=True)
    size = max(64, int(rng.expovariate(1 / avg))) if i % 7 else avg
    start = rng.choice(starts)
    text = pool[start:start + size]
    if len(text) < size:
        text += pool[: size - len(text)]
    text = text[: text.rfind("\n") + 1] or "x\n"
    if i % 97 == 0:  # the literal: in about 1% of the files, once each
        cut = text.find("\n", len(text) // 2) + 1
        text = text[:cut] + "    let needle = mf_search_needle_literal(42);\n" + text[cut:]
    name = f"file{i:06d}{exts[i % len(exts)]}"
    if i % 50 == 49:
        name = f"trace{i:06d}.log"  # ignored by the root .gitignore
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
    written += len(text)
# Ignored directories and nested rules, as a real repository has them.
for t in range(0, top, 5):
    b = os.path.join(tree, f"pkg{t:02d}", "build")
    os.makedirs(b, exist_ok=True)
    for j in range(20):
        with open(os.path.join(b, f"gen{j}.rs"), "w") as f:
            f.write("let needle = mf_search_needle_literal(0);\n" * 10)
with open(os.path.join(tree, ".gitignore"), "w") as f:
    f.write("# generated\n*.log\nbuild/\n/scratch\n")
for t in range(0, top, 4):
    with open(os.path.join(tree, f"pkg{t:02d}", ".gitignore"), "w") as f:
        f.write("mod0[0-4]/*.md\n!mod00/*.md\n")
print(f"{written} bytes", file=sys.stderr)
PY
  git -C "$tree" init -q
  touch "$tree/.bench-complete"
fi
bytes=$(find "$tree" -path "$tree/.git" -prune -o -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
cat_tree() { find "$tree" -path "$tree/.git" -prune -o -type f -print0 | xargs -0 cat >/dev/null; }
cat_tree # warm the page cache

literal=mf_search_needle_literal
regex='[A-Z][a-z]+Handler\b|needle_[a-z]+\([0-9]+\)'
dense='fn [a-z]+_[a-z]+\(|Err(or)?\b'
glob='*.rs'
json_re() { printf '%s' "${1//\\/\\\\}"; } # a regex as a JSON string body

# --- correctness, once ------------------------------------------------------------------------------
ours_lines() { "$tb" "$tree" "$1" "$2" | sed -n 's/.*lines=\([0-9]*\).*/\1/p'; }
check() {
  [[ $2 -eq $3 ]] || die "$1: tool_bench reports $2, the peer $3"
  log "$1: $2 (same as the peer)"
}
rg_count() { rg --hidden --no-messages -g '!.git' -c "$@" "$tree" | awk -F: '{ s += $NF } END { print s + 0 }'; }
check "literal lines" "$(ours_lines grep "{\"pattern\":\"$literal\",\"literal\":true,\"limit\":1e9}")" \
  "$(rg_count --fixed-strings -- "$literal")"
check "regex lines" "$(ours_lines grep "{\"pattern\":\"$(json_re "$regex")\",\"limit\":1e9}")" \
  "$(rg_count -- "$regex")"
check "dense regex lines" "$(ours_lines grep "{\"pattern\":\"$(json_re "$dense")\",\"limit\":1e9}")" \
  "$(rg_count -- "$dense")"
check "find paths" "$(ours_lines find "{\"pattern\":\"$glob\",\"limit\":0}")" \
  "$(fdfind --glob --hidden --color=never -E .git -- "$glob" "$tree" | wc -l)"
toolread() { "${2:-$tr}" search --root "$tree" --query "$1" --max-files 1000000000 \
  --max-bytes 1000000000000 --max-matches 1000000000 "${@:3}"; }
check "mf-toolread lines" "$(toolread "$literal" | jq '.matches | length')" \
  "$(rg -uu --no-messages -c --fixed-strings -- "$literal" "$tree" | awk -F: '{ s += $NF } END { print s + 0 }')"
# One thread and every core give the same bytes (the dense regex at a limit that cuts a file).
for args in "{\"pattern\":\"$(json_re "$dense")\",\"limit\":100001}" \
  "{\"pattern\":\"$literal\",\"literal\":true,\"limit\":1e9,\"context\":1}"; do
  cmp -s <("$tb" "$tree" grep "$args" --print -j 1) <("$tb" "$tree" grep "$args" --print) ||
    die "grep $args: one thread and every core differ"
done
cmp -s <(toolread "$literal" "$tr" -j 1) <(toolread "$literal") ||
  die "mf-toolread: one thread and every core differ"
log "grep and mf-toolread: the same output on one thread and on $(nproc) cores"
if [[ -n $tb0 ]]; then
  for args in "{\"pattern\":\"$(json_re "$dense")\",\"limit\":100001}" \
    "{\"pattern\":\"$(json_re "$regex")\",\"limit\":1e9,\"context\":2}"; do
    cmp -s <("$tb0" "$tree" grep "$args" --print) <("$tb" "$tree" grep "$args" --print) ||
      die "grep $args: MF_BIN_BEFORE and MF_BIN differ"
  done
  cmp -s <(toolread "$literal" "$tr0") <(toolread "$literal") || die "mf-toolread: MF_BIN_BEFORE and MF_BIN differ"
  log "grep and mf-toolread: the same output as MF_BIN_BEFORE"
fi

# --- timings ----------------------------------------------------------------------------------------
t_lit=$(best_of "$tb" "$tree" grep "{\"pattern\":\"$literal\",\"literal\":true,\"limit\":1e9}")
t_lit1=$(best_of "$tb" "$tree" grep "{\"pattern\":\"$literal\",\"literal\":true,\"limit\":1e9}" -j 1)
t_lit_rg=$(best_of rg --json --line-number --color=never --hidden --fixed-strings -- "$literal" "$tree")
t_lit_rg1=$(best_of rg -j1 --json --line-number --color=never --hidden --fixed-strings -- "$literal" "$tree")
t_re=$(best_of "$tb" "$tree" grep "{\"pattern\":\"$(json_re "$regex")\",\"limit\":1e9}")
t_re1=$(best_of "$tb" "$tree" grep "{\"pattern\":\"$(json_re "$regex")\",\"limit\":1e9}" -j 1)
t_re_rg=$(best_of rg --json --line-number --color=never --hidden -- "$regex" "$tree")
t_re_rg1=$(best_of rg -j1 --json --line-number --color=never --hidden -- "$regex" "$tree")
t_de=$(best_of "$tb" "$tree" grep "{\"pattern\":\"$(json_re "$dense")\",\"limit\":1e9}")
t_de1=$(best_of "$tb" "$tree" grep "{\"pattern\":\"$(json_re "$dense")\",\"limit\":1e9}" -j 1)
t_de_rg=$(best_of rg --json --line-number --color=never --hidden -- "$dense" "$tree")
t_de_rg1=$(best_of rg -j1 --json --line-number --color=never --hidden -- "$dense" "$tree")
t_find=$(best_of "$tb" "$tree" find "{\"pattern\":\"$glob\",\"limit\":0}")
t_find_fd=$(best_of fdfind --glob --color=never --hidden -- "$glob" "$tree")
t_find_fd1=$(best_of fdfind -j1 --glob --color=never --hidden -- "$glob" "$tree")
t_tr=$(best_of toolread "$literal")
t_tr1=$(best_of toolread "$literal" "$tr" -j 1)
t_tr_rg1=$(best_of rg -uu -j1 --fixed-strings -- "$literal" "$tree")
t_tr_rg=$(best_of rg -uu --fixed-strings -- "$literal" "$tree")
if [[ -n $tb0 ]]; then
  t_lit0=$(best_of "$tb0" "$tree" grep "{\"pattern\":\"$literal\",\"literal\":true,\"limit\":1e9}")
  t_de0=$(best_of "$tb0" "$tree" grep "{\"pattern\":\"$(json_re "$dense")\",\"limit\":1e9}")
  t_tr0=$(best_of toolread "$literal" "$tr0")
fi

# CPU seconds (perf stat task-clock, every thread, user + system), the least of $runs rounds in
# which the commands take turns: what other work on the machine moves least. For the dense regex
# on every core the total is what matters (the wall clock is about half of it when both threads
# are busy and the machine idle); for mf-toolread, one thread against one.
declare -A cpu=()
if command -v perf >/dev/null; then
  cpu_once() { perf stat -x, -e task-clock -- "$@" 2>&1 >/dev/null | awk -F, '$3 ~ /task-clock/ { printf "%.3f", $1 / 1000 }'; }
  keep() { cpu[$1]=$(awk -v a="${cpu[$1]:-}" -v b="$2" 'BEGIN { printf "%.3f", (a == "" || b < a) ? b : a }'); }
  de_args="{\"pattern\":\"$(json_re "$dense")\",\"limit\":1e9}"
  tr_args=(search --root "$tree" --query "$literal" --max-files 1000000000 --max-bytes 1000000000000
    --max-matches 1000000000)
  for ((i = 0; i < runs; i++)); do
    keep de "$(cpu_once "$tb" "$tree" grep "$de_args")"
    keep de_rg "$(cpu_once rg --json --line-number --color=never --hidden -- "$dense" "$tree")"
    keep tr1 "$(cpu_once "$tr" "${tr_args[@]}" -j 1)"
    keep tr_rg1 "$(cpu_once rg -uu -j1 --fixed-strings -- "$literal" "$tree")"
    if [[ -n $tb0 ]]; then
      keep de0 "$(cpu_once "$tb0" "$tree" grep "$de_args")"
      keep tr10 "$(cpu_once "$tr0" "${tr_args[@]}" -j 1)"
    fi
  done
fi

# ratio PEER OURS: peer seconds / our seconds.
ratio() { awk -v p="$1" -v o="$2" 'BEGIN { printf "%.2fx", (o > 0) ? p / o : 0 }'; }

echo "search_bench: $files files, $bytes bytes, $(nproc) cores, best of $runs (ratio = peer s / ours s)"
printf '%-26s %9s %10s %14s\n' command seconds MB/s "ratio vs peer"
row "grep literal (ours)" "$t_lit" "$t_lit_rg"
row "rg -F" "$t_lit_rg" ""
row "grep literal -j1 (ours)" "$t_lit1" "$t_lit_rg1"
row "rg -F -j1" "$t_lit_rg1" ""
row "grep regex (ours)" "$t_re" "$t_re_rg"
row "rg" "$t_re_rg" ""
row "grep regex -j1 (ours)" "$t_re1" "$t_re_rg1"
row "rg -j1" "$t_re_rg1" ""
row "grep dense regex (ours)" "$t_de" "$t_de_rg"
row "rg" "$t_de_rg" ""
row "grep dense -j1 (ours)" "$t_de1" "$t_de_rg1"
row "rg -j1" "$t_de_rg1" ""
row "find glob (ours)" "$t_find" "$t_find_fd"
row "fdfind" "$t_find_fd" ""
row "fdfind -j1" "$t_find_fd1" ""
row "mf-toolread search" "$t_tr" "$t_tr_rg"
row "rg -uu -F" "$t_tr_rg" ""
row "mf-toolread search -j1" "$t_tr1" "$t_tr_rg1"
row "rg -uu -F -j1" "$t_tr_rg1" ""
if [[ -n $tb0 ]]; then
  echo "MF_BIN_BEFORE -> MF_BIN -j 1 -> MF_BIN (speed-up): grep literal ${t_lit0} -> ${t_lit1} -> ${t_lit} s ($(ratio "$t_lit0" "$t_lit1"), $(ratio "$t_lit0" "$t_lit")), dense regex ${t_de0} -> ${t_de1} -> ${t_de} s ($(ratio "$t_de0" "$t_de1"), $(ratio "$t_de0" "$t_de")), mf-toolread ${t_tr0} -> ${t_tr1} -> ${t_tr} s ($(ratio "$t_tr0" "$t_tr1"), $(ratio "$t_tr0" "$t_tr"))"
fi
echo "one thread each (ours -j 1 / peer -j1): literal $(ratio "$t_lit_rg1" "$t_lit1"), regex $(ratio "$t_re_rg1" "$t_re1"), dense regex $(ratio "$t_de_rg1" "$t_de1"), mf-toolread $(ratio "$t_tr_rg1" "$t_tr1")"
if [[ -n ${cpu[de]:-} ]]; then
  echo "CPU seconds, least of $runs interleaved rounds: dense regex ours ${cpu[de]} (before ${cpu[de0]:--}) vs rg ${cpu[de_rg]} ($(ratio "${cpu[de_rg]}" "${cpu[de]}")); mf-toolread -j 1 ${cpu[tr1]} (before ${cpu[tr10]:--}) vs rg -uu -F -j1 ${cpu[tr_rg1]} ($(ratio "${cpu[tr_rg1]}" "${cpu[tr1]}"))"
fi
echo "every core each: literal $(ratio "$t_lit_rg" "$t_lit"), regex $(ratio "$t_re_rg" "$t_re"), dense regex $(ratio "$t_de_rg" "$t_de"), find $(ratio "$t_find_fd" "$t_find"), mf-toolread $(ratio "$t_tr_rg" "$t_tr")"
