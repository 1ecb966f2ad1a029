// Source positions for pointers (source_map.hpp): a second parse, run only on the failure path, so
// the value model need carry no positions.
#include "mf/json/source_map.hpp"

#include <rapidjson/reader.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mf/json/pointer.hpp"
#include "mf/text/utf8.hpp"

namespace mf::json {
namespace {

// Records the byte offset where each value (or member key) starts. RapidJSON hands a handler the
// stream before it advances past the token, so Tell() inside a callback is the token's start.
class Recorder {
 public:
  Recorder(rapidjson::StringStream& s, const std::set<std::string, std::less<>>& wanted)
      : stream_(s), wanted_(wanted) {}

  bool Null() { return value(); }
  bool Bool(bool) { return value(); }
  bool Int(int) { return value(); }
  bool Uint(unsigned) { return value(); }
  bool Int64(std::int64_t) { return value(); }
  bool Uint64(std::uint64_t) { return value(); }
  bool Double(double) { return value(); }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return value(); }
  bool String(const char*, rapidjson::SizeType, bool) { return value(); }
  bool StartObject() { return open(true); }
  bool StartArray() { return open(false); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    Frame& f = frames_.back();
    f.key.assign(s, n);
    f.keyed_at = stream_.Tell();
    return true;
  }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool EndArray(rapidjson::SizeType) { return close(); }

  std::vector<std::pair<std::string, std::size_t>> offsets;

 private:
  struct Frame {
    bool object;
    std::size_t next_index = 0;
    std::string key;
    std::size_t keyed_at = 0;
  };

  // The pointer of the value starting now, and where it is reported: a member at its key.
  std::pair<std::string, std::size_t> here() {
    std::string pointer;
    for (const Frame& f : frames_) {
      if (f.object) {
        append_token(pointer, f.key);
      } else {
        append_index(pointer, f.next_index);
      }
    }
    std::size_t at = stream_.Tell();
    if (!frames_.empty() && frames_.back().object) at = frames_.back().keyed_at;
    return {std::move(pointer), at};
  }

  void record() {
    auto at = here();
    if (wanted_.contains(at.first)) offsets.push_back(std::move(at));
  }
  bool value() {
    record();
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().next_index;
    return true;
  }
  bool open(bool object) {
    record();
    frames_.push_back(Frame{object, 0, {}, 0});
    return true;
  }
  bool close() {
    frames_.pop_back();
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().next_index;
    return true;
  }

  rapidjson::StringStream& stream_;
  const std::set<std::string, std::less<>>& wanted_;
  std::vector<Frame> frames_;
};

}  // namespace

SourceMap json_source_map(std::string_view text, const diag::Diagnostics& ds) {
  std::set<std::string, std::less<>> wanted;
  for (const auto& d : ds) {
    if (d.line != 0) continue;
    for (std::string pointer = d.pointer;; pointer.resize(pointer.rfind('/'))) {
      wanted.insert(pointer);
      if (pointer.empty() || pointer.find('/') == std::string::npos) break;
    }
  }
  if (wanted.empty()) return {};
  const std::string copy(text);  // StringStream needs a terminating NUL
  rapidjson::StringStream stream(copy.c_str());
  Recorder recorder(stream, wanted);
  rapidjson::Reader reader;
  if (reader
          .Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag>(stream,
                                                                                         recorder)
          .IsError()) {
    return {};
  }
  return map_offsets(text, std::move(recorder.offsets));
}

SourcePosition position_at(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  SourcePosition p{1, 1};
  std::size_t line_start = 0;
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      line_start = i + 1;
    }
  }
  p.column +=
      static_cast<std::int64_t>(text::utf8_count(text.substr(line_start, offset - line_start)));
  return p;
}

SourceMap map_offsets(std::string_view text,
                      std::vector<std::pair<std::string, std::size_t>> offsets) {
  std::sort(offsets.begin(), offsets.end(),
            [](const auto& a, const auto& b) { return a.second < b.second; });
  SourceMap map;
  SourcePosition p{1, 1};
  std::size_t i = 0;
  for (const auto& [pointer, offset] : offsets) {
    for (; i < offset && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++p.line;
        p.column = 1;
      } else if (!text::is_continuation(static_cast<unsigned char>(text[i]))) {
        ++p.column;
      }
    }
    map.emplace(pointer, p);
  }
  return map;
}

void locate(diag::Diagnostics& ds, const SourceMap& map) {
  for (auto& d : ds) {
    if (d.line != 0 || map.empty()) continue;
    std::string pointer = d.pointer;
    while (true) {
      if (auto it = map.find(pointer); it != map.end()) {
        d.line = it->second.line;
        d.column = it->second.column;
        break;
      }
      if (pointer.empty()) break;
      pointer.resize(pointer.rfind('/'));
    }
  }
}

}  // namespace mf::json
