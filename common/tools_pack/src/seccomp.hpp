// The sandbox's seccomp filter (docs/tools.md, "The bash sandbox"): a classic BPF program that
// bwrap installs (--seccomp FD) before it runs the command. It refuses, with EPERM, the system
// calls a sandboxed command never needs and that an escape would: mounting and namespaces (mount,
// umount2, pivot_root, chroot, unshare, setns, clone with a namespace flag; clone3, whose flags
// cannot be inspected, gets ENOSYS so libc falls back to clone), tracing other processes, loading
// kernel code or BPF, keyrings, perf events, userfaultfd, handles that bypass paths, reboot, swap
// and accounting; and any setuid or setgid mode, on an existing file (chmod family) or at creation
// (open with O_CREAT or O_TMPFILE, creat, mknod, mkdir). socket() is refused with EAFNOSUPPORT for
// every family but AF_INET, AF_INET6 and AF_NETLINK, socketpair() for all but AF_UNIX stream and
// seqpacket pairs. io_uring and openat2, which carry opens and modes the filter cannot read, answer
// ENOSYS. Calls of another ABI than the build's (x32, i386 on x86-64) are refused too. It holds on
// top of the user namespace and dropped capabilities, which refuse most of the first group already.
#pragma once

#include "mf/diag/diagnostic.hpp"

namespace mf::tools {

// A new memory file (close-on-exec) holding the filter at offset 0: pass its number to bwrap's
// --seccomp, hand it to the child (ShellCommand::inherit_fds) and close it once the child has run.
// One per call (bwrap reads it to the end). MF-I001 when there is no filter for this architecture.
Result<int> seccomp_filter_fd();

}  // namespace mf::tools
