// JSONL (jsonl.hpp): reading a stream line by line, appending a line, and canonicalizing a stream
// that arrives in chunks that need not end on a line.
#include "mf/json/jsonl.hpp"

#include <algorithm>

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

void LineSplitter::keep(std::string_view head) {
  const std::size_t need = partial_.size() + head.size();
  if (need > partial_.capacity()) {
    partial_.reserve(std::max(need, std::min(max_, kMaxHeldBytes)));
  }
  partial_.append(head);
}

Status LineCanonicalizer::feed(std::string_view bytes, std::string& out) {
  Status done;
  const auto stop = lines_.feed(bytes, [&](std::string_view line) {
    done = canonicalize_line(line, out);
    return done.ok();
  });
  if (stop == LineSplitter::Stop::Over) {
    return diag::error(
        diag::codes::kTooLarge,
        "line is over the size limit of " + std::to_string(limits_.max_bytes) + " bytes", {},
        line_ + 1);
  }
  return done;
}

Status LineCanonicalizer::finish(std::string& out) {
  if (lines_.rest().empty()) return {};
  Status done = canonicalize_line(lines_.rest(), out);
  lines_.clear();
  return done;
}

Status LineCanonicalizer::canonicalize_line(std::string_view line, std::string& out) {
  ++line_;
  Status done = json::canonicalize_line(tape_, line, limits_, out, line_ - 1);
  if (!done) {
    auto ds = done.take_diagnostics();
    for (auto& d : ds) {
      if (d.line == 0) d.line = line_;
    }
    return ds;
  }
  return {};
}

}  // namespace mf::json
