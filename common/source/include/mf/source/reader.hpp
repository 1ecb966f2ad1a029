// Root-confined, bounded source reading and searching (docs/toolread.md), behind mf-toolread.
// Every file is opened beneath a descriptor of the canonical root (mf/fs/beneath.hpp).
// Format and decisions: docs/toolread.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/fs/beneath.hpp"
#include "mf/json/value.hpp"

namespace mf::source {

inline constexpr std::uint64_t kMaxFileBytes = 1u << 20;  // files above are refused or skipped
inline constexpr std::int64_t kMaxSliceLines = 200;       // widest slice one request may ask for

struct SliceRequest {
  std::string root;  // the confining directory; canonicalized (realpath) before use
  std::string path;  // relative to the root
  std::optional<std::int64_t> start_line;  // 1-based, inclusive; default 1
  std::optional<std::int64_t> end_line;    // inclusive; default the last line; clamped to it
  fs::Resolver resolver = fs::Resolver::Auto;
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
  // Threads reading files: 0 = the online CPUs (at most 8), 1 = the calling thread only. The
  // result is the same at every count.
  std::size_t jobs = 0;
  fs::Resolver resolver = fs::Resolver::Auto;
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

}  // namespace mf::source
