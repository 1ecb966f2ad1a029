// The live backends' stream decoding (common/model/src/wire.hpp): a large, realistic response
// stream decoded through StreamDecoder in 64 KiB feeds, as the transport hands it over. Streams
// of about 20 MB each, built in process from a fixed seed: OpenAI content deltas (a word or so
// per chunk, in the id/model/fingerprint envelope real servers repeat in every chunk), the same
// with a nonce in each chunk (which defeats the envelope cache: every event is parsed whole),
// OpenAI tool-call argument deltas, and Anthropic text_delta events. Bytes are the raw stream,
// so MB/s says how fast a reply can arrive before decoding is what limits it.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "wire.hpp"

namespace {

using mf::model::wire::Api;
using mf::model::wire::Settings;
using mf::model::wire::StreamDecoder;

constexpr std::size_t kStreamBytes = 20u << 20;
constexpr std::size_t kFeedBytes = 64u << 10;

// Pieces of text as a tokenizer cuts them, a few with JSON escapes or non-ASCII.
constexpr std::string_view kWords[] = {"The",
                                       " quick",
                                       " brown",
                                       " fox",
                                       " jumps",
                                       " over",
                                       " the",
                                       " lazy",
                                       " dog",
                                       ".",
                                       "\\n",
                                       " It",
                                       "'s",
                                       " \\\"fine\\\"",
                                       ",",
                                       " caf\\u00e9",
                                       " na\xC3\xAFve",
                                       " \xE2\x82\xAC",
                                       "42",
                                       " tokens",
                                       " per",
                                       " second",
                                       ";",
                                       " done"};
// Pieces of tool-call arguments as servers stream them: escaped JSON text in small slices.
constexpr std::string_view kArgPieces[] = {
    "{\\\"",      "path", "\\\": \\\"",      "src/",     "model/", "wire",     ".cpp",
    "\\\", \\\"", "old",  "_text\\\": \\\"", "if (x) {", "\\\\n",  "  return", " y;",
    "\\\\n}",     "\\\"}"};

struct Lcg {  // deterministic and cheap: the same stream on every machine
  std::uint64_t s;
  std::size_t next(std::size_t n) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::size_t>(s >> 33) % n;
  }
};

const std::string kChunkHead =
    "data: {\"id\":\"chatcmpl-AbCdEfGhIjKlMnOpQrStUvWxYz012\",\"object\":\"chat.completion.chunk\","
    "\"created\":1718000000,\"model\":\"gpt-4o-2024-08-06\",\"system_fingerprint\":\"fp_5f7a1c\","
    "\"choices\":[{\"index\":0,\"delta\":";

// `nonce`: each chunk also carries a member whose value changes every time (as OpenAI's
// `obfuscation` padding does), so that no two envelopes repeat and every event is parsed whole.
std::string openai_content_stream(bool nonce) {
  Lcg rng{7};
  std::string s;
  s.reserve(kStreamBytes + 4096);
  s += kChunkHead +
       "{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,"
       "\"finish_reason\":null}]}\n\n";
  while (s.size() < kStreamBytes) {
    s += kChunkHead;
    s += "{\"content\":\"";
    s += kWords[rng.next(std::size(kWords))];
    s += "\"},\"logprobs\":null,\"finish_reason\":null}]";
    if (nonce) s += ",\"obfuscation\":\"" + std::to_string(rng.next(1u << 30)) + "\"";
    s += "}\n\n";
  }
  s += kChunkHead + "{},\"logprobs\":null,\"finish_reason\":\"stop\"}]}\n\n";
  s += "data: {\"id\":\"chatcmpl-AbCdEfGhIjKlMnOpQrStUvWxYz012\",\"object\":"
       "\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":900,"
       "\"completion_tokens\":250000,\"total_tokens\":250900}}\n\n";
  s += "data: [DONE]\n\n";
  return s;
}

std::string openai_tool_stream() {
  Lcg rng{11};
  std::string s;
  s.reserve(kStreamBytes + 4096);
  s += kChunkHead +
       "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"index\":0,"
       "\"id\":\"call_Xy12\",\"type\":\"function\",\"function\":{\"name\":\"edit\","
       "\"arguments\":\"\"}}]},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
  while (s.size() < kStreamBytes) {
    s += kChunkHead;
    s += "{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"";
    s += kArgPieces[rng.next(std::size(kArgPieces))];
    s += "\"}}]},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
  }
  s += kChunkHead + "{},\"logprobs\":null,\"finish_reason\":\"tool_calls\"}]}\n\n";
  s += "data: [DONE]\n\n";
  return s;
}

std::string anthropic_stream() {
  Lcg rng{13};
  std::string s;
  s.reserve(kStreamBytes + 4096);
  s += "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\","
       "\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude\","
       "\"stop_reason\":null,\"usage\":{\"input_tokens\":900,\"output_tokens\":1}}}\n\n";
  s += "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
       "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n";
  while (s.size() < kStreamBytes) {
    s += "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
         "\"delta\":{\"type\":\"text_delta\",\"text\":\"";
    s += kWords[rng.next(std::size(kWords))];
    s += "\"}}\n\n";
  }
  s += "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n";
  s += "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
       "\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":250000}}\n\n";
  s += "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
  return s;
}

void decode(benchmark::State& state, Api api, const std::string& stream) {
  Settings settings;
  settings.api = api;
  settings.stream = true;
  {  // once, outside the timing: the stream must decode to a whole reply
    StreamDecoder d(settings);
    for (std::size_t i = 0; i < stream.size(); i += kFeedBytes) {
      (void)d.feed(std::string_view(stream).substr(i, kFeedBytes));
    }
    const mf::model::Reply r = d.finish();
    if (!r.ok || (r.content.empty() && r.tool_calls.empty())) {
      state.SkipWithError(("the stream did not decode: " + r.error).c_str());
      return;
    }
  }
  for (auto _ : state) {
    StreamDecoder d(settings);
    for (std::size_t i = 0; i < stream.size(); i += kFeedBytes) {
      benchmark::DoNotOptimize(d.feed(std::string_view(stream).substr(i, kFeedBytes)));
    }
    mf::model::Reply r = d.finish();
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(stream.size()));
}

void BM_SseOpenAiContent(benchmark::State& state) {
  static const std::string stream = openai_content_stream(false);
  decode(state, Api::OpenAI, stream);
}
BENCHMARK(BM_SseOpenAiContent)->Unit(benchmark::kMillisecond);

// The same with a nonce in every chunk: the envelope cache never hits.
void BM_SseOpenAiContentNonce(benchmark::State& state) {
  static const std::string stream = openai_content_stream(true);
  decode(state, Api::OpenAI, stream);
}
BENCHMARK(BM_SseOpenAiContentNonce)->Unit(benchmark::kMillisecond);

void BM_SseOpenAiToolArguments(benchmark::State& state) {
  static const std::string stream = openai_tool_stream();
  decode(state, Api::OpenAI, stream);
}
BENCHMARK(BM_SseOpenAiToolArguments)->Unit(benchmark::kMillisecond);

void BM_SseAnthropicText(benchmark::State& state) {
  static const std::string stream = anthropic_stream();
  decode(state, Api::Anthropic, stream);
}
BENCHMARK(BM_SseAnthropicText)->Unit(benchmark::kMillisecond);

}  // namespace
