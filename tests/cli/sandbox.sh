#!/usr/bin/env bash
# The bubblewrap sandbox holds for any caller, root included (CI runs as root): the command runs as
# an unprivileged user in a new user namespace with no capabilities and no_new_privs, so it cannot
# remount the read-only root, unmount the private /tmp or /proc, or write a host file; it sees no
# host process and no network. Skipped only where bwrap cannot create its namespaces.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

mfrun="$MF_BIN/mf-run"
ws=$tmp/ws
host=$tmp/host
mkdir -p "$ws" "$host"
printf 'host\n' >"$host/secret.txt"
printf 'marker\n' >"$host/marker.txt"

sandboxed() {
  local command=$1
  "$mfrun" tool bash --workspace "$ws" --sandbox bwrap \
    --args "$(jq -cn --arg c "$command" '{command: $c}')" >"$tmp/out" 2>"$tmp/err" || true
  jq -r '.content[0].text' "$tmp/out"
}

probe=$(sandboxed 'echo ready')
if grep -q 'cannot create its namespaces\|not installed' <<<"$probe$(cat "$tmp/err")"; then
  echo "SKIP: sandbox.sh: bwrap is missing or cannot create namespaces here: $probe"
  exit 0
fi
[[ $probe == ready* ]] || fail "the sandbox does not run a plain command: $probe $(cat "$tmp/err")"

status=$(sandboxed 'grep -E "^(CapEff|CapPrm|CapBnd|CapAmb|NoNewPrivs):" /proc/self/status; echo "uid=$(id -u)"')
for cap in CapEff CapPrm CapBnd CapAmb; do
  grep -q "^$cap:[[:space:]]*0000000000000000$" <<<"$status" ||
    fail "the sandboxed command keeps capabilities ($(grep "^$cap" <<<"$status"))"
done
grep -q '^NoNewPrivs:[[:space:]]*1$' <<<"$status" || fail "no_new_privs is not set: $status"
grep -q '^uid=0$' <<<"$status" && fail "the sandboxed command runs as uid 0"

# The attacks that worked against a sandbox that kept root's capabilities.
out=$(sandboxed "mount -o remount,bind,rw / 2>&1; echo pwned > '$host/secret.txt' 2>&1;
                 mount -o remount,rw / 2>&1; echo pwned > '$host/secret.txt' 2>&1;
                 umount -l /tmp 2>&1; cat '$host/marker.txt' 2>&1;
                 umount -l /proc 2>&1; echo \"pid1=\$(cat /proc/1/comm)\";
                 unshare -Urm sh -c 'mount -o remount,rw / && echo pwned > $host/secret.txt' 2>&1;
                 echo done")
[[ $(cat "$host/secret.txt") == host ]] || fail "a sandboxed command changed a host file: $out"
grep -q '^marker$' <<<"$out" && fail "unmounting /tmp exposed the host's /tmp: $out"
grep -q '^pid1=bwrap$' <<<"$out" || fail "the sandbox sees a PID 1 other than its own: $out"
grep -q '^done$' <<<"$out" || fail "the attack script did not run to its end: $out"

# A seccomp filter is installed, and it refuses what the namespace and the dropped capabilities
# would allow: ptrace(PTRACE_TRACEME) succeeds for any process outside (checked unsandboxed first)
# and is refused inside.
status=$(sandboxed 'grep -E "^Seccomp(_filters)?:" /proc/self/status')
grep -q '^Seccomp:[[:space:]]*2$' <<<"$status" || fail "no seccomp filter in the sandbox: $status"
traceme='python3 -c "import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); rc = libc.ptrace(0, 0, 0, 0); print(\"ptrace\", rc, os.strerror(ctypes.get_errno()) if rc else \"allowed\")"'
out=$("$mfrun" tool bash --workspace "$ws" --args "$(jq -cn --arg c "$traceme" '{command: $c}')" |
      jq -r '.content[0].text')
grep -q '^ptrace 0 allowed' <<<"$out" || fail "PTRACE_TRACEME fails even without the sandbox: $out"
out=$(sandboxed "$traceme")
grep -q '^ptrace -1 Operation not permitted' <<<"$out" || fail "the filter let ptrace through: $out"
out=$(sandboxed 'unshare -n true 2>&1; echo "rc=$?"')
grep -q 'rc=1' <<<"$out" || fail "unshare was not refused: $out"

# Nested user namespaces are refused, so no capability can be regained inside.
out=$(sandboxed 'unshare -U true 2>&1 && echo nested-ok')
grep -q nested-ok <<<"$out" && fail "a nested user namespace could be created: $out"

# The workspace stays writable, and what is written there belongs to the caller, not to nobody.
out=$(sandboxed 'echo inside > made.txt && echo wrote')
grep -q wrote <<<"$out" || fail "the sandboxed command cannot write its workspace: $out"
[[ $(stat -c %u "$ws/made.txt") == "$(id -u)" ]] || fail "the workspace file is not owned by the caller"

# No network at all: only a loopback that is down.
out=$(sandboxed 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "')
[[ $out == lo ]] || fail "the sandbox has network interfaces: $out"
echo "sandbox: ok"
