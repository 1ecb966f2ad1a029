// The bash sandbox's seccomp filter (seccomp.hpp): the BPF program, and the descriptor bwrap reads
// it from.
#include "seccomp.hpp"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <iterator>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"

namespace mf::tools {
namespace {

#if defined(__x86_64__)
constexpr std::uint32_t kArch = AUDIT_ARCH_X86_64;
constexpr std::uint32_t kX32Bit = 0x40000000;  // __X32_SYSCALL_BIT
#elif defined(__aarch64__)
constexpr std::uint32_t kArch = AUDIT_ARCH_AARCH64;
constexpr std::uint32_t kX32Bit = 0;
#else
#define MF_NO_SECCOMP_FILTER 1
#endif

#ifndef MF_NO_SECCOMP_FILTER

// Refused with EPERM.
constexpr long kDenied[] = {
    SYS_mount,
    SYS_umount2,
    SYS_pivot_root,
    SYS_chroot,
    SYS_unshare,
    SYS_setns,
    SYS_ptrace,
    SYS_process_vm_readv,
    SYS_process_vm_writev,
    SYS_kexec_load,
    SYS_kexec_file_load,
    SYS_init_module,
    SYS_finit_module,
    SYS_delete_module,
    SYS_bpf,
    SYS_perf_event_open,
    SYS_keyctl,
    SYS_add_key,
    SYS_request_key,
    SYS_userfaultfd,
    SYS_open_by_handle_at,
    SYS_name_to_handle_at,
    SYS_reboot,
    SYS_swapon,
    SYS_swapoff,
    SYS_acct,
    SYS_quotactl,
    SYS_syslog,
    SYS_fsopen,
    SYS_fsmount,
    SYS_fsconfig,
    SYS_fspick,
    SYS_move_mount,
    SYS_open_tree,
    SYS_mount_setattr,
#if defined(__x86_64__)
    SYS_iopl,
    SYS_ioperm,
#endif
};

constexpr std::uint32_t kNamespaceFlags = CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID |
                                          CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS |
                                          CLONE_NEWCGROUP;

// Refused with ENOSYS, as an older kernel would, so that programs fall back: io_uring runs opens
// and mode changes this filter never sees, and openat2 takes its mode in a struct it cannot read
// (libc then uses openat).
constexpr long kAbsent[] = {SYS_io_uring_setup, SYS_io_uring_enter, SYS_io_uring_register,
                            SYS_openat2};

// fchmodat2 (Linux 6.6) has the same number on every architecture; older headers lack it.
#ifdef SYS_fchmodat2
constexpr long kFchmodat2 = SYS_fchmodat2;
#else
constexpr long kFchmodat2 = 452;
#endif

constexpr std::uint32_t kSetIdBits = S_ISUID | S_ISGID;
// The open flags under which the mode argument is used: O_CREAT, and O_TMPFILE's own bit.
constexpr std::uint32_t kCreateFlags = O_CREAT | (O_TMPFILE & ~O_DIRECTORY);
constexpr std::uint8_t kNoArg = 0xff;

// A call whose mode argument (at index `mode`) can put a setuid or setgid bit on a file; `flags`
// is the index of the open flags that decide whether the mode is used at all (kNoArg: always).
struct ModeCall {
  long nr;
  std::uint8_t mode;
  std::uint8_t flags;
};
constexpr ModeCall kModeCalls[] = {
#ifdef SYS_chmod
    {SYS_chmod, 1, kNoArg},
#endif
    {SYS_fchmod, 1, kNoArg},  {SYS_fchmodat, 2, kNoArg}, {kFchmodat2, 2, kNoArg},
#ifdef SYS_open
    {SYS_open, 2, 1},
#endif
    {SYS_openat, 3, 2},
#ifdef SYS_creat
    {SYS_creat, 1, kNoArg},
#endif
#ifdef SYS_mknod
    {SYS_mknod, 1, kNoArg},
#endif
    {SYS_mknodat, 2, kNoArg},
#ifdef SYS_mkdir
    {SYS_mkdir, 1, kNoArg},
#endif
    {SYS_mkdirat, 2, kNoArg},
};

// The socket families a sandboxed command may open: TCP/UDP (into a network namespace with only a
// downed loopback) and netlink (getaddrinfo and ip read their own namespace through it). Every
// other family, AF_UNIX first (it reaches any host socket whose path the sandbox can see),
// answers EAFNOSUPPORT, as for a family the kernel was built without.
constexpr std::uint32_t kSocketFamilies[] = {AF_INET, AF_INET6, AF_NETLINK};

sock_filter stmt(std::uint16_t code, std::uint32_t k) {
  return BPF_STMT(code, k);
}
sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
  return BPF_JUMP(code, k, jt, jf);
}
sock_filter ret_errno(int e) {
  return stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<std::uint32_t>(e) & 0xffff));
}
sock_filter allow() {
  return stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
}
// The low 32 bits of argument i (both architectures are little-endian): every argument inspected
// here is an int, a mode_t or a flag word.
sock_filter load_arg(std::uint8_t i) {
  return stmt(BPF_LD | BPF_W | BPF_ABS,
              static_cast<std::uint32_t>(offsetof(seccomp_data, args) + 8 * i));
}

// Appends `body` for system call `nr`: skipped with the number still loaded when the call is
// another one. Every path through a body returns.
void on_call(std::vector<sock_filter>& p, long nr, const std::vector<sock_filter>& body) {
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0,
                   static_cast<std::uint8_t>(body.size())));
  p.insert(p.end(), body.begin(), body.end());
}

std::vector<sock_filter> program() {
  std::vector<sock_filter> p;
  // Another ABI: refused outright.
  p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)));
  if (kX32Bit != 0) {
    p.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, kX32Bit, 0, 1));
    p.push_back(ret_errno(EPERM));
  }
  for (const long nr : kDenied) on_call(p, nr, {ret_errno(EPERM)});
  for (const long nr : kAbsent) on_call(p, nr, {ret_errno(ENOSYS)});
  on_call(p, SYS_clone3, {ret_errno(ENOSYS)});
  // clone: the flags are its first argument (the low 32 bits hold every CLONE_NEW* flag).
  on_call(p, SYS_clone,
          {load_arg(0), jump(BPF_JMP | BPF_JSET | BPF_K, kNamespaceFlags, 0, 1), ret_errno(EPERM),
           allow()});
  // A setuid or setgid mode: EPERM, whether it is set on an existing file or given at creation.
  for (const ModeCall& c : kModeCalls) {
    std::vector<sock_filter> body;
    if (c.flags != kNoArg) {
      body.push_back(load_arg(c.flags));
      body.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, kCreateFlags, 1, 0));
      body.push_back(allow());
    }
    body.push_back(load_arg(c.mode));
    body.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, kSetIdBits, 0, 1));
    body.push_back(ret_errno(EPERM));
    body.push_back(allow());
    on_call(p, c.nr, body);
  }
  // socket: only the families above.
  std::vector<sock_filter> socket_body{load_arg(0)};
  for (std::size_t i = 0; i < std::size(kSocketFamilies); ++i) {
    const auto to_allow = static_cast<std::uint8_t>(std::size(kSocketFamilies) - i);
    socket_body.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kSocketFamilies[i], to_allow, 0));
  }
  socket_body.push_back(ret_errno(EAFNOSUPPORT));
  socket_body.push_back(allow());
  on_call(p, SYS_socket, socket_body);
  // socketpair: AF_UNIX stream and seqpacket pairs only. They are connected to each other for
  // good; a datagram pair could still send to (or connect to) any path-named host socket.
  on_call(
      p, SYS_socketpair,
      {load_arg(0), jump(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 1, 0), ret_errno(EAFNOSUPPORT),
       load_arg(1), stmt(BPF_ALU | BPF_AND | BPF_K, 0xf),  // SOCK_TYPE_MASK: no flags
       jump(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 2, 0),
       jump(BPF_JMP | BPF_JEQ | BPF_K, SOCK_SEQPACKET, 1, 0), ret_errno(EAFNOSUPPORT), allow()});
  p.push_back(allow());
  return p;
}

#endif

}  // namespace

Result<int> seccomp_filter_fd() {
#ifdef MF_NO_SECCOMP_FILTER
  return diag::error(diag::codes::kInternal, "no seccomp filter for this architecture");
#else
  const std::vector<sock_filter> p = program();
  const int fd = ::memfd_create("mf-sandbox-seccomp", MFD_CLOEXEC);
  if (fd < 0) {
    return diag::error(diag::codes::kInternal,
                       std::string("cannot create the seccomp filter: ") + std::strerror(errno));
  }
  const std::string_view bytes(reinterpret_cast<const char*>(p.data()),
                               p.size() * sizeof(sock_filter));
  if (Status w = io::write_all(fd, bytes); !w || ::lseek(fd, 0, SEEK_SET) != 0) {
    ::close(fd);
    return diag::error(diag::codes::kInternal, "cannot write the seccomp filter");
  }
  return fd;
#endif
}

}  // namespace mf::tools
