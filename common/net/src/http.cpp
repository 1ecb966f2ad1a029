// HTTP over libcurl (http.hpp), the only file that includes it: libcurl loaded on first use, one
// process-wide share handle, the timeouts and cancellation in the progress callback, and the body
// streamed into the caller's sink.
#include "mf/net/http.hpp"

#include <curl/curl.h>
#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "library.hpp"
#include "mf/diag/codes.hpp"

namespace mf::net::http {

namespace {

using Clock = std::chrono::steady_clock;

// Every libcurl function this file calls. libcurl is opened with dlopen on the first request, not
// named in the programs' DT_NEEDED: its dependency tree is most of a program's shared libraries,
// and loading and relocating them at every start cost the programs that never touch the network
// (mf-replay, mf-compile, most runs) several times what the rest of their start-up does. The
// headers still give every type; each call goes through this table.
// clang-format off
#define MF_CURL_FUNCTIONS(X)                                                                     \
  X(global_init) X(share_init) X(share_setopt) X(easy_init) X(easy_cleanup) X(easy_reset)         \
  X(easy_setopt) X(easy_getinfo) X(easy_strerror) X(multi_init) X(multi_cleanup)                 \
  X(multi_add_handle) X(multi_remove_handle) X(multi_perform) X(multi_poll) X(multi_info_read)   \
  X(slist_append) X(slist_free_all) X(url) X(url_set) X(url_get) X(url_cleanup) X(free)          \
  X(getdate)
// clang-format on

struct Curl {
#define MF_CURL_MEMBER(name) decltype(&::curl_##name) name = nullptr;
  MF_CURL_FUNCTIONS(MF_CURL_MEMBER)
#undef MF_CURL_MEMBER
};

// The soname of libcurl 7.16 and later (the ABI this file is compiled against).
constexpr const char* kLibcurl = "libcurl.so.4";

Result<Curl> open_curl(const char* soname) {
  auto failed = [soname](const std::string& why) {
    return diag::error(diag::codes::kHttpLibrary,
                       std::string(soname) + " cannot be loaded (" + why +
                           "): HTTP (live models, MCP servers over HTTP) needs libcurl 7.85 or "
                           "later, the Debian and Ubuntu package libcurl4");
  };
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return failed(why != nullptr ? why : "dlopen failed");
  }
  Curl curl;
  const char* missing = nullptr;
#define MF_CURL_RESOLVE(name)                                                           \
  curl.name = reinterpret_cast<decltype(&::curl_##name)>(dlsym(handle, "curl_" #name)); \
  if (curl.name == nullptr && missing == nullptr) missing = "curl_" #name;
  MF_CURL_FUNCTIONS(MF_CURL_RESOLVE)
#undef MF_CURL_RESOLVE
  if (missing != nullptr) {
    dlclose(handle);
    return failed(std::string("it has no ") + missing);
  }
  return curl;  // the handle stays open for the life of the process
}

// The process's table, opened once; the diagnostic when it could not be.
const Result<Curl>& loaded() {
  static const Result<Curl> curl = open_curl(kLibcurl);
  return curl;
}

// The table, once load() succeeded: every caller below runs after that check in send().
const Curl& lib() {
  return *loaded();
}

// The process's one share handle: the connection cache, DNS answers and TLS sessions of every
// call, from every thread, behind one mutex per data kind.
class Shared {
 public:
  static Shared& get() {
    static Shared* shared = new Shared;  // never destroyed (see below)
    return *shared;
  }
  CURLSH* handle() const { return share_; }

 private:
  Shared() {
    lib().global_init(CURL_GLOBAL_DEFAULT);
    share_ = lib().share_init();
    lib().share_setopt(share_, CURLSHOPT_LOCKFUNC, &Shared::lock);
    lib().share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &Shared::unlock);
    lib().share_setopt(share_, CURLSHOPT_USERDATA, this);
    lib().share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
    lib().share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    lib().share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }
  // Never destroyed: easy handles of other threads may still name it at exit.
  ~Shared() = default;

  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* self) {
    static_cast<Shared*>(self)->mutexes_[index(data)].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* self) {
    static_cast<Shared*>(self)->mutexes_[index(data)].unlock();
  }
  static std::size_t index(curl_lock_data d) {
    return std::min<std::size_t>(static_cast<std::size_t>(d), kLocks - 1);
  }

  static constexpr std::size_t kLocks = 8;
  CURLSH* share_ = nullptr;
  std::mutex mutexes_[kLocks];
};

// One easy and one multi handle per thread, reused call after call.
struct Handles {
  CURL* easy = nullptr;
  CURLM* multi = nullptr;
  bool configured = false;  // the per-thread options are set (send())
  bool busy = false;        // a request is under way on them (a sink is sending another)
  std::string ca_file;      // the CA file they were set with
  Handles() {
    (void)Shared::get();  // curl_global_init before the first handle
    easy = lib().easy_init();
    multi = lib().multi_init();
  }
  ~Handles() {
    if (easy != nullptr) lib().easy_cleanup(easy);
    if (multi != nullptr) lib().multi_cleanup(multi);
  }
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
};

struct Transfer {
  const Request* request = nullptr;
  Response* response = nullptr;
  CURL* easy = nullptr;
  Clock::time_point started;
  Clock::time_point last_byte;
  std::int64_t body_bytes = 0;
  bool too_large = false;
  bool stopped = false;
  bool sending = false;  // request bytes went out: the connection (new or reused) is up
};

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t ulnow) {
  if (ulnow > 0) static_cast<Transfer*>(user)->sending = true;
  return 0;
}

std::optional<std::int64_t> parse_retry_after(std::string_view value) {
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == '\n' || value.back() == ' ')) {
    value.remove_suffix(1);
  }
  if (value.empty()) return std::nullopt;
  if (std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (value.size() > 9) return std::int64_t{999999999} * 1000;
    return std::stoll(std::string(value)) * 1000;
  }
  const std::string date(value);
  const time_t when = lib().getdate(date.c_str(), nullptr);
  if (when < 0) return std::nullopt;
  const time_t now = time(nullptr);
  return when > now ? static_cast<std::int64_t>(when - now) * 1000 : 0;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  t->response->received = true;
  t->last_byte = Clock::now();
  std::string_view line(data, n);
  Response& r = *t->response;
  if (line.rfind("HTTP/", 0) == 0) {
    r.retry_after_ms.reset();  // a new response (after 100 Continue, say)
    r.headers.clear();
    return n;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0 || r.headers.size() == Response::kMaxHeaders) {
    return n;
  }
  std::string name(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string_view value = line.substr(colon + 1);
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!value.empty() && blank(value.front())) value.remove_prefix(1);
  while (!value.empty() && blank(value.back())) value.remove_suffix(1);
  if (name == "retry-after") r.retry_after_ms = parse_retry_after(value);
  r.headers.emplace_back(std::move(name), std::string(value.substr(0, Response::kMaxHeaderBytes)));
  return n;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::size_t n = size * count;
  t->response->received = true;
  t->last_byte = Clock::now();
  t->body_bytes += static_cast<std::int64_t>(n);
  if (t->body_bytes > t->request->max_body_bytes) {
    t->too_large = true;
    return 0;
  }
  if (t->response->status == 0) {
    long status = 0;
    lib().easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
    t->response->status = status;
  }
  const bool streamed = t->request->sink && t->response->status >= 200 && t->response->status < 300;
  if (streamed) {
    if (!t->request->sink(std::string_view(data, n), *t->response)) {
      t->stopped = true;
      return 0;
    }
  } else {
    t->response->body.append(data, n);
  }
  return n;
}

Outcome classify(CURLcode code) {
  switch (code) {
    case CURLE_OK:
      return Outcome::Complete;
    case CURLE_COULDNT_CONNECT:
      return Outcome::ConnectFailed;
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2_STREAM:
      return Outcome::Reset;
    default:
      return Outcome::Failed;
  }
}

// A connection that did not open, with the peer the URL names (never its path or query, which
// may carry a key): "connection refused by 127.0.0.1:8080", "cannot connect to HOST:PORT
// (Network is unreachable)". libcurl's own text carries the milliseconds it took, which would make
// two runs' traces differ.
std::string connect_failure(CURL* easy, const std::string& url) {
  std::string peer;
  if (CURLU* u = lib().url()) {
    char* host = nullptr;
    char* port = nullptr;
    if (lib().url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK &&
        lib().url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        lib().url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK) {
      peer = std::string(host) + ":" + port;
    }
    lib().free(host);
    lib().free(port);
    lib().url_cleanup(u);
  }
  long os_errno = 0;
  lib().easy_getinfo(easy, CURLINFO_OS_ERRNO, &os_errno);
  if (peer.empty()) return "connection failed";
  if (os_errno == ECONNREFUSED) return "connection refused by " + peer;
  return "cannot connect to " + peer +
         (os_errno != 0 ? " (" + std::string(std::strerror(static_cast<int>(os_errno))) + ")"
                        : std::string());
}

std::int64_t ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

}  // namespace

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Complete:
      return "complete";
    case Outcome::ConnectFailed:
      return "connection failed";
    case Outcome::ConnectTimeout:
      return "connect timeout";
    case Outcome::FirstByteTimeout:
      return "first-byte timeout";
    case Outcome::IdleTimeout:
      return "idle timeout";
    case Outcome::TotalTimeout:
      return "total timeout";
    case Outcome::Deadline:
      return "the run's deadline passed";
    case Outcome::Cancelled:
      return "cancelled";
    case Outcome::Reset:
      return "connection reset";
    case Outcome::TooLarge:
      return "response too large";
    case Outcome::Stopped:
      return "stream rejected";
    case Outcome::Failed:
      return "transport failure";
  }
  return "transport failure";
}

const std::string* Response::header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (n == name) return &v;
  }
  return nullptr;
}

namespace {

Response perform(Handles& handles, const Request& request) {
  Response response;
  if (handles.easy == nullptr || handles.multi == nullptr) {
    response.detail = "libcurl could not be initialised";
    return response;
  }
  CURL* easy = handles.easy;
  // What every call sets alike is set once per thread (setting options is a measurable part of
  // a loopback call); a different CA file starts the handle afresh.
  if (!handles.configured || handles.ca_file != request.ca_file) {
    lib().easy_reset(easy);
    lib().easy_setopt(easy, CURLOPT_SHARE, Shared::get().handle());
    lib().easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    lib().easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    lib().easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    lib().easy_setopt(easy, CURLOPT_POST, 1L);  // a DELETE is a POST under another name
    lib().easy_setopt(easy, CURLOPT_USERAGENT, "millforge");
    lib().easy_setopt(easy, CURLOPT_HEADERFUNCTION, &on_header);
    lib().easy_setopt(easy, CURLOPT_WRITEFUNCTION, &on_body);
    lib().easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, &on_progress);
    lib().easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
    lib().easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
    lib().easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
    lib().easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
    if (!request.ca_file.empty()) lib().easy_setopt(easy, CURLOPT_CAINFO, request.ca_file.c_str());
    handles.configured = true;
    handles.ca_file = request.ca_file;
  }
  Transfer t;
  t.request = &request;
  t.response = &response;
  t.easy = easy;
  t.started = t.last_byte = Clock::now();

  char error[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = nullptr;
  for (const auto& h : request.headers) headers = lib().slist_append(headers, h.c_str());
  if (!request.content_type.empty()) {
    headers = lib().slist_append(headers, ("Content-Type: " + request.content_type).c_str());
  }
  headers = lib().slist_append(headers, "Expect:");  // no 100-continue round trip

  lib().easy_setopt(easy, CURLOPT_URL, request.url.c_str());
  lib().easy_setopt(easy, CURLOPT_CUSTOMREQUEST,
                    request.method == Method::Delete ? "DELETE" : nullptr);
  lib().easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
  lib().easy_setopt(easy, CURLOPT_POSTFIELDS, request.body.data());
  lib().easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE,
                    static_cast<curl_off_t>(request.body.size()));
  lib().easy_setopt(easy, CURLOPT_ERRORBUFFER, error);
  lib().easy_setopt(easy, CURLOPT_HEADERDATA, &t);
  lib().easy_setopt(easy, CURLOPT_WRITEDATA, &t);
  lib().easy_setopt(easy, CURLOPT_XFERINFODATA, &t);
  lib().easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_ms));

  CURLM* multi = handles.multi;
  lib().multi_add_handle(multi, easy);
  std::optional<Outcome> aborted;
  int running = 1;
  while (running > 0) {
    if (lib().multi_perform(multi, &running) != CURLM_OK) {
      aborted = Outcome::Failed;
      break;
    }
    if (running == 0) break;
    const auto now = Clock::now();
    if (request.cancel != nullptr && request.cancel->load()) {
      aborted = Outcome::Cancelled;
    } else if (now >= request.deadline) {
      aborted = Outcome::Deadline;
    } else if (ms_between(t.started, now) >= request.total_ms) {
      aborted = Outcome::TotalTimeout;
    } else if (!response.received) {
      // Connected once the request started going out (a reused connection never connects).
      if (!t.sending && ms_between(t.started, now) >= request.connect_ms) {
        aborted = Outcome::ConnectTimeout;
      } else if (t.sending && ms_between(t.started, now) >= request.first_byte_ms) {
        aborted = Outcome::FirstByteTimeout;
      }
    } else if (ms_between(t.last_byte, now) >= request.idle_ms) {
      aborted = Outcome::IdleTimeout;
    }
    if (aborted) break;
    lib().multi_poll(multi, nullptr, 0, 20, nullptr);
  }
  CURLcode code = CURLE_OK;
  if (!aborted) {
    int queued = 0;
    while (CURLMsg* msg = lib().multi_info_read(multi, &queued)) {
      if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy) code = msg->data.result;
    }
  }
  long status = 0;
  lib().easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
  if (status != 0) response.status = status;
  lib().multi_remove_handle(multi, easy);
  // Nothing of this call may outlive it in the handle: the header list, the buffers, the body.
  lib().easy_setopt(easy, CURLOPT_HTTPHEADER, nullptr);
  lib().easy_setopt(easy, CURLOPT_ERRORBUFFER, nullptr);
  lib().easy_setopt(easy, CURLOPT_HEADERDATA, nullptr);
  lib().easy_setopt(easy, CURLOPT_WRITEDATA, nullptr);
  lib().easy_setopt(easy, CURLOPT_XFERINFODATA, nullptr);
  lib().easy_setopt(easy, CURLOPT_CUSTOMREQUEST, nullptr);
  lib().slist_free_all(headers);

  if (aborted) {
    response.outcome = *aborted;
  } else if (t.too_large) {
    response.outcome = Outcome::TooLarge;
  } else if (t.stopped) {
    response.outcome = Outcome::Stopped;
  } else if (code == CURLE_OPERATION_TIMEDOUT) {
    response.outcome = response.received ? Outcome::IdleTimeout : Outcome::ConnectTimeout;
  } else {
    response.outcome = classify(code);
  }
  if (response.outcome == Outcome::ConnectFailed) {
    response.detail = connect_failure(easy, request.url);
  } else if (response.outcome != Outcome::Complete) {
    response.detail = error[0] != '\0' ? error : lib().easy_strerror(code);
  }
  return response;
}

}  // namespace

Status load() {
  const Result<Curl>& curl = loaded();
  if (curl) return {};
  return curl.diagnostics();
}

namespace detail {

Status probe_library(const char* soname) {
  Result<Curl> curl = open_curl(soname);
  if (curl) return {};
  return curl.take_diagnostics();
}

}  // namespace detail

Response send(const Request& request) {
  if (const Result<Curl>& curl = loaded(); !curl) {
    Response response;
    const diag::Diagnostic& d = curl.diagnostics().front();
    response.detail = d.code + ": " + d.message;
    return response;
  }
  thread_local Handles handles;
  if (handles.busy) {
    Handles nested;  // sent from a sink: the thread's handles carry the request under way
    return perform(nested, request);
  }
  handles.busy = true;
  struct Free {
    bool& busy;
    ~Free() { busy = false; }
  } free{handles.busy};
  return perform(handles, request);
}

}  // namespace mf::net::http
