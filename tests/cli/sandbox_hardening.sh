#!/usr/bin/env bash
# What the bubblewrap sandbox refuses beyond its namespaces (docs/tools.md, "The bwrap sandbox"), run
# as root like CI: no setuid/setgid file survives a sandboxed call (the seccomp filter refuses every
# mode with those bits, and a scan after the call strips any left); no host Unix socket is reachable
# (private /run and /var/tmp, socket() only for AF_INET, AF_INET6 and AF_NETLINK); io_uring and
# openat2 answer ENOSYS. Each attack is first shown to work outside the sandbox. Skipped only where
# bwrap cannot create its namespaces.
set -euo pipefail
source "$(dirname "$0")/lib/common.bash"

mfrun="$MF_BIN/mf-run"
ws=$tmp/ws
mkdir -p "$ws"

# tool [--sandbox bwrap] COMMAND: the call's text; its JSON stays in $tmp/out.
tool() {
  local flags=()
  if [[ $1 == --sandbox ]]; then
    flags=(--sandbox bwrap)
    shift
  fi
  "$mfrun" tool bash --workspace "$ws" "${flags[@]}" \
    --args "$(jq -cn --arg c "$1" '{command: $c}')" >"$tmp/out" 2>"$tmp/err" || true
  jq -r '.content[0].text' "$tmp/out"
}
sandboxed() { tool --sandbox "$1"; }

probe=$(sandboxed 'echo ready')
if grep -q 'cannot create its namespaces\|not installed' <<<"$probe$(cat "$tmp/err")"; then
  echo "SKIP: sandbox_hardening.sh: bwrap is missing or cannot create namespaces here: $probe"
  exit 0
fi
[[ $probe == ready* ]] || fail "the sandbox does not run a plain command: $probe $(cat "$tmp/err")"
[[ $(sandboxed 'python3 -c "print(6 * 7)"') == 42* ]] || fail "python3 does not run in the sandbox"

setuid_files() { find "$ws" -perm /6000 -printf '%m %p\n'; }

# --- setuid and setgid plants --------------------------------------------------------------------
# Each plant works outside the sandbox (as root, the file is setuid root: a way to root for anyone
# who can reach the workspace) ...
plants=(
  'cp /bin/sh p1 && chmod 4755 p1'
  'cp /bin/sh p2 && chmod u+s p2'
  'cp /bin/sh p3 && chmod g+s p3'
  'install -m 4755 /bin/sh p4'
  "python3 -c 'import os; os.close(os.open(\"p5\", os.O_CREAT | os.O_WRONLY, 0o4755))'"
  "python3 -c 'import os; os.close(os.open(\".\", os.O_TMPFILE | os.O_WRONLY, 0o6755))'"
  'mkdir -m 2755 p6'
)
tool 'cp /bin/sh p1 && chmod 4755 p1 && install -m 4755 /bin/sh p4 && mkdir -m 2755 p6' >/dev/null
[[ $(setuid_files | wc -l) == 3 ]] || fail "the plants do not work outside the sandbox: $(setuid_files)"
rm -rf "${ws:?}"/*

# ... and inside, the filter refuses the mode (the command fails) and no such file is left.
for plant in "${plants[@]}"; do
  out=$(sandboxed "$plant 2>&1; echo \"rc=\$?\"")
  grep -q '^rc=0$' <<<"$out" && fail "the sandbox let a setuid/setgid mode through ($plant): $out"
  [[ -z $(setuid_files) ]] || fail "a setuid/setgid file survived the call ($plant): $(setuid_files)"
done
# fchmodat2 returns the error rather than failing the command.
out=$(sandboxed "cp /bin/sh p7; python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); print(libc.syscall(452, -100, b\"p7\", 0o4755, 0), os.strerror(ctypes.get_errno()))'")
grep -q '^-1 Operation not permitted' <<<"$out" || fail "fchmodat2 set a setuid mode: $out"
[[ -z $(setuid_files) ]] || fail "fchmodat2 left a setuid file: $(setuid_files)"

# Ordinary modes still work.
out=$(sandboxed 'cp /bin/sh n && chmod 700 n && chmod 755 n && install -m 750 n m && mkdir -m 1777 d &&
                 stat -c "%a %n" n m d')
[[ $out == $'755 n\n750 m\n1777 d' ]] || fail "ordinary modes no longer work in the sandbox: $out"
rm -rf "${ws:?}"/*

# A setuid or setgid file that is there when the call ends (here planted from outside) loses the bits,
# and the result says so.
cp /bin/sh "$ws/planted"
chmod 4755 "$ws/planted"
mkdir -p "$ws/sub/shared"
chmod 2775 "$ws/sub/shared"
out=$(sandboxed 'echo hello')
[[ -z $(setuid_files) ]] || fail "the scan after the call left setuid/setgid files: $(setuid_files)"
[[ $(stat -c %a "$ws/planted") == 755 && $(stat -c %a "$ws/sub/shared") == 775 ]] ||
  fail "the scan changed more than the setuid/setgid bits"
grep -q '^hello$' <<<"$out" || fail "the output is missing: $out"
grep -qF 'removed the setuid/setgid bits of 2 files: planted (4755 -> 755), sub/shared (2775 -> 775)' <<<"$out" ||
  fail "the result does not say the bits were removed: $out"
[[ $(sandboxed 'echo again') == again ]] || fail "a clean workspace still gets a notice"
rm -rf "${ws:?}"/*

# --- host Unix sockets -----------------------------------------------------------------------------
# Listeners owned by root, mode 0600, in a fresh directory outside the workspace, /tmp and /run (in
# the build directory, unless that is private in the sandbox too or too deep for a socket path) and
# in one under /run. Each logs every connection and datagram it gets.
sock_base=$(cd "$MF_BIN" && pwd)
case $sock_base in /tmp/* | /var/tmp/* | /run/* | /dev/shm/*) sock_base=${HOME:-/root} ;; esac
((${#sock_base} < 70)) || sock_base=${HOME:-/root}
sock_dir=$(mktemp -d "$sock_base/sbx-sock-XXXXXX")
run_dir=$(mktemp -d /run/mf-sbx-XXXXXX)
listener=$tmp/listener.py
cat >"$listener" <<'PY'
import os, selectors, socket, sys
directory, log = sys.argv[1], sys.argv[2]
sel = selectors.DefaultSelector()
for kind, name in ((socket.SOCK_STREAM, "stream"), (socket.SOCK_DGRAM, "dgram")):
    s = socket.socket(socket.AF_UNIX, kind)
    path = os.path.join(directory, name)
    s.bind(path)
    os.chmod(path, 0o600)
    if kind == socket.SOCK_STREAM:
        s.listen(8)
    sel.register(s, selectors.EVENT_READ, name)
open(log, "a").close()
open(log + ".ready", "w").close()
while True:
    for key, _ in sel.select():
        if key.data == "stream":
            key.fileobj.accept()[0].close()
        else:
            key.fileobj.recv(100)
        with open(log, "a") as f:
            f.write(key.data + "\n")
PY
pids=()
cleanup_listeners() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$sock_dir" "$run_dir"
}
trap 'cleanup_listeners; [[ -n ${KEEP_TMP:-} ]] || rm -rf "$tmp"' EXIT
for dir in "$sock_dir" "$run_dir"; do
  python3 "$listener" "$dir" "$dir/log" &
  pids+=($!)
done
for dir in "$sock_dir" "$run_dir"; do
  for _ in $(seq 100); do [[ -e $dir/log.ready ]] && break; sleep 0.05; done
  [[ -e $dir/log.ready ]] || fail "the listener in $dir did not start"
done

reach='python3 -c "
import socket, sys
for d in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(d + \"/stream\"); print(\"connected\", d)
    except OSError as e:
        print(\"refused\", d, e.strerror)
    try:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        a.sendto(b\"x\", d + \"/dgram\"); print(\"sent\", d)
    except OSError as e:
        print(\"refused\", d, e.strerror)
" '"$sock_dir $run_dir"
out=$(tool "$reach")
# log_lines DIR N: waits (5 s at most) for the listener in DIR to have logged N lines; prints them.
log_lines() {
  for _ in $(seq 100); do
    [[ $(wc -l <"$1/log") -ge $2 ]] && break
    sleep 0.05
  done
  sort "$1/log" | tr '\n' ' '
}
[[ $(grep -c '^connected\|^sent' <<<"$out") == 4 ]] || fail "the listeners cannot be reached outside: $out"
for dir in "$sock_dir" "$run_dir"; do
  [[ $(log_lines "$dir" 2) == 'dgram stream ' ]] || fail "$dir did not log the connections"
done
out=$(sandboxed "$reach")
[[ $(grep -c '^refused' <<<"$out") == 4 ]] || fail "a host Unix socket is reachable from the sandbox: $out"
# Reached once more from outside: whatever the sandbox got through is logged by then.
tool "$reach" >/dev/null
for dir in "$sock_dir" "$run_dir"; do
  [[ $(log_lines "$dir" 4) == 'dgram dgram stream stream ' ]] || fail "the listener in $dir got something from the sandbox or missed the second round"
  sleep 0.2
  [[ $(wc -l <"$dir/log") == 4 ]] || fail "the listener in $dir got something from the sandbox"
done

# Private /run, /var/tmp and /dev/shm: a host file there is not seen.
touch "$run_dir/seen" "/dev/shm/mf-sbx-$$"
vartmp=$(mktemp -d /var/tmp/mf-sbx-XXXXXX)
out=$(sandboxed "ls $run_dir/seen $vartmp /dev/shm/mf-sbx-$$ 2>&1; find /run /var/tmp /dev/shm -mindepth 1 | wc -l")
rm -rf "/dev/shm/mf-sbx-$$" "$vartmp"
[[ $(grep -c 'No such file' <<<"$out") == 3 && $(tail -n1 <<<"$out") == 0 ]] ||
  fail "the sandbox sees the host's /run, /var/tmp or /dev/shm: $out"

# socket() works only for AF_INET, AF_INET6 and AF_NETLINK; a stream socketpair still works.
families='python3 -c "
import socket
for fam in (socket.AF_UNIX, socket.AF_VSOCK, socket.AF_ALG, socket.AF_PACKET, socket.AF_KEY, 45):
    try:
        socket.socket(fam, socket.SOCK_RAW if fam == socket.AF_PACKET else socket.SOCK_SEQPACKET if fam == socket.AF_ALG else socket.SOCK_STREAM if fam != socket.AF_KEY else socket.SOCK_RAW); print(fam, \"allowed\")
    except OSError as e:
        print(fam, e.strerror)
for fam in (socket.AF_INET, socket.AF_INET6):
    socket.socket(fam, socket.SOCK_STREAM); print(fam, \"ok\")
socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0); print(\"netlink ok\")
a, b = socket.socketpair(); a.send(b\"pair ok\"); print(b.recv(10).decode())
"'
out=$(sandboxed "$families")
[[ $(grep -c ' Address family not supported by protocol$' <<<"$out") == 6 ]] ||
  fail "a socket family other than inet, inet6 and netlink was not refused: $out"
[[ $(grep -c ' ok$' <<<"$out") == 4 ]] || fail "an allowed socket does not work: $out"

# --- io_uring and openat2 -----------------------------------------------------------------------
# io_uring submits opens and mode changes the filter cannot see; openat2 takes its mode in a struct
# the filter cannot read. Both answer ENOSYS, so programs fall back as on an older kernel.
uring='python3 -c "
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
params = ctypes.create_string_buffer(120)
for name, nr, args in ((\"setup\", 425, (1, params)), (\"enter\", 426, (-1, 0, 0, 0, 0, 0)),
                       (\"register\", 427, (-1, 0, 0, 0))):
    rc = libc.syscall(nr, *args)
    print(\"io_uring_\" + name, \"fd\" if rc >= 0 else os.strerror(ctypes.get_errno()))
how = ctypes.create_string_buffer(24)
rc = libc.syscall(437, -100, b\".\", how, 24)
print(\"openat2\", \"fd\" if rc >= 0 else os.strerror(ctypes.get_errno()))
"'
out=$(tool "$uring")
grep -q '^io_uring_setup fd$' <<<"$out" || fail "io_uring_setup does not work outside the sandbox: $out"
grep -q '^openat2 fd$' <<<"$out" || fail "openat2 does not work outside the sandbox: $out"
out=$(sandboxed "$uring")
[[ $(grep -c ' Function not implemented$' <<<"$out") == 4 ]] ||
  fail "io_uring or openat2 is not refused with ENOSYS in the sandbox: $out"

# --- what must keep working ----------------------------------------------------------------------
out=$(sandboxed 'export HOME=$PWD GIT_CONFIG_NOSYSTEM=1 &&
  git init -q repo && cd repo && echo one > a.txt && git add a.txt &&
  git -c user.name=t -c user.email=t@t commit -qm first && git log --format=%s && git status --short | wc -l')
[[ $out == $'first\n0' ]] || fail "git does not work in the sandbox: $out"
[[ -z $(setuid_files) ]] || fail "git left a setuid/setgid file: $(setuid_files)"
echo "sandbox_hardening: ok"
