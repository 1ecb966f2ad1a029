#!/usr/bin/env bash
# Installs the Debian packages the build, tests and benchmarks need, then the YAML test suite
# (scripts/fetch-yaml-test-suite.sh, into a cache directory outside the source tree). Idempotent:
# when everything is present it only asks dpkg and the cache and returns in well under a second.
set -euo pipefail

packages=(
  cmake make g++ pkg-config git ccache
  clang libclang-rt-14-dev            # libFuzzer and the sanitizer runtimes
  libboost-dev libboost-program-options-dev libboost-filesystem-dev
  rapidjson-dev libyaml-cpp-dev liblmdb-dev libcurl4-openssl-dev libssl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libutf8proc-dev libre2-dev          # the tool pack: NFKC for edit, the regex engine of grep
  bubblewrap                          # the opt-in bash sandbox (tested when present)
  jq                                  # peer in bench/run.sh, helper in tests/cli
  munge slurmctld slurmd slurm-client # tests/cli/slurm.sh starts a single-node Slurm cluster
  curl                                # tests/cli/lib/wire.bash talks to the loopback wire server
  time                                # /usr/bin/time: peak RSS in tests/cli and bench/
  bsdutils                            # script(1): tests/cli/progress.sh runs tools on a terminal
  python3                             # tests/layers (the include check), bench generators
  python3-yaml                        # tests/cli/k8s_job.sh reads the Job manifest in the docs
  python3-securesystemslib python3-cryptography python3-nacl  # tests/cli/audit_sign.sh interop
  nodejs                              # with npm, fetches the YAML test suite (tests/conformance)
  ripgrep fd-find                     # peers of grep and find in bench/
  strace                              # tests/cli/syscalls.sh counts opens, reads and syncs
  chromium                            # tests/cli/eval_report.sh, report_browser.sh: the pages headless
  libxml2-utils                       # xmllint: tests/cli/eval_junit.sh validates the JUnit XML
  man-db groff-base                   # tests/cli/help.sh and install.sh render the man pages
  zsh fish                            # tests/cli/completion.sh runs the zsh and fish completions
)
# Debian's npm package; a nodejs that bundles npm (NodeSource) conflicts with it.
command -v npm >/dev/null || packages+=(npm)

installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${packages[@]}" 2>/dev/null |
            awk '$2 == "installed" { sub(/:.*/, "", $1); print $1 }' || true)
missing=()
for p in "${packages[@]}"; do
  grep -qx "$p" <<<"$installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

"$(dirname "$0")/fetch-yaml-test-suite.sh"
"$(dirname "$0")/fetch-mcp-servers.sh"
