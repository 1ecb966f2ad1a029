// libFuzzer target for the live backends' wire codec (docs/live-backends.md): a server's bytes,
// as a JSON body and as an event stream, for both APIs. On any input the decoders return a reply
// or a failure without crashing; a stream fed in pieces (split where the input's first bytes say)
// decodes exactly as the same bytes fed whole; a failure's error is one bounded line; an error
// body's description is bounded. Violations trap.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mf/json/canonical.hpp"
#include "wire.hpp"

namespace {

namespace wire = mf::model::wire;

void check(bool condition) {
  if (!condition) __builtin_trap();
}

std::string fingerprint(const mf::model::Reply& r) {
  std::string out = (r.ok ? "ok|" : "fail|") + r.content + "|" + r.error + "|" + r.reasoning + "|" +
                    r.stop_reason + "|" + mf::json::canonical(r.usage);
  for (const auto& c : r.tool_calls) out += "|" + c.id + "," + c.name + "," + c.arguments;
  return out;
}

void bounded(const mf::model::Reply& r) {
  if (r.ok) return;
  check(!r.error.empty());
  check(r.error.size() <= 1024);
  check(r.error.find('\n') == std::string::npos);
}

mf::model::Reply decode(const wire::Settings& s, std::string_view bytes, std::size_t piece) {
  wire::StreamDecoder d(s);
  for (std::size_t at = 0; at < bytes.size(); at += piece) {
    if (!d.feed(bytes.substr(at, piece)).ok()) break;
  }
  return d.finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  wire::Settings s;
  s.api = (data[0] & 1) != 0 ? wire::Api::Anthropic : wire::Api::OpenAI;
  s.model = "m";
  s.stream = true;
  const std::size_t piece = 1 + data[1] % 13;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 2, size - 2);

  const auto whole = decode(s, bytes, bytes.size() + 1);
  const auto split = decode(s, bytes, piece);
  bounded(whole);
  check(fingerprint(whole) == fingerprint(split));

  s.stream = false;
  bounded(wire::parse_body(s, bytes));
  if (auto salvaged = wire::salvage_error(s, 500, bytes)) check(salvaged->ok);
  check(wire::describe_error(429, bytes).size() <= 300);
  return 0;
}
