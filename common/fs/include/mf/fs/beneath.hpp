// Confinement beneath a directory descriptor: every path the product opens on a user's behalf
// (mf-toolread's root, the tool pack's workspace) is resolved by the kernel (openat2
// RESOLVE_BENEATH) or by a component walk that never follows a link out of the directory.
// Containment is never decided by comparing path strings. Decisions: docs/toolread.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mf/diag/diagnostic.hpp"

namespace mf::fs {

// How a relative path is resolved beneath the root. Auto uses openat2 and falls back to the walk
// when the kernel lacks it (ENOSYS); tests force either one.
enum class Resolver : std::uint8_t { Auto, Openat2, Walk };

// Lexically normalizes a root-relative path: drops "." and empty components, resolves ".." against
// the components before it. Refuses (MF-T001) empty, absolute, NUL-bearing, non-UTF-8 and overlong
// paths, and (MF-T002) a ".." that would climb above the root. "." normalizes to "".
Result<std::string> normalize_relative(std::string_view path);

// Opens `relative` (normalized, or "" for the root itself) beneath the directory `root_fd` with
// open(2) `flags`; never follows a symlink out of the root, nor a magic link. Returns the new
// descriptor, or -errno: EXDEV for an escape, ELOOP for a link loop or magic link, ENOENT, ...
int open_beneath(int root_fd, std::string_view relative, int flags,
                 Resolver resolver = Resolver::Auto);

// The fallback resolver: walks component by component from root_fd with O_NOFOLLOW, expanding
// each symlink itself (absolute targets and ".." above the root are EXDEV; over 40 links ELOOP).
int open_beneath_walk(int root_fd, std::string_view relative, int flags);

// openat(2) of one name with O_CLOEXEC added, retried on EINTR; returns -1 with errno set.
int openat_retry(int dirfd, const char* name, int flags);

}  // namespace mf::fs
