// Root-confined, bounded source reading and searching (SPEC §9), behind mf-toolread.
// Every file is opened beneath a directory descriptor of the canonical root by the kernel
// (openat2 RESOLVE_BENEATH) or by a component walk that never follows a link out of the root;
// containment is never decided by comparing path strings. Format and decisions: docs/toolread.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::source {

inline constexpr std::uint64_t kMaxFileBytes = 1u << 20;  // files above are refused or skipped
inline constexpr std::int64_t kMaxSliceLines = 200;       // widest slice one request may ask for

// How a relative path is resolved beneath the root. Auto uses openat2 and falls back to the walk
// when the kernel lacks it (ENOSYS); tests force either one.
enum class Resolver : std::uint8_t { Auto, Openat2, Walk };

struct SliceRequest {
  std::string root;  // the confining directory; canonicalized (realpath) before use
  std::string path;  // relative to the root
  std::optional<std::int64_t> start_line;  // 1-based, inclusive; default 1
  std::optional<std::int64_t> end_line;    // inclusive; default the last line; clamped to it
  Resolver resolver = Resolver::Auto;
};

struct SourceSlice {
  std::string path;  // normalized relative path (no ".", "..", empty or trailing components)
  std::int64_t start_line = 1;
  std::int64_t end_line = 0;  // an empty file reads as lines 1..0
  std::int64_t total_lines = 0;
  std::string file_sha256;  // lowercase hex SHA-256 of the whole file's bytes
  std::string text;         // the exact bytes of the lines, newlines included; valid UTF-8
};

Result<SourceSlice> read_slice(const SliceRequest& request);
// {"bytes","end_line","file_sha256","path","start_line","text","total_lines"}
json::Value to_json(const SourceSlice& slice);

struct SearchRequest {
  std::string root;
  std::string path;   // subdirectory to search, relative to the root; empty = the root
  std::string query;  // literal substring, matched line by line; non-empty, no '\n'
  std::uint64_t max_files = 10000;      // files whose content is read
  std::uint64_t max_bytes = 64u << 20;  // total bytes read
  std::uint64_t max_matches = 100;      // matching lines reported
  std::uint64_t max_entries = 1000000;  // directory entries examined (not on the CLI)
  std::uint64_t max_depth = 64;         // directory nesting below the search start
  std::uint64_t max_line_bytes = 512;   // a reported line is cut at this many bytes
  Resolver resolver = Resolver::Auto;
};

struct SearchMatch {
  std::string path;  // relative to the root
  std::int64_t line = 0;
  std::string text;  // the line without its '\n', cut at max_line_bytes on a UTF-8 boundary
};

struct SearchResult {
  std::string root_relative;  // the searched directory relative to the root ("." = the root)
  std::string query;
  std::vector<SearchMatch> matches;  // ordered by path bytes, then line
  bool truncated = false;            // a bound stopped the search before it was complete
  std::uint64_t files_scanned = 0;
};

Result<SearchResult> search(const SearchRequest& request);
// {"files_scanned","matches":[{"line","path","text"}],"query","root_relative","truncated"}
json::Value to_json(const SearchResult& result);

// --- Confinement primitives, public so tests can drive each resolver directly. ---

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

// True when `bytes` is well-formed UTF-8 (no overlongs, surrogates or code points over U+10FFFF).
bool valid_utf8(std::string_view bytes);

}  // namespace mf::source
