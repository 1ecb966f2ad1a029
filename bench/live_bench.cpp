// The live backend's own cost per call on loopback (docs/live-backends.md), beside libcurl doing
// the same request. A canned HTTP/1.1 server in this process answers every POST at once with one
// fixed OpenAI-compatible reply (keep-alive), so what is measured is the client:
//
//   LiveTaskRun:   one task-mode run of fixtures/forge/task-valid.json through `openai:` — request
//                  build, digest, POST, reply parse, output contract, trace events (in memory).
//   LiveStreamRun: the same with the reply streamed as Server-Sent Events.
//   RawCurl:       the same request body POSTed with a reused libcurl easy handle and the body
//                  discarded: the floor any client over libcurl pays.
//
//   ScriptedTaskRun: the same run with the scripted model: the loop and trace alone.
//
// LiveTaskRun / RawCurl is the whole run beside the bare request; (LiveTaskRun − ScriptedTaskRun)
// / RawCurl is the backend's own overhead per call (docs/benchmarks.md).
#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include "mf/io/file.hpp"
#include "mf/model/model.hpp"
#include "mf/model/scripted.hpp"
#include "mf/net/http.hpp"
#include "mf/runtime/run_loop.hpp"
#include "mf/runtime/task.hpp"
#include "mf/trace/writer.hpp"

namespace {

constexpr std::string_view kContent =
    R"({\"risk\": \"A user-controlled value reaches panic!.\", \"evidence\": \"src/lib.rs:12\"})";

std::string json_reply() {
  return std::string(R"({"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",)") +
         R"("choices":[{"index":0,"message":{"role":"assistant","content":")" +
         std::string(kContent) +
         R"("},"finish_reason":"stop"}],"usage":{"prompt_tokens":180,"completion_tokens":24,)" +
         R"("total_tokens":204}})";
}

std::string sse_reply() {
  std::string out;
  const std::string chunk =
      R"({"id":"c","object":"chat.completion.chunk","created":1,"model":"m",)";
  out += "data: " + chunk +
         R"("choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})" + "\n\n";
  out += "data: " + chunk + R"("choices":[{"index":0,"delta":{"content":")" +
         std::string(kContent) + R"("}}]})" + "\n\n";
  out +=
      "data: " + chunk + R"("choices":[{"index":0,"delta":{},"finish_reason":"stop"}]})" + "\n\n";
  out +=
      "data: " + chunk +
      R"("choices":[],"usage":{"prompt_tokens":180,"completion_tokens":24,"total_tokens":204}})" +
      "\n\n";
  out += "data: [DONE]\n\n";
  return out;
}

// A keep-alive HTTP/1.1 server on 127.0.0.1 that answers every request with one canned response
// (a stream when the path contains "/stream/").
class CannedServer {
 public:
  CannedServer() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(fd_, 16) != 0) {
      throw std::runtime_error("cannot listen on loopback");
    }
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    const std::string body = json_reply();
    json_ = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\n\r\n" + body;
    const std::string events = sse_reply();
    sse_ = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: " +
           std::to_string(events.size()) + "\r\n\r\n" + events;
    std::thread([this] { accept_loop(); }).detach();
  }
  int port() const { return port_; }
  std::string last_body() {
    std::lock_guard<std::mutex> guard(mutex_);
    return last_body_;
  }

 private:
  void accept_loop() {
    for (;;) {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::thread([this, c] { serve(c); }).detach();
    }
  }
  void serve(int c) {
    std::string in;
    char buf[65536];
    for (;;) {
      std::size_t head = in.find("\r\n\r\n");
      while (head == std::string::npos) {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) return (void)::close(c);
        in.append(buf, static_cast<std::size_t>(n));
        head = in.find("\r\n\r\n");
      }
      std::size_t length = 0;
      std::string lower = in.substr(0, head);
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (auto at = lower.find("content-length:"); at != std::string::npos) {
        length = std::stoul(lower.substr(at + 15));
      }
      const bool stream = lower.find("/stream/") != std::string::npos;
      while (in.size() < head + 4 + length) {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) return (void)::close(c);
        in.append(buf, static_cast<std::size_t>(n));
      }
      {
        std::lock_guard<std::mutex> guard(mutex_);
        last_body_ = in.substr(head + 4, length);
      }
      in.erase(0, head + 4 + length);
      const std::string& out = stream ? sse_ : json_;
      if (::write(c, out.data(), out.size()) != static_cast<ssize_t>(out.size())) {
        return (void)::close(c);
      }
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::string json_, sse_;
  std::mutex mutex_;
  std::string last_body_;
};

CannedServer& server() {
  static CannedServer* s = new CannedServer;  // serves until the process exits
  return *s;
}

std::string profile(bool stream) {
  const auto path =
      std::filesystem::temp_directory_path() /
      ("mf-live-bench-" + std::to_string(::getpid()) + (stream ? "-s" : "") + ".json");
  std::ofstream(path) << R"({"schema_version": "1.0", "kind": "millforge_live_profile",
    "base_url": "http://127.0.0.1:)"
                      << server().port() << (stream ? "/stream" : "/plain")
                      << R"(/v1", "model": "m", "capabilities": {"streaming": true},
    "stream": )" << (stream ? "true" : "false")
                      << R"(, "options": {"temperature": 0}})";
  return path.string();
}

mf::runtime::Task task() {
  auto bytes =
      mf::io::read_input(std::string(MF_SOURCE_DIR) + "/fixtures/forge/task-valid.json", 1 << 20);
  if (!bytes) throw std::runtime_error("task fixture");
  auto t = mf::runtime::parse_task(*bytes);
  if (!t) throw std::runtime_error("task fixture");
  return std::move(*t);
}

// One task run into `trace` (in memory, fixed clock); false (and the benchmark skipped) unless it
// completed.
bool run_once(benchmark::State& state, const mf::runtime::Task& t, mf::model::Model& model,
              std::string& trace) {
  trace.clear();
  mf::trace::WriterOptions wo;
  wo.run_id = "bench";
  wo.fixed_clock = true;
  auto writer = mf::trace::Writer::open_memory(&trace, wo);
  auto outcome = mf::runtime::run_task(t, model, **writer);
  if (!outcome || !outcome->completed()) {
    state.SkipWithError("the run did not complete");
    return false;
  }
  benchmark::DoNotOptimize(trace.data());
  return true;
}

void run_live(benchmark::State& state, bool stream) {
  const mf::runtime::Task t = task();
  const std::string path = profile(stream);
  auto model = mf::model::open_model("openai:" + path);
  if (!model) {
    state.SkipWithError(model.diagnostics().front().message.c_str());
    return;
  }
  std::string trace;
  for (auto _ : state) {
    if (!run_once(state, t, **model, trace)) break;
  }
  std::filesystem::remove(path);
}

void LiveTaskRun(benchmark::State& state) {
  run_live(state, false);
}

// One model call alone (no loop, no trace): the backend's request build, digest, POST and parse.
void LiveInfer(benchmark::State& state) {
  const std::string path = profile(false);
  auto model = mf::model::open_model("openai:" + path);
  mf::model::Request request;
  request.call = 1;
  request.messages = {mf::model::Message::text("system", std::string(900, 'x')),
                      mf::model::Message::text("user", std::string(400, 'y'))};
  const std::atomic<bool> never{false};
  for (auto _ : state) {
    auto reply = (*model)->infer(request, never);
    if (!reply.ok) {
      state.SkipWithError(reply.error.c_str());
      break;
    }
  }
  std::filesystem::remove(path);
}

// The same run against the scripted model answering the same content from memory: the loop,
// the output contract and the trace without any HTTP, so LiveTaskRun minus this is what the
// backend itself adds.
void ScriptedTaskRun(benchmark::State& state) {
  const mf::runtime::Task t = task();
  const std::string script = std::string(R"({"steps": [{"content": ")") + std::string(kContent) +
                             R"(", "usage": {"input_tokens": 180, "output_tokens": 24}}]})";
  std::string trace;
  for (auto _ : state) {
    auto model = mf::model::ScriptedModel::parse(script);
    if (!run_once(state, t, **model, trace)) break;
  }
}
void LiveStreamRun(benchmark::State& state) {
  run_live(state, true);
}

std::size_t discard(char*, std::size_t size, std::size_t n, void*) {
  return size * n;
}

std::string plain_url() {
  return "http://127.0.0.1:" + std::to_string(server().port()) + "/plain/v1/chat/completions";
}

// Exactly the body a live run sends: one run first, then its request as the server saw it.
std::string primed_body() {
  const std::string path = profile(false);
  auto model = mf::model::open_model("openai:" + path);
  std::string trace;
  mf::trace::WriterOptions wo;
  wo.run_id = "prime";
  auto writer = mf::trace::Writer::open_memory(&trace, wo);
  const bool ok = model && writer && mf::runtime::run_task(task(), **model, **writer);
  std::filesystem::remove(path);
  return ok ? server().last_body() : std::string();
}

// The backend's transport alone (mf/net/http.hpp): the same POST through http::send.
void TransportPost(benchmark::State& state) {
  mf::net::http::Request post;
  post.url = plain_url();
  post.body = primed_body();
  for (auto _ : state) {
    auto r = mf::net::http::send(post);
    if (r.outcome != mf::net::http::Outcome::Complete || r.status != 200) {
      state.SkipWithError("post failed");
      break;
    }
    benchmark::DoNotOptimize(r.body.data());
  }
}

void RawCurl(benchmark::State& state) {
  const std::string data = primed_body();
  if (data.empty()) {
    state.SkipWithError("the priming run failed");
    return;
  }
  const std::string url = plain_url();
  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURL* easy = curl_easy_init();
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(easy, CURLOPT_POSTFIELDS, data.c_str());
  curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, static_cast<long>(data.size()));
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &discard);
  for (auto _ : state) {
    if (curl_easy_perform(easy) != CURLE_OK) {
      state.SkipWithError("curl failed");
      break;
    }
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(easy);
}

BENCHMARK(LiveTaskRun)->Unit(benchmark::kMicrosecond);
BENCHMARK(LiveInfer)->Unit(benchmark::kMicrosecond);
BENCHMARK(ScriptedTaskRun)->Unit(benchmark::kMicrosecond);
BENCHMARK(LiveStreamRun)->Unit(benchmark::kMicrosecond);
BENCHMARK(TransportPost)->Unit(benchmark::kMicrosecond);
BENCHMARK(RawCurl)->Unit(benchmark::kMicrosecond);

}  // namespace
