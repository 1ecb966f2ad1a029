// find: Pi 0.79's tool, which runs fd, computed natively over walk.hpp's walk. What the model
// sees follows Pi (result texts, notices, limits, details); what is searched follows fd as Pi
// invokes it (--hidden, no links followed, .gitignore per directory). Differences and their
// reasons: docs/tools.md.
#include <utf8proc.h>

#include <cmath>
#include <optional>
#include <string>

#include "args.hpp"
#include "file_tools.hpp"
#include "mf/text/utf8.hpp"
#include "mf/tools/pack.hpp"
#include "search_output.hpp"
#include "walk.hpp"

namespace mf::tools {

namespace {

constexpr double kDefaultFindLimit = 1000;

bool has_uppercase(std::string_view s) {
  const auto* p = reinterpret_cast<const utf8proc_uint8_t*>(s.data());
  auto left = static_cast<utf8proc_ssize_t>(s.size());
  while (left > 0) {
    utf8proc_int32_t c = 0;
    const utf8proc_ssize_t n = utf8proc_iterate(p, left, &c);
    if (n <= 0) {
      ++p;
      --left;
      continue;
    }
    if (utf8proc_isupper(c) != 0) return true;
    p += n;
    left -= n;
  }
  return false;
}

}  // namespace

namespace {

// Pi's fd invocation: a pattern with '/' is matched against the whole path, behind `**/` unless it
// already starts with '/' or `**/`; any other pattern against the name. fd is case-insensitive
// unless the pattern has an uppercase letter, and matches all for "".
struct FindPattern {
  std::optional<walk::Glob> glob;  // none: everything matches
  bool full_path = false;          // matched against the path, not the name
  bool absolute_subject = false;   // ... the absolute path

  bool matches(const walk::Entry& e, const std::string& root_prefix, std::string& subject) const {
    if (!glob) return true;
    if (!full_path) return glob->matches(e.name);
    if (!absolute_subject) return glob->matches(e.path);
    subject.assign(root_prefix).append(e.path);
    return glob->matches(subject);
  }
};

std::optional<FindPattern> compile_pattern(const std::string& raw, ToolResult* failure) {
  FindPattern p;
  p.full_path = raw.find('/') != std::string::npos;
  std::string effective = raw;
  if (p.full_path && raw[0] != '/' && raw.rfind("**/", 0) != 0 && raw != "**") {
    effective = "**/" + raw;
  }
  p.absolute_subject = p.full_path && effective[0] == '/';
  if (effective.empty()) return p;
  std::string why;
  p.glob = walk::Glob::compile(effective, !has_uppercase(effective), &why);
  if (!p.glob) {
    *failure = ToolResult::error("error parsing glob '" + effective + "': " + why);
    return std::nullopt;
  }
  return p;
}

// What a walk found: its paths in Pi's output shape, and whether it was aborted.
struct Found {
  search::Output out;
  std::uint64_t count = 0;
  bool aborted = false;
  walk::Outcome outcome;
};

Found find_paths(const search::Target& target, const FindPattern& pattern, std::uint64_t cap,
                 const CallContext& ctx) {
  walk::Options options;
  // 0.79.10: fd gets --no-require-git only when no .git is in sight above the search path.
  options.require_git = walk::inside_git_repository(*ctx.workspace, target.relative);
  options.custom_ignore = ".fdignore";
  Found found;
  std::size_t visited = 0;
  const std::string root_prefix = target.absolute + "/";
  std::string subject;
  found.outcome = walk::walk(
      *ctx.workspace, target.relative, target.fd->get(), options, [&](const walk::Entry& e) {
        if ((++visited & 255) == 0 ? search::stop_requested(ctx) : ctx.cancelled()) {
          found.aborted = true;
          return walk::Action::Stop;
        }
        if (!pattern.matches(e, root_prefix, subject)) return walk::Action::Continue;
        std::string line = text::decode_utf8_lossy(e.path);
        if (e.type == walk::Type::Dir) line.push_back('/');
        found.out.add(line);
        ++found.count;
        return cap > 0 && found.count >= cap ? walk::Action::Stop : walk::Action::Continue;
      });
  return found;
}

}  // namespace

ToolResult run_find(const json::Value& args, const CallContext& ctx) {
  if (ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  if (!ctx.workspace) return ToolResult::error("find needs a workspace");
  const std::string* pattern = string_arg(args, "pattern");
  if (pattern == nullptr) return ToolResult::error("find needs a string pattern");
  ToolResult failure;
  auto target = search::open_target(args, ctx, &failure);
  if (!target) return failure;
  if (!target->directory) {
    return ToolResult::error("Search path '" + target->absolute + "' is not a directory.");
  }

  // Pi hands fd the limit as its decimal text; fd takes a whole number and 0 as no limit.
  const double limit = number_arg(args, "limit").value_or(kDefaultFindLimit);
  if (!(limit >= 0) || limit != std::floor(limit) || limit >= 1.8e19) {
    return ToolResult::error("Invalid limit " + js_number(limit) +
                             ": expected a whole number, 0 or more");
  }
  const auto cap = static_cast<std::uint64_t>(limit);
  const auto compiled = compile_pattern(*pattern, &failure);
  if (!compiled) return failure;

  Found found = find_paths(*target, *compiled, cap, ctx);
  if (found.aborted || ctx.cancelled()) return ToolResult::error(std::string(kAborted));
  if (found.count == 0)
    return search::nothing_found("No files found matching pattern", found.outcome);
  const Truncation truncation = found.out.finish();
  search::Notices notices;
  // As Pi: also when exactly `limit` paths exist, and always for limit 0.
  if (found.count >= cap) notices.limit_reached(limit, "results", "resultLimitReached");
  notices.truncated(truncation);
  notices.walk_bounds(found.outcome);
  return notices.result(truncation.content);
}

}  // namespace mf::tools
