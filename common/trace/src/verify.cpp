// The streaming trace verifier (verify.hpp): each line checked as it arrives, the bytes hashed on
// the way, and only open tool calls remembered.
#include "mf/trace/verify.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/hash/line_hasher.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/trace/events.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mf::trace {
namespace {

namespace codes = diag::codes;

// What the hashing thread reads and hashes at a time, and hands over whole.
constexpr std::size_t kSliceBytes = 128u << 10;
// The slices in flight between the two threads: the hashing thread runs up to this many ahead.
constexpr std::size_t kRingSlices = 16;
// ... and up to about this many lines ahead (a slice of newlines holds 48 bytes of digests and
// facts a byte): no valid trace comes near it, a slice of tiny lines is the first error.
constexpr std::size_t kLinesAhead = 32768;

// The members the checks read, by number (mf/trace/events.hpp); numbered on first use, after
// every static table is built.
struct Keys {
  std::size_t active_units = member_id("active_units");
  std::size_t budget = member_id("budget");
  std::size_t call = member_id("call");
  std::size_t call_id = member_id("call_id");
  std::size_t call_ids = member_id("call_ids");
  std::size_t count = member_id("count");
  std::size_t content = member_id("content");
  std::size_t content_bytes = member_id("content_bytes");
  std::size_t content_redacted = member_id("content_redacted");
  std::size_t content_sha256 = member_id("content_sha256");
  std::size_t error_kind = member_id("error_kind");
  std::size_t event = member_id("event");
  std::size_t hmac_sha256 = member_id("hmac_sha256");
  std::size_t kind = member_id("kind");
  std::size_t ledger = member_id("ledger");
  std::size_t limit = member_id("limit");
  std::size_t mode = member_id("mode");
  std::size_t ok = member_id("ok");
  std::size_t model_calls = member_id("model_calls");
  std::size_t prev = member_id("prev");
  std::size_t projection = member_id("projection");
  std::size_t repairs = member_id("repairs");
  std::size_t repairs_remaining = member_id("repairs_remaining");
  std::size_t run_id = member_id("run_id");
  std::size_t seq = member_id("seq");
  std::size_t t_ms = member_id("t_ms");
  std::size_t terminal = member_id("terminal");
  std::size_t tool_calls = member_id("tool_calls");
  std::size_t tools = member_id("tools");
  std::size_t v = member_id("v");
  std::size_t violations = member_id("violations");
  std::size_t visible = member_id("visible");
};

const Keys& keys() {
  static const Keys k;
  return k;
}

// The value as an exact non-negative integer, or nothing. Inlined: called out of line, the
// optional went through memory and every call stalled on reading it back.
[[gnu::always_inline]] inline std::optional<std::int64_t> natural(const json::View& v) {
  auto n = v.as_exact_int();
  if (!n || *n < 0) return std::nullopt;
  return n;
}

std::optional<std::string_view> string_member(const json::View& v) {
  if (!v.is_string()) return std::nullopt;
  return v.as_string();
}

// Where the string after the first "content" key in the line's first 64 bytes opens, or 0. In a
// canonical model_responded line the top-level member comes early ("attempts" and "call" sort
// before it); a later one is left to the checks. With SSE2, 16 starts at a time: a quote, a 'c',
// and the quote and colon 9 and 10 bytes on, before the whole key is compared.
std::size_t content_key(std::string_view line) {
  static constexpr std::string_view kKey = "\"content\":\"";
  constexpr std::size_t kStarts = 64;
  const auto at = [&](std::size_t i) { return i + kKey.size() - 1; };
#if defined(__SSE2__)
  if (line.size() >= kStarts + 16) {
    const auto load = [&](std::size_t i) {
      return _mm_loadu_si128(reinterpret_cast<const __m128i*>(line.data() + i));
    };
    const auto eq = [](__m128i x, char c) { return _mm_cmpeq_epi8(x, _mm_set1_epi8(c)); };
    for (std::size_t i = 0; i < kStarts; i += 16) {
      const __m128i hit = _mm_and_si128(_mm_and_si128(eq(load(i), '"'), eq(load(i + 1), 'c')),
                                        _mm_and_si128(eq(load(i + 8), '"'), eq(load(i + 9), ':')));
      for (auto m = static_cast<unsigned>(_mm_movemask_epi8(hit)); m != 0; m &= m - 1) {
        const std::size_t start = i + static_cast<std::size_t>(std::countr_zero(m));
        if (line.substr(start, kKey.size()) == kKey) return at(start);
      }
    }
    return 0;
  }
#endif
  const std::string_view head = line.substr(0, kStarts + kKey.size() - 1);
  const std::size_t start = head.find(kKey);
  return start == std::string_view::npos ? 0 : at(start);
}

bool is_incomplete(const std::string& code) {
  return code == codes::kTraceTruncated || code == codes::kTraceNoTerminal;
}

}  // namespace

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Ok:
      return "ok";
    case Outcome::Incomplete:
      return "incomplete";
    case Outcome::Corrupt:
      return "corrupt";
  }
  return "corrupt";
}

std::string_view mac_name(Mac m) {
  switch (m) {
    case Mac::Absent:
      return "absent";
    case Mac::Unchecked:
      return "unchecked";
    case Mac::Verified:
      return "verified";
  }
  return "absent";
}

json::Value to_json(const Summary& s) {
  json::Value out = json::Object{};
  out.set("status", outcome_name(s.status));
  out.set("run_id", s.run_id ? json::Value(*s.run_id) : json::Value(nullptr));
  out.set("terminal", s.terminal ? json::Value(*s.terminal) : json::Value(nullptr));
  out.set("events", s.events);
  out.set("model_calls", s.model_calls);
  out.set("repairs", s.repairs);
  json::Value by_kind = json::Object{};
  for (const auto& [kind, count] : s.violations_by_kind) by_kind.set(kind, count);
  out.set("violations_by_kind", std::move(by_kind));
  out.set("tool_calls", s.tool_calls);
  out.set("trace_sha256", s.trace_sha256);
  out.set("mac", mac_name(s.mac));
  if (s.first_error) {
    json::Value error = json::Object{};
    error.set("line", s.first_error->line);
    error.set("code", s.first_error->code);
    error.set("message", s.first_error->message);
    out.set("first_error", std::move(error));
  } else {
    out.set("first_error", nullptr);
  }
  return out;
}

// Hashes one slice of the bytes at a time: the running digest of the whole trace, and the digest of
// each line the slice completes (a line may have begun in an earlier slice).
class Verifier::Hasher {
 public:
  // The slice's line digests go to `out`, and what is learnt of each line to `facts`.
  void hash(std::string_view slice, std::vector<hash::Digest>& out, SliceFacts& facts) {
    out.clear();
    digests_.update(slice, out);
    facts.lines.resize(out.size());
    facts.contents.clear();
    const char* p = slice.data();
    const char* const end = p + slice.size();
    const char* line = at_line_start_ ? p : nullptr;
    for (LineFacts& f : facts.lines) {
      const auto* newline =
          static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      f = {};
      if (line != nullptr) learn({line, static_cast<std::size_t>(newline - line)}, f, facts);
      p = line = newline + 1;
    }
    if (!slice.empty()) at_line_start_ = slice.back() == '\n';
  }
  // Only the trace's digest, for bytes whose lines are no longer checked.
  void hash_whole(std::string_view bytes) { digests_.update_stream(bytes); }
  hash::Digest finish() { return digests_.finish(); }

 private:
  // The inline content of a model_responded line, whose key is near the start in canonical order,
  // is read, decoded and hashed here rather than on the checking thread.
  void learn(std::string_view line, LineFacts& f, SliceFacts& facts) {
    f.line = line.data();
    const std::size_t at = content_key(line);
    if (at == 0) return;
    json::KnownString where;
    if (const auto content = json::canonical_string_at(line, at, scratch_, where)) {
      f.content_at = static_cast<std::uint32_t>(at);
      f.content = static_cast<std::uint32_t>(facts.contents.size());
      facts.contents.push_back({where, hash::sha256(*content)});
    }
  }

  hash::LineHasher digests_;   // of the whole trace and of each line
  bool at_line_start_ = true;  // the bytes hashed so far end with a whole line
  std::string scratch_;        // a decoded content string
};

// The slices between the two threads of feed_from(): a ring the hashing thread fills (it takes
// the bytes from the source, hashes them and publishes the slice) while the checking thread takes
// the slices in order and releases each once checked. Each thread goes on without waiting while
// the ring is neither full nor empty; when it must wait it sleeps, and the other wakes it once the
// ring is half free (or half full) again, or before going to sleep itself, so a sleep is paid for
// by many slices rather than one.
struct Verifier::Ring {
  struct Slot {
    std::string_view bytes;  // empty: the end of the source
    std::vector<hash::Digest> digests;
    SliceFacts facts;
  };
  // One side of the hand-over: whether that thread sleeps, and the count of the other side's
  // slices (published or released) that it waits for.
  struct Sleeper {
    std::atomic<bool> asleep{false};
    std::atomic<std::uint64_t> until{0};
  };

  // On the hashing thread: slices from `source` until it gives no bytes, each hashed by `hasher`
  // (only into the trace's digest once `lines_wanted` is false).
  void fill(Hasher& hasher, const Source& source) {
    for (std::uint64_t k = 0;; ++k) {
      // Woken when half the ring is free, or all of it when the lines ahead are too many.
      const bool few_lines = lines_ahead.load() < kLinesAhead;
      wait(hashing, checking, few_lines && k >= kRingSlices / 2 ? k - kRingSlices / 2 : k,
           [&] { return k - released.load() < kRingSlices && lines_ahead.load() < kLinesAhead; });
      Slot& slot = slots[k % kRingSlices];
      slot.bytes = source({buffers.get() + (k % kRingSlices) * kSliceBytes, kSliceBytes});
      slot.digests.clear();
      if (lines_wanted.load(std::memory_order_relaxed)) {
        hasher.hash(slot.bytes, slot.digests, slot.facts);
      } else {
        hasher.hash_whole(slot.bytes);
      }
      lines_ahead.fetch_add(slot.digests.size());
      published.store(k + 1);
      wake(checking, k + 1, slot.bytes.empty());
      if (slot.bytes.empty()) return;
    }
  }
  // On the checking thread: the slice numbered k (from 0), once published.
  const Slot& take(std::uint64_t k) {
    // Woken when half the ring is full (for the first slice, at once).
    wait(checking, hashing, k == 0 ? 1 : k + kRingSlices / 2, [&] { return published.load() > k; });
    return slots[k % kRingSlices];
  }
  void release(std::uint64_t k) {
    lines_ahead.fetch_sub(slots[k % kRingSlices].digests.size());
    released.store(k + 1);
    wake(hashing, k + 1, false);
  }

  // Waits until ready(), asleep if it is not, to be woken once the other side's count reaches
  // `until`; the other side, asleep, is woken first: a thread that must wait leaves the other one
  // free to go on.
  template <typename Ready>
  void wait(Sleeper& self, Sleeper& other, std::uint64_t until, Ready ready) {
    if (ready()) return;
    std::unique_lock lock(mutex);
    self.until.store(until);
    self.asleep.store(true);
    if (other.asleep.load()) cv.notify_all();
    cv.wait(lock, ready);
    self.asleep.store(false);
  }
  // After the count of one side reached `count`: wakes the other side if it sleeps for it (or
  // `always`, at the end).
  void wake(Sleeper& other, std::uint64_t count, bool always) {
    if (other.asleep.load() && (always || count >= other.until.load())) {
      std::lock_guard lock(mutex);
      cv.notify_all();
    }
  }

  std::array<Slot, kRingSlices> slots;
  // The bytes read into the slots (address space only until a source reads into them).
  std::unique_ptr<char[]> buffers =
      std::make_unique_for_overwrite<char[]>(kRingSlices * kSliceBytes);
  // Slices published by the hashing thread and released by the checking one since feed_from()
  // began, and the line digests published and not yet released. Sequentially consistent, with
  // `asleep`: a thread going to sleep either is seen asleep or sees the count that wakes it.
  std::atomic<std::uint64_t> published{0}, released{0}, lines_ahead{0};
  std::atomic<bool> lines_wanted{true};  // false after the first error: only the digest is wanted
  Sleeper hashing, checking;
  std::mutex mutex;
  std::condition_variable cv;
};

Verifier::Verifier(VerifyOptions options)
    : options_(options),
      hasher_(std::make_unique<Hasher>()),
      ring_(std::make_unique<Ring>()),
      lines_(options_.max_line_bytes) {
  limits_.max_bytes = options_.max_line_bytes;
}

Verifier::~Verifier() = default;

void Verifier::fail(const char* code, std::string message, std::int64_t column) {
  summary_.first_error = diag::error(code, std::move(message), {}, line_, column);
}

void Verifier::feed(std::string_view bytes) {
  // After the first error only the digest still needs the bytes.
  if (summary_.first_error) return hasher_->hash_whole(bytes);
  if (bytes.size() < 2 * kSliceBytes) {
    Ring::Slot& slot = ring_->slots[0];
    hasher_->hash(bytes, slot.digests, slot.facts);
    return check_slice(bytes, slot.digests, slot.facts);
  }
  // Slices of these bytes in place, in a pipeline that has ended when it returns.
  feed_from([&](std::span<char>) {
    const std::string_view slice = bytes.substr(0, kSliceBytes);
    bytes.remove_prefix(slice.size());
    return slice;
  });
}

void Verifier::feed_from(const Source& source, const std::function<void(std::uint64_t)>& checked) {
  Ring& ring = *ring_;
  ring.published = ring.released = ring.lines_ahead = 0;
  ring.lines_wanted = !summary_.first_error;
  std::thread hashing([&] { ring.fill(*hasher_, source); });
  std::uint64_t done = 0;
  for (std::uint64_t k = 0;; ++k) {
    const Ring::Slot& slot = ring.take(k);
    if (slot.bytes.empty()) break;
    // After the first error the bytes are only hashed.
    if (!summary_.first_error) {
      check_slice(slot.bytes, slot.digests, slot.facts);
      if (summary_.first_error) ring.lines_wanted.store(false, std::memory_order_relaxed);
    }
    done += slot.bytes.size();
    ring.release(k);
    if (checked) checked(done);
  }
  hashing.join();
}

void Verifier::check_slice(std::string_view bytes, const std::vector<hash::Digest>& digests,
                           const SliceFacts& facts) {
  next_digest_ = digests.data();
  slice_facts_ = &facts;
  next_facts_ = facts.lines.data();
  check_lines(bytes);
}

void Verifier::check_lines(std::string_view bytes) {
  if (summary_.first_error) return;  // the rest is only hashed
  const auto stop = lines_.feed(bytes, [this](std::string_view line) {
    facts_now_ = next_facts_->line == line.data() ? next_facts_ : nullptr;
    check_line(line, true);
    ++next_digest_;
    ++next_facts_;
    return !summary_.first_error;
  });
  if (stop == json::LineSplitter::Stop::Over) {
    ++line_;
    fail(codes::kTraceMalformedLine,
         "line is over the size limit of " + std::to_string(options_.max_line_bytes) + " bytes");
  }
}

void Verifier::check_line(std::string_view text, bool terminated) {
  ++line_;
  if (!terminated) {
    // The writer appends each line with its '\n' in one write, so a missing '\n' is a crash
    // mid-write — unless the run had already ended.
    if (terminated_) {
      fail(codes::kTraceAfterTerminal, "unterminated bytes after the terminal event");
    } else {
      fail(codes::kTraceTruncated,
           "last line has no newline: the trace was cut short mid-write (incomplete)");
    }
    return;
  }
  if (text.empty()) return fail(codes::kTraceMalformedLine, "empty line");
  // A line is read in one pass that also proves it canonical. Only a line that pass declines is
  // read by the strict reader, for its diagnostic, or for its envelope before it is refused as not
  // canonical; it is then viewed in its canonical form.
  // The inline content the hashing thread has read is not scanned again.
  const json::KnownString* content_read = facts_now_ != nullptr && facts_now_->content_at != 0
                                              ? &slice_facts_->contents[facts_now_->content].where
                                              : nullptr;
  bool canonical = tape_.read_canonical(text, limits_, content_read);
  if (!canonical) {
    facts_now_ = nullptr;  // the line is read again from canonical_
    auto parsed = json::parse(text, limits_, line_ - 1);
    if (!parsed) {
      const auto& d = parsed.diagnostics().front();
      return fail(codes::kTraceMalformedLine, "not strict JSON (" + d.code + ": " + d.message + ")",
                  d.column);
    }
    canonical_ = json::canonical(*parsed);
    json::ReadLimits relaxed = limits_;
    relaxed.max_bytes = canonical_.size();  // canonical numbers may be longer than their lexemes
    if (!tape_.read_canonical(canonical_, relaxed)) {
      return fail(codes::kTraceMalformedLine, "line is beyond the strict reader's limits");
    }
  }
  const json::View event_object = tape_.root();
  members_.read(event_object);
  if (!check_envelope(event_object, canonical) || !check_chain()) return;
  const std::string_view event = *string_member(members_[keys().event]);
  if (!check_order(event, *string_member(members_[keys().run_id]),
                   *natural(members_[keys().seq]))) {
    return;
  }
  if (!check_and_count(event)) return;
  if (is_terminal(type_) && !check_mac(event_object)) return;
  last_type_ = type_;
  ++summary_.events;
}

// One strict JSON object with the envelope members, in canonical form, of a known event type.
bool Verifier::check_envelope(const json::View& event_object, bool canonical) {
  if (!event_object.is_object()) {
    fail(codes::kTraceMalformedLine, "line is not a JSON object");
    return false;
  }
  const auto version = natural(members_[keys().v]);
  const auto run_id = string_member(members_[keys().run_id]);
  const auto event = string_member(members_[keys().event]);
  const auto prev = members_[keys().prev];
  if (!version || *version != kFormatVersion) {
    fail(codes::kTraceBadEnvelope,
         "\"v\" must be " + std::to_string(kFormatVersion) +
             (version && *version == 1 ? " (a v1 trace has no hash chain: record it again)" : ""));
  } else if (!run_id || run_id->empty()) {
    fail(codes::kTraceBadEnvelope, "\"run_id\" must be a non-empty string");
  } else if (!natural(members_[keys().seq])) {
    fail(codes::kTraceBadEnvelope, "\"seq\" must be an integer >= 0");
  } else if (!event) {
    fail(codes::kTraceBadEnvelope, "\"event\" must be a string");
  } else if (!natural(members_[keys().t_ms])) {
    fail(codes::kTraceBadEnvelope, "\"t_ms\" must be an integer >= 0");
  } else if (line_ == 1 && prev) {
    fail(codes::kTraceBadEnvelope, "the first line has no \"prev\"");
  } else if (line_ > 1 && (!prev.is_string() || prev.as_string().size() != 64)) {
    fail(codes::kTraceBadEnvelope, "\"prev\" must be the previous line's SHA-256 (64 hex digits)");
  }
  if (summary_.first_error) return false;
  if (line_ == 1) summary_.run_id = std::string(*run_id);
  if (!canonical) {
    fail(codes::kTraceNotCanonical, "line is not in canonical form (RFC 8785)");
    return false;
  }
  type_ = event_type(*event);
  if (type_ == Event::Unknown) {
    fail(codes::kTraceUnknownEvent, "unknown event type \"" + std::string(*event) + "\"");
    return false;
  }
  return true;
}

// run_started first and only first, one run id, contiguous seq, nothing after the terminal.
bool Verifier::check_order(std::string_view event, std::string_view run_id, std::int64_t seq) {
  if (line_ == 1 && type_ != Event::RunStarted) {
    fail(codes::kTraceNoRunStarted,
         "the first event is " + std::string(event) + ", not run_started");
  } else if (line_ > 1 && type_ == Event::RunStarted) {
    fail(codes::kTraceNoRunStarted, "run_started appears again");
  } else if (line_ > 1 && run_id != *summary_.run_id) {
    fail(codes::kTraceForeignRunId, "run_id \"" + std::string(run_id) +
                                        "\" differs from the first line's \"" + *summary_.run_id +
                                        "\"");
  } else if (seq != summary_.events) {
    fail(codes::kTraceSeqBroken,
         "seq " + std::to_string(seq) + " where " + std::to_string(summary_.events) +
             " was expected (" + (seq > summary_.events ? "gap" : "duplicate or reordered") + ")");
  } else if (terminated_) {
    fail(is_terminal(type_) ? codes::kTraceSecondTerminal : codes::kTraceAfterTerminal,
         is_terminal(type_) ? "a second terminal event (" + std::string(event) + ")"
                            : std::string(event) + " after the terminal event");
  }
  return !summary_.first_error;
}

// Each line names the digest of the line before it, so an edited, dropped, inserted or reordered
// line breaks the chain at the line after it.
bool Verifier::check_chain() {
  hash::Digest named{};
  if (line_ > 1 && !(hash::from_hex(members_[keys().prev].as_string(), named) && named == prev_)) {
    fail(codes::kTraceChainBroken,
         "\"prev\" is not the SHA-256 of line " + std::to_string(line_ - 1) +
             " (that line, or this one, was changed, dropped, inserted or moved)");
    return false;
  }
  prev_ = *next_digest_;
  return true;
}

// The terminal's hmac_sha256 against the key, when one was given.
bool Verifier::check_mac(const json::View& event_object) {
  const auto mac = members_[keys().hmac_sha256];
  summary_.mac = !mac ? Mac::Absent : Mac::Unchecked;
  if (options_.mac_key.empty()) return true;
  if (!mac) {
    fail(codes::kTraceMacMismatch, "the terminal event carries no hmac_sha256: not authenticated");
    return false;
  }
  json::Value unsigned_line = event_object.to_value();
  auto& members = unsigned_line.as_object();
  members.erase(std::find_if(members.begin(), members.end(),
                             [](const json::Member& m) { return m.key == kMacMember; }));
  const std::string expected = terminal_mac(options_.mac_key, json::canonical(unsigned_line));
  if (!hash::equal_constant_time(expected, mac.as_string())) {
    fail(codes::kTraceMacMismatch, "hmac_sha256 does not match under the given key");
    return false;
  }
  summary_.mac = Mac::Verified;
  return true;
}

bool Verifier::check_consistent(std::string_view event) {
  // Every member read here was checked by check_payload to be an integer >= 0 (or absent).
  const auto inconsistent = [&](const std::string& what) {
    fail(codes::kTraceInconsistent, std::string(event) + " " + what);
    return false;
  };
  const std::int64_t t_ms = *natural(members_[keys().t_ms]);
  if (t_ms < last_t_ms_) {
    return inconsistent("goes back in time (t_ms " + std::to_string(t_ms) + " after " +
                        std::to_string(last_t_ms_) + ")");
  }
  last_t_ms_ = t_ms;
  const auto call = natural(members_[keys().call]);
  if (type_ == Event::ModelRequested && *call != summary_.model_calls + 1) {
    return inconsistent("numbers its call " + std::to_string(*call) + " after " +
                        std::to_string(summary_.model_calls) + " call(s)");
  }
  if ((type_ == Event::ModelResponded || type_ == Event::ModelFailed ||
       type_ == Event::VerificationFailed) &&
      *call != summary_.model_calls) {
    return inconsistent("names call " + std::to_string(*call) + ", not the one requested (" +
                        std::to_string(summary_.model_calls) + ")");
  }
  if (const auto content = members_[keys().content];
      content && !members_[keys().content_redacted]) {
    const auto digest = members_[keys().content_sha256];
    hash::Digest named{};  // compared as digests: no hex string is built per line
    const auto content_sha256 = [&] {
      if (facts_now_ != nullptr && facts_now_->content_at != 0 &&
          facts_now_->line + facts_now_->content_at == content.raw().data()) {
        return slice_facts_->contents[facts_now_->content].sha256;
      }
      return hash::sha256(content.as_string());
    };
    if (*natural(members_[keys().content_bytes]) !=
            static_cast<std::int64_t>(content.string_size()) ||
        (digest && !(digest.is_string() && hash::from_hex(digest.as_string(), named) &&
                     named == content_sha256()))) {
      return inconsistent("carries content that does not match its content_bytes/content_sha256");
    }
  }
  if (is_terminal(type_) &&
      natural(members_[keys().tool_calls]).value_or(0) != summary_.tool_calls) {
    return inconsistent("counts " +
                        std::to_string(natural(members_[keys().tool_calls]).value_or(0)) +
                        " tool call(s); the trace has " + std::to_string(summary_.tool_calls));
  }
  if (type_ == Event::ModelRequested && !task_mode_ && max_model_calls_ >= 0 &&
      summary_.model_calls >= max_model_calls_) {
    return inconsistent("exceeds the plan's max_iterations of " + std::to_string(max_model_calls_));
  }
  if (is_terminal(type_) && (*natural(members_[keys().model_calls]) != summary_.model_calls ||
                             *natural(members_[keys().repairs]) != summary_.repairs)) {
    return inconsistent("counts " + std::to_string(*natural(members_[keys().model_calls])) +
                        " call(s) and " + std::to_string(*natural(members_[keys().repairs])) +
                        " repair(s); the trace has " + std::to_string(summary_.model_calls) +
                        " and " + std::to_string(summary_.repairs));
  }
  if (!task_mode_) return check_projection(event);
  return check_task_sequence(event);
}

// A projection is compiled for the call about to be requested, its ledger adds up, and the
// request that follows sends exactly the tools it showed; a run that does not project sends no
// tool list and compiles no projection.
bool Verifier::check_projection(std::string_view event) {
  const auto inconsistent = [&](const std::string& what) {
    fail(codes::kTraceInconsistent, std::string(event) + " " + what);
    return false;
  };
  if (type_ == Event::ProjectionCompiled) {
    if (!projecting_) return inconsistent("in a run whose run_started declares no projection");
    if (natural(members_[keys().call]) != summary_.model_calls + 1) {
      return inconsistent("is not for the next call (" + std::to_string(summary_.model_calls + 1) +
                          ")");
    }
    if (visible_) return inconsistent("again before its call was requested");
    const json::View ledger = members_[keys().ledger];
    std::int64_t tokens = 0, bytes = 0;
    const json::View items = ledger.find("items");
    const bool ok = items.is_array() && items.each([&](std::string_view, json::View item) {
      const auto t = natural(item.find("tokens"));
      const auto b = natural(item.find("bytes"));
      if (t && b) tokens += *t, bytes += *b;
      return t && b;
    });
    const auto limit = natural(ledger.find("limit"));
    if (!ok || natural(ledger.find("charged")) != tokens ||
        natural(ledger.find("bytes")) != bytes || limit != projection_budget_ || tokens > *limit ||
        natural(ledger.find("remaining")) != *limit - tokens) {
      return inconsistent(
          "has a ledger whose items, charge, limit and remainder do not add up under the "
          "budget of run_started");
    }
    // Canonical lines: equal values have equal bytes.
    const json::View active = members_[keys().active_units];
    const bool charged_as_active =
        items.size() == active.size() && active.each([&](std::string_view, json::View unit) {
          return !items.each([&](std::string_view, json::View item) {
            return item.find("unit").raw() != unit.raw();
          });
        });
    if (!charged_as_active) {
      return inconsistent("charges units other than the active ones, one ledger item each");
    }
    const json::View visible = members_[keys().visible];
    std::string hidden;
    visible.each([&](std::string_view, json::View name) {
      const bool listed = !active.each([&](std::string_view, json::View u) {
        const std::string_view unit = u.as_string();
        const auto is = [&](std::string_view prefix) {
          return unit.size() == prefix.size() + name.as_string().size() &&
                 unit.starts_with(prefix) && unit.ends_with(name.as_string());
        };
        return !(is("tool:") || is("mcp_tool:"));
      });
      if (!listed) hidden = name.as_string();
      return listed;
    });
    if (!hidden.empty()) return inconsistent("shows '" + hidden + "', which is not active");
    visible_ = std::string(visible.raw());
  } else if (type_ == Event::ModelRequested) {
    const json::View tools = members_[keys().tools];
    if (!projecting_) {
      if (tools) return inconsistent("lists tools in a run that does not project");
      return true;
    }
    if (!visible_) return inconsistent("has no projection compiled for it");
    if (!tools || tools.raw() != *visible_) {
      return inconsistent("sends tools other than the ones its projection showed");
    }
    visible_.reset();
  } else if (visible_) {
    return inconsistent("comes between a projection and its request");
  }
  return true;
}

// Task mode has one sequence (docs/formats/trace.md, "Task-mode sequence"): each event may follow
// only the events the run loop can emit before it, under the budget run_started recorded.
bool Verifier::check_task_sequence(std::string_view event) {
  const auto out_of_place = [&](const std::string& why) {
    fail(codes::kTraceInconsistent,
         std::string(event) + " cannot follow " +
             (last_type_ == Event::Unknown
                  ? std::string("nothing")
                  : std::string(kEventTypes[static_cast<std::size_t>(last_type_)])) +
             why);
    return false;
  };
  const std::string_view state = members_[keys().terminal].as_string();
  if (state == "cancelled") return true;  // a cancellation may end the run between any two steps
  if (type_ == Event::ModelRequested) {
    const bool repair = members_[keys().kind].as_string() == "repair";
    if (repair ? !(last_type_ == Event::VerificationFailed && can_repair_)
               : last_type_ != Event::RunStarted) {
      return out_of_place(repair ? " as a repair request" : " as the initial request");
    }
    if (summary_.model_calls >= max_model_calls_) {
      return out_of_place(": the budget allows " + std::to_string(max_model_calls_) + " call(s)");
    }
  } else if (type_ == Event::ModelResponded || type_ == Event::ModelFailed) {
    if (last_type_ != Event::ModelRequested) return out_of_place("");
  } else if (type_ == Event::VerificationFailed) {
    if (last_type_ != Event::ModelResponded) return out_of_place("");
    const std::int64_t done = summary_.repairs;
    can_repair_ = done < max_repairs_;
    const std::int64_t remaining = can_repair_ ? max_repairs_ - done - 1 : 0;
    if (members_[keys().repairs_remaining].as_exact_int() != remaining) {
      return out_of_place(" with repairs_remaining other than " + std::to_string(remaining));
    }
  } else if (type_ == Event::BudgetExhausted) {
    if (!(last_type_ == Event::RunStarted ||
          (last_type_ == Event::VerificationFailed && can_repair_)) ||
        summary_.model_calls != max_model_calls_ ||
        members_[keys().limit].as_exact_int() != max_model_calls_) {
      return out_of_place(" under a budget of " + std::to_string(max_model_calls_) + " call(s)");
    }
  } else if (type_ == Event::RunCompleted) {
    if (last_type_ != Event::ModelResponded) return out_of_place("");
  } else if (type_ == Event::RunFailed) {
    const bool fits =
        (state == "invalid_output" && last_type_ == Event::VerificationFailed && !can_repair_) ||
        (state == "model_failed" && last_type_ == Event::ModelFailed) ||
        (state == "budget_exhausted" && last_type_ == Event::BudgetExhausted);
    if (!fits) return out_of_place(" as " + std::string(state));
  } else {
    return out_of_place(" in a task run");
  }
  return true;
}

// The payload of its event type, tool calls paired, and the summary's counts.
bool Verifier::check_and_count(std::string_view event) {
  if (auto bad = check_payload(type_, members_)) {
    fail(codes::kTraceBadPayload, "ill-formed " + std::string(event) + ": " + *bad);
    return false;
  }
  if (!check_consistent(event)) return false;
  if (type_ == Event::ToolCalled || type_ == Event::ToolCompleted) {
    std::string call_id(members_[keys().call_id].as_string());
    if (type_ == Event::ToolCalled) {
      if (open_calls_.contains(call_id)) {
        fail(codes::kTraceDuplicateCallId,
             "tool_called with call_id \"" + call_id + "\" while that call is still open");
        return false;
      }
      open_calls_.insert(std::move(call_id));
      ++summary_.tool_calls;
    } else if (open_calls_.erase(call_id) == 0) {
      fail(codes::kTraceUnpairedTool,
           "tool_completed with call_id \"" + call_id + "\" has no preceding tool_called");
      return false;
    } else if (const auto kind = members_[keys().error_kind];
               kind && (kind.as_string() != "soft" || members_[keys().ok].as_bool())) {
      // Only a failed call has an error kind, and the one kind recorded is "soft".
      fail(codes::kTraceInconsistent,
           "tool_completed error_kind is only \"soft\", on a call that failed (ok false)");
      return false;
    }
  } else if (type_ == Event::ModelRequested) {
    ++summary_.model_calls;
    if (members_[keys().kind].as_string() == "repair") ++summary_.repairs;
  } else if (type_ == Event::VerificationFailed) {
    const json::View violations = members_[keys().violations];
    violations.each([&](std::string_view, json::View v) {
      count_violation(v.find("code").as_string());
      return true;
    });
    if (violations.size() == 0) count_violation(event);
  } else if (type_ == Event::GuardrailViolation) {
    count_violation(members_[keys().kind].as_string());
  } else if (type_ == Event::ToolDenied) {
    // A denial answers the open call of the same id (refused at the boundary), or stands alone (a
    // batch refused before it).
    if (const auto id = members_[keys().call_id]) open_calls_.erase(std::string(id.as_string()));
    count_violation(event);
  } else if (type_ == Event::ToolsSkipped) {
    // The rest of a batch that never reached the boundary: its count names every id it lists.
    if (natural(members_[keys().count]) !=
        static_cast<std::int64_t>(members_[keys().call_ids].size())) {
      fail(codes::kTraceInconsistent, "tools_skipped's count is not the number of its call_ids");
      return false;
    }
    count_violation(event);
  } else if (type_ == Event::RunStarted) {
    task_mode_ = members_[keys().mode].as_string() == "task";
    // A limit that is missing or not a count makes every step out of budget (-1).
    const json::View budget = members_[keys().budget];
    max_model_calls_ =
        natural(budget.find(task_mode_ ? "max_model_calls" : "max_iterations")).value_or(-1);
    max_repairs_ = natural(budget.find("max_repairs")).value_or(-1);
    if (const json::View p = members_[keys().projection]) {
      projecting_ = true;
      projection_budget_ = natural(p.find("budget_tokens")).value_or(-1);
    }
  } else if (is_terminal(type_)) {
    terminated_ = true;
    summary_.terminal = std::string(members_[keys().terminal].as_string());
  }
  return true;
}

void Verifier::count_violation(std::string_view kind) {
  auto& counts = summary_.violations_by_kind;
  if (auto it = counts.find(kind); it != counts.end()) {
    ++it->second;
  } else {
    counts.emplace(kind, 1);
  }
}

Summary Verifier::finish() {
  if (!summary_.first_error) {
    if (!lines_.rest().empty()) {
      check_line(lines_.rest(), false);
    } else if (!terminated_) {
      ++line_;  // the line where the terminal event should have been
      fail(codes::kTraceNoTerminal, summary_.events == 0
                                        ? "the trace has no events (incomplete)"
                                        : "the trace ends without a terminal event (incomplete)");
    }
  }
  lines_.clear();
  summary_.trace_sha256 = hash::to_hex(hasher_->finish());
  if (!summary_.first_error && !options_.expect_sha256.empty() &&
      !hash::equal_constant_time(summary_.trace_sha256, options_.expect_sha256)) {
    line_ = 0;
    fail(codes::kTraceDigestMismatch, "the trace's SHA-256 is " + summary_.trace_sha256 +
                                          ", not the expected " + options_.expect_sha256);
  }
  if (summary_.first_error) {
    summary_.status =
        is_incomplete(summary_.first_error->code) ? Outcome::Incomplete : Outcome::Corrupt;
  }
  return std::move(summary_);
}

Result<Summary> verify(std::string_view trace_bytes, const VerifyOptions& options) {
  Verifier verifier(options);
  verifier.feed(trace_bytes);
  return verifier.finish();
}

Result<Summary> verify_file(const std::string& path, const VerifyOptions& options,
                            const Progress& progress) {
  const std::string name = path == "-" ? "<stdin>" : path;
  int fd = STDIN_FILENO;
  const bool owned = path != "-";
  if (owned) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      return diag::error(codes::kMissing,
                         "cannot open trace '" + path + "': " + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      ::close(fd);
      return diag::error(codes::kNotRegularFile, "trace '" + path + "' is a directory");
    }
  }
  std::uint64_t total = 0;
  if (struct stat st{}; progress && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    total = static_cast<std::uint64_t>(st.st_size);
  }
  Verifier verifier(options);
  int err = 0;
  // Fills `buffer` (short reads of a pipe joined): a slice is whole unless the trace ends in it.
  const auto fill = [&](std::span<char> buffer) -> std::string_view {
    std::size_t got = 0;
    while (err == 0 && got < buffer.size()) {
      const std::int64_t n = io::read_some(fd, buffer.data() + got, buffer.size() - got);
      if (n < 0) err = static_cast<int>(n);
      if (n <= 0) break;
      got += static_cast<std::size_t>(n);
    }
    return {buffer.data(), got};
  };
  // A trace of one slice is hashed on this thread; the rest of a longer one is read on the hashing
  // thread, into the slices it hashes, so this thread only checks.
  const auto first_buffer = std::make_unique_for_overwrite<char[]>(kSliceBytes);
  const std::string_view first = fill({first_buffer.get(), kSliceBytes});
  if (first.size() < kSliceBytes) {
    if (!first.empty()) {
      verifier.feed(first);
      if (progress) progress(first.size(), total);
    }
  } else {
    bool began = false;
    verifier.feed_from(
        [&](std::span<char> buffer) {
          if (!std::exchange(began, true)) return first;
          return fill(buffer);
        },
        [&](std::uint64_t checked) {
          if (progress) progress(checked, total);
        });
  }
  if (owned) ::close(fd);
  if (err != 0) {
    return diag::error(codes::kInternal, "cannot read " + name + ": " + std::strerror(-err));
  }
  return verifier.finish();
}

}  // namespace mf::trace
