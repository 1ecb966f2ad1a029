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

}  // namespace mf::json
