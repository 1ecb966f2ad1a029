// The directory walk behind grep and find: what ripgrep and fd would visit, computed natively.
// Pi runs both with --hidden and without following links, so hidden entries are visited, symlinks
// are reported but never followed, and .gitignore files are read per directory with the ignore
// crate's scoping. Internal to mf_tools_pack (and its unit tests); decisions: docs/tools.md.
// Globs: glob.cpp; ignore rules: ignore.cpp; the walk: walker.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}

namespace mf::tools {
class Workspace;
}

namespace mf::tools::walk {

// Bounds of one walk. Neither tool has one in Pi; they keep a pathological tree (a link farm, a
// bind-mounted filesystem, a directory bomb) from running a call forever.
inline constexpr std::size_t kMaxEntries = 2'000'000;  // directory entries examined
inline constexpr std::size_t kMaxDepth = 256;          // nesting below the start directory

// A glob in the dialect of Rust's globset, which rg --glob, fd --glob and both tools' .gitignore
// readers share: `*` and `?` stop at '/', `**` as a whole component crosses directories (`**/x`,
// `x/**`, `a/**/b`, `**`; elsewhere it is `*`), `[...]` classes (`!` or `^` negates, `a-z` ranges),
// `{a,b}` alternatives, `\` escapes the next character. Matching is a full match of the subject.
class Glob {
 public:
  // nullopt with `error` set to globset's reason ("unclosed character class; missing ']'") when
  // the pattern is malformed; callers say "error parsing glob '<pattern>': <reason>", as rg and fd.
  static std::optional<Glob> compile(std::string_view pattern, bool case_insensitive,
                                     std::string* error);
  bool matches(std::string_view subject) const;

 private:
  // Most globs people write are a name or `*.ext`: those skip the regex engine entirely.
  enum class Kind : std::uint8_t { Exact, Suffix, BaseExact, BaseSuffix, All, Regex };
  Kind kind_ = Kind::Regex;
  bool fold_ = false;    // ASCII case folding for the literal kinds
  std::string literal_;  // Exact/BaseExact: the whole text; Suffix/BaseSuffix: the tail
  std::shared_ptr<const re2::RE2> re_;
};

enum class Verdict : std::uint8_t { None, Ignore, Whitelist };

// The rules of one .gitignore file, or of rg's --glob list (read with the same line syntax).
class IgnoreFile {
 public:
  // Malformed lines are dropped, as rg and fd drop them (with a warning nobody sees here).
  static IgnoreFile parse(std::string_view text);
  // One line: blank lines and `#` comments add nothing; `!` negates; a trailing `/` keeps the rule
  // to directories; a `/` at the start or inside anchors it to this file's directory, otherwise it
  // matches a name at any depth; unescaped trailing spaces are dropped. False (and `error`) for a
  // malformed glob.
  bool add_line(std::string_view line, std::string* error);
  // `path` is relative to this file's directory. The last matching rule decides.
  Verdict match(std::string_view path, bool is_dir) const;
  bool empty() const { return rules_.empty(); }
  std::size_t size() const { return rules_.size(); }
  std::size_t whitelist_count() const;  // negated (`!`) rules

 private:
  struct Rule {
    Glob glob;
    bool negated = false;
    bool dir_only = false;
    bool basename = false;  // no '/' in the pattern: matched against the last component
  };
  std::vector<Rule> rules_;
};

enum class Type : std::uint8_t { File, Dir, Symlink, Other };

struct Entry {
  std::string_view path;  // relative to the start directory, '/'-separated, never empty
  std::string_view name;  // the last component; name.data() is NUL-terminated
  Type type;              // of the entry itself (a symlink is never resolved)
  int parent_fd;          // the open directory holding it, for openat(name, O_NOFOLLOW)
};

enum class Action : std::uint8_t { Continue, Prune, Stop };  // Prune: do not enter this directory

struct Options {
  // rg (and fd once a repository is in sight) apply .gitignore files only inside a git repository,
  // and never across a repository's root: rules above a directory holding `.git` stop there.
  bool require_git = true;
  // rg's --glob list: consulted before .gitignore; a matching `!glob` hides the entry, a matching
  // glob shows it even when ignored, and a file no glob matches is hidden once any glob is
  // positive. Directories are only ever hidden by a `!glob`.
  const IgnoreFile* overrides = nullptr;
  // The tool's own ignore file name (rg: ".rgignore", fd: ".fdignore"), read like .ignore files:
  // in every directory, with or without a repository, before .ignore and .gitignore.
  std::string custom_ignore;
  // False: no ignore file (.gitignore, .ignore, the custom one) hides anything; overrides still
  // apply. Millforge's workspace listing and search see every file.
  bool ignore_files = true;
  std::size_t max_entries = kMaxEntries;
  std::size_t max_depth = kMaxDepth;
};

struct Outcome {
  bool entry_limit = false;  // stopped at max_entries
  bool depth_limit = false;  // some directory below max_depth was not entered
  bool stopped = false;      // the visitor returned Stop
  // How many entries had been visited when each bound was first met. A search that hands files to
  // other threads walks ahead of its results; it keeps a bound only if met before the visit of the
  // file its results stopped at, as a walk stopped there would have.
  std::size_t entry_limit_visits = 0;
  std::size_t depth_limit_visits = 0;

  // The bounds a walk stopped by the visit numbered `visit` (1-based) would have met.
  void stop_at(std::size_t visit) {
    entry_limit = entry_limit && entry_limit_visits < visit;
    depth_limit = depth_limit && depth_limit_visits < visit;
  }
};

// Visits everything below `start` (a normalized root-relative directory, "" = the root), which the
// caller opened as `start_fd` (not consumed). Entries come in byte order of their paths: each
// directory's entries are sorted by name, a directory's name compared as if it ended in '/', and a
// directory is visited before its contents (rg and fd promise no order; this one is stable).
// `.git` directories are skipped. The ignore files (.gitignore, .ignore, the custom one) of
// `start`, of its ancestors inside the workspace and of every directory below apply as Options
// says; global and .git/info/exclude rules are not read (they live outside the workspace or in
// git's store). Unreadable directories and entries that vanish are skipped silently.
Outcome walk(const Workspace& ws, std::string_view start, int start_fd, const Options& options,
             const std::function<Action(const Entry&)>& visit);

// True when `start` or one of its ancestors inside the workspace holds `.git` (a directory, or the
// file a worktree or submodule has). The search stops at the workspace root on purpose: what lies
// outside is not the model's to see, and results must not depend on where the workspace sits.
bool inside_git_repository(const Workspace& ws, std::string_view start);

// The last component of a '/'-separated path.
inline std::string_view basename_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace mf::tools::walk
