// .gitignore rules as the ignore crate reads them (walk.hpp).
#include <algorithm>

#include "walk.hpp"

namespace mf::tools::walk {

IgnoreFile IgnoreFile::parse(std::string_view text) {
  IgnoreFile file;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) nl = text.size();
    std::string ignored_error;
    (void)file.add_line(text.substr(start, nl - start), &ignored_error);
    start = nl + 1;
  }
  return file;
}

bool IgnoreFile::add_line(std::string_view line, std::string* error) {
  const std::string original(line);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line.empty() || line[0] == '#') return true;
  // Trailing whitespace goes unless the last space is escaped ("foo\ ").
  if (!(line.size() >= 2 && line.substr(line.size() - 2) == "\\ ")) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r' ||
                             line.back() == '\f' || line.back() == '\v')) {
      line.remove_suffix(1);
    }
  }
  if (line.empty()) return true;
  Rule rule;
  bool anchored = false;
  if (line.substr(0, 2) == "\\!" || line.substr(0, 2) == "\\#") {
    line.remove_prefix(1);
  } else {
    if (line[0] == '!') {
      rule.negated = true;
      line.remove_prefix(1);
    }
    if (!line.empty() && line[0] == '/') {
      anchored = true;
      line.remove_prefix(1);
    }
  }
  if (!line.empty() && line.back() == '/') {
    rule.dir_only = true;
    line.remove_suffix(1);
    if (!line.empty() && line.back() == '\\') line.remove_suffix(1);
  }
  if (line.empty()) return true;
  std::string glob(line);
  rule.basename = !anchored && glob.find('/') == std::string::npos;
  // `dir/**` means what is inside, not the directory itself.
  if (glob.size() >= 3 && glob.compare(glob.size() - 3, 3, "/**") == 0) glob += "/*";
  std::string why;
  auto compiled = Glob::compile(glob, false, &why);
  if (!compiled) {
    if (error != nullptr) *error = "error parsing glob '" + original + "': " + why;
    return false;
  }
  rule.glob = std::move(*compiled);
  rules_.push_back(std::move(rule));
  return true;
}

Verdict IgnoreFile::match(std::string_view path, bool is_dir) const {
  const std::string_view base = basename_of(path);
  for (std::size_t i = rules_.size(); i-- > 0;) {
    const Rule& r = rules_[i];
    if (r.dir_only && !is_dir) continue;
    if (r.glob.matches(r.basename ? base : path)) {
      return r.negated ? Verdict::Whitelist : Verdict::Ignore;
    }
  }
  return Verdict::None;
}

std::size_t IgnoreFile::whitelist_count() const {
  return static_cast<std::size_t>(
      std::count_if(rules_.begin(), rules_.end(), [](const Rule& r) { return r.negated; }));
}

}  // namespace mf::tools::walk
