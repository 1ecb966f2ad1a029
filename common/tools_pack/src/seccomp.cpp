// The bash sandbox's seccomp filter (seccomp.hpp): the BPF program, and the descriptor bwrap reads
// it from.
#include "seccomp.hpp"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
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

sock_filter stmt(std::uint16_t code, std::uint32_t k) {
  return BPF_STMT(code, k);
}
sock_filter jump(std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
  return BPF_JUMP(code, k, jt, jf);
}

std::vector<sock_filter> program() {
  const auto ret_errno = [](int e) {
    return stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<std::uint32_t>(e) & 0xffff));
  };
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
  for (const long nr : kDenied) {
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1));
    p.push_back(ret_errno(EPERM));
  }
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1));
  p.push_back(ret_errno(ENOSYS));
  // clone: the flags are its first argument (the low 32 bits hold every CLONE_NEW* flag).
  p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 1, 0));
  p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
  p.push_back(stmt(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0])));
  p.push_back(jump(BPF_JMP | BPF_JSET | BPF_K, kNamespaceFlags, 0, 1));
  p.push_back(ret_errno(EPERM));
  p.push_back(stmt(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
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
