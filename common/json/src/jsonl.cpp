#include "mf/json/jsonl.hpp"

#include "mf/diag/codes.hpp"
#include "mf/json/canonical.hpp"

namespace mf::json {

bool JsonlReader::next_line(Line& line) {
  if (pos_ >= text_.size()) return false;
  std::size_t end = text_.find('\n', pos_);
  line.number = ++line_no_;
  if (end == std::string_view::npos) {
    // A crash mid-append leaves exactly this shape; the caller decides whether it is an error.
    line.text = text_.substr(pos_);
    line.terminated = false;
    pos_ = text_.size();
  } else {
    line.text = text_.substr(pos_, end - pos_);
    line.terminated = true;
    pos_ = end + 1;
  }
  return true;
}

bool JsonlReader::next(Result<Value>& out, Line* line) {
  Line l;
  if (!next_line(l)) return false;
  if (l.text.empty()) {
    // Every line of a JSONL stream holds one document; a blank line means a writer went wrong.
    out = diag::error(diag::codes::kMalformed, "empty line", {}, l.number, 1);
  } else {
    out = parse(l.text, limits_, l.number - 1);
  }
  if (line != nullptr) *line = l;
  return true;
}

void append_jsonl(const Value& v, std::string& out) {
  write_canonical(v, out);
  out += '\n';
}

Status LineCanonicalizer::feed(std::string_view bytes, std::string& out) {
  while (!bytes.empty()) {
    const auto newline = bytes.find('\n');
    const auto head = bytes.substr(0, newline);
    if (partial_.size() + head.size() > limits_.max_bytes) {
      return diag::error(
          diag::codes::kTooLarge,
          "line is over the size limit of " + std::to_string(limits_.max_bytes) + " bytes", {},
          line_ + 1);
    }
    if (newline == std::string_view::npos) {
      partial_.append(head);
      return {};
    }
    bytes.remove_prefix(newline + 1);
    // A line wholly inside this chunk is parsed in place; only lines split across chunks are
    // copied.
    Status done;
    if (partial_.empty()) {
      done = canonicalize_line(head, out);
    } else {
      partial_.append(head);
      done = canonicalize_line(partial_, out);
      partial_.clear();
    }
    if (!done) return done;
  }
  return {};
}

Status LineCanonicalizer::finish(std::string& out) {
  if (partial_.empty()) return {};
  Status done = canonicalize_line(partial_, out);
  partial_.clear();
  return done;
}

Status LineCanonicalizer::canonicalize_line(std::string_view line, std::string& out) {
  ++line_;
  auto value = parse(line, limits_, line_ - 1);
  if (!value) {
    auto ds = value.take_diagnostics();
    for (auto& d : ds) {
      if (d.line == 0) d.line = line_;
    }
    return ds;
  }
  write_canonical(*value, out);
  out.push_back('\n');
  return {};
}

}  // namespace mf::json
