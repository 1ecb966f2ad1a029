// The trace verifier behind mf-replay (docs/formats/trace.md): checks the integrity rules of a
// JSONL trace (docs/formats/trace.md) in one streaming pass and summarises it. Memory stays flat as
// the trace grows: lines are checked as they arrive, the bytes are hashed incrementally, and only
// open tool calls are remembered. Never constructs a model.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/jsonl.hpp"
#include "mf/json/reader.hpp"
#include "mf/json/tape.hpp"
#include "mf/json/value.hpp"
#include "mf/trace/events.hpp"

namespace mf::trace {

enum class Outcome : std::uint8_t {
  Ok,          // every rule holds and one terminal event ends the run
  Incomplete,  // cut short (a crash): an unterminated last line, or no terminal event yet
  Corrupt,     // some line breaks a rule
};

std::string_view outcome_name(Outcome o);  // "ok", "incomplete", "corrupt"

// What the verifier could say of the terminal event's hmac_sha256.
enum class Mac : std::uint8_t {
  Absent,     // the trace carries none
  Unchecked,  // it carries one and no key was given
  Verified,   // it carries one and it is right under the given key
};

std::string_view mac_name(Mac m);  // "absent", "unchecked", "verified"

struct Summary {
  Outcome status = Outcome::Ok;
  std::optional<std::string> run_id;    // from the first line, when it has one
  std::optional<std::string> terminal;  // the terminal event's "terminal" state
  // Counts cover the events accepted before the first error.
  std::int64_t events = 0;
  std::int64_t model_calls = 0;  // model_requested events
  std::int64_t repairs = 0;      // model_requested with "kind":"repair"
  std::int64_t tool_calls = 0;   // tool_called events
  // verification_failed: one per violation, keyed by its code; guardrail_violation: keyed by its
  // "kind"; tool_denied: keyed by the event type.
  std::map<std::string, std::int64_t, std::less<>> violations_by_kind;
  std::string trace_sha256;  // of the exact bytes, all of them
  Mac mac = Mac::Absent;
  std::optional<diag::Diagnostic> first_error;  // set unless status is Ok
};

// {"events","first_error":null|{"code","line","message"},"model_calls","repairs","run_id",
//  "mac","status","terminal","tool_calls","trace_sha256","violations_by_kind"}
json::Value to_json(const Summary& s);

struct VerifyOptions {
  std::size_t max_line_bytes = json::kMaxHeldBytes;  // a longer line is malformed (MF-E001)
  // Non-empty: the terminal event must carry the right hmac_sha256 under this key (MF-E017).
  std::string mac_key{};
  // Non-empty: the bytes must have this SHA-256, lowercase hex (MF-E018).
  std::string expect_sha256{};
};

// Streaming verifier: feed() the bytes in chunks of any size, then finish() once. A large chunk
// is hashed (the trace's digest and each line's) on a second thread while its lines are checked.
class Verifier {
 public:
  explicit Verifier(VerifyOptions options = {});
  ~Verifier();
  Verifier(const Verifier&) = delete;
  Verifier& operator=(const Verifier&) = delete;
  void feed(std::string_view bytes);
  // The next bytes of the trace, on the hashing thread: in `buffer`, or in memory that stays valid
  // until feed_from() returns; empty at the end.
  using Source = std::function<std::string_view(std::span<char> buffer)>;
  // feed() for the bytes `source` gives, taken and hashed on a second thread up to a ring of
  // slices ahead of the checks; `checked` is told the bytes checked so far after each slice.
  void feed_from(const Source& source, const std::function<void(std::uint64_t)>& checked = {});
  Summary finish();

 private:
  class Hasher;
  struct Ring;
  // What the hashing thread works out about each line it completes, for the checking thread to
  // take instead of working it out again; taken only for the very bytes checked (the same
  // address), so a line that began in an earlier slice, or a wrong guess, costs only the work.
  struct LineFacts {
    // The line's first byte; null when it began in an earlier slice.
    const char* line = nullptr;
    // Where the string after the line's first "content" key opens (0: there is none), and its
    // decoded text's digest in SliceFacts::contents (the checks take it for the top-level
    // member's only when the addresses agree).
    std::uint32_t content_at = 0;
    std::uint32_t content = 0;
  };
  struct ContentFacts {
    json::KnownString where;  // in the line
    hash::Digest sha256{};    // of the decoded text
  };
  struct SliceFacts {
    std::vector<LineFacts> lines;  // one per line the slice completes, as its digests
    std::vector<ContentFacts> contents;
  };
  // The bytes of one slice, with the digests and facts of the lines it completes.
  void check_slice(std::string_view bytes, const std::vector<hash::Digest>& digests,
                   const SliceFacts& facts);
  void check_lines(std::string_view bytes);
  void check_line(std::string_view text, bool terminated);
  // The steps of check_line; each returns false after recording the first error.
  bool check_envelope(const json::View& event_object, bool canonical);
  bool check_order(std::string_view event, std::string_view run_id, std::int64_t seq);
  bool check_and_count(std::string_view event);
  // What the payload says against the events before it (MF-E015), and the chain (MF-E016).
  bool check_consistent(std::string_view event);
  bool check_task_sequence(std::string_view event);
  bool check_chain();
  bool check_mac(const json::View& event_object);
  void fail(const char* code, std::string message, std::int64_t column = 0);
  bool check_projection(std::string_view event);
  void count_violation(std::string_view kind);

  VerifyOptions options_;
  json::ReadLimits limits_;
  std::unique_ptr<Hasher> hasher_;
  std::unique_ptr<Ring> ring_;
  // The digest of the line being checked, and the facts of the slice and of the line.
  const hash::Digest* next_digest_ = nullptr;
  const SliceFacts* slice_facts_ = nullptr;  // of the slice being checked
  const LineFacts* next_facts_ = nullptr;
  const LineFacts* facts_now_ = nullptr;  // of the line being checked, when they are its own
  Summary summary_;
  json::LineSplitter lines_;
  std::int64_t line_ = 0;  // lines checked so far
  bool terminated_ = false;
  json::Tape tape_;        // the line being checked
  Members members_;        // its members
  std::string canonical_;  // the canonical form of a line that is not canonical
  std::unordered_set<std::string> open_calls_;
  hash::Digest prev_{};  // SHA-256 of the last line checked
  std::int64_t last_t_ms_ = 0;
  Event type_ = Event::Unknown;       // the event type of the line being checked
  Event last_type_ = Event::Unknown;  // of the last line checked; Unknown before the first
  // From run_started: the mode and, in task mode, the budget the sequence is checked against.
  bool task_mode_ = false;
  std::int64_t max_model_calls_ = 0;
  std::int64_t max_repairs_ = 0;
  bool can_repair_ = false;  // the last verification_failed left a repair
  // Harness mode with projection: every request carries exactly the tools the projection compiled
  // for its call showed (the last projection's visible list, until a request consumes it).
  bool projecting_ = false;
  std::int64_t projection_budget_ = -1;
  std::optional<std::string> visible_;  // canonical bytes
};

// The whole trace in memory. Fails only for reasons outside the trace (never, today).
Result<Summary> verify(std::string_view trace_bytes, const VerifyOptions& options = {});

// How far long work is: `done` of `total` (bytes of a trace, or traces), total 0 when unknown.
using Progress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Streams a file ("-" = stdin; FIFOs accepted) in 128 KiB slices, read on the hashing thread into a
// fixed ring of them. MF-S013 when it cannot be opened, MF-S014 for a directory, MF-I001 for a read
// error mid-stream. `progress` is told the bytes checked after each slice, of the file's size (0
// for a pipe).
Result<Summary> verify_file(const std::string& path, const VerifyOptions& options = {},
                            const Progress& progress = {});

}  // namespace mf::trace
