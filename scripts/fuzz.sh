#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) in build-fuzz/ and fuzzes each of them (the strict
# JSON reader, its tree-less fast path against it, the strict YAML front end, tool-call rescue, the live backends' wire codec, the
# projection's packer against brute force, the whole projection compiler, Millforge's hashing form
# and plan loader) for an equal share
# of MF_FUZZ_SECONDS (default 60). New
# corpus entries go to a temporary directory; the committed seeds in tests/fuzz/corpus/<name> are only
# read, so a run never dirties the checkout.
# Exit status: 0 when no crash was found, non-zero otherwise (the crashing input is kept, see below).
#
# Environment: MF_FUZZ_SECONDS, MF_FUZZ_BUILD (build dir), MF_FUZZ_ARTIFACTS (where crash-*/leak-*/
# timeout-* inputs are written; default $MF_FUZZ_BUILD/fuzz-artifacts), MF_JOBS (build parallelism, 2).
# --build-only builds the targets and stops (CI times the build and the fuzzing apart).
set -euo pipefail
build_only=0
[[ ${1:-} == --build-only ]] && build_only=1

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${MF_FUZZ_BUILD:-$root/build-fuzz}
seconds=${MF_FUZZ_SECONDS:-60}
jobs=${MF_JOBS:-2}
artifacts=${MF_FUZZ_ARTIFACTS:-$build/fuzz-artifacts}
targets=(json_reader tape_differential yaml_reader rescue wire_stream pack projection millforge_form)

CC=clang CXX=clang++ cmake -S "$root" -B "$build" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DMF_FUZZ=ON -DMF_SANITIZE=address,undefined -DMF_BUILD_TESTS=ON -DMF_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target "${targets[@]/%/_fuzz}" -j "$jobs"
(( build_only == 0 )) || exit 0

work=$(mktemp -d "${TMPDIR:-/tmp}/mf-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$artifacts"
share=$(( seconds / ${#targets[@]} ))
(( share > 0 )) || share=1

for name in "${targets[@]}"; do
  target=${name}_fuzz
  seeds=$root/tests/fuzz/corpus/$name
  dict=()
  [[ -f $root/tests/fuzz/${name%%_*}.dict ]] && dict=(-dict="$root/tests/fuzz/${name%%_*}.dict")
  mkdir -p "$work/$name"
  echo "fuzz.sh: $target for ${share}s (seeds: $seeds, artifacts: $artifacts/)" >&2
  status=0
  ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1} \
  UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1} \
    "$build/bin/$target" "$work/$name" "$seeds" "${dict[@]}" \
    -max_total_time="$share" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/" -print_final_stats=1 || status=$?
  if [[ $status -ne 0 ]]; then
    echo "fuzz.sh: $target failed (exit $status); reproduce with:" >&2
    for f in "$artifacts"/crash-* "$artifacts"/leak-* "$artifacts"/timeout-* "$artifacts"/oom-*; do
      [[ -e $f ]] && echo "  $build/bin/$target $f" >&2
    done
    exit "$status"
  fi
  echo "fuzz.sh: $target: no crash in ${share}s; $(find "$work/$name" -type f | wc -l) new corpus entries (discarded)" >&2
done
