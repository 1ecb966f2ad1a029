// The campaign journal: the interface `run_suite` resumes from and records into, and its two
// places, an append-only JSONL file or refs in the store.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/store/store.hpp"

namespace mf::eval {

// A finished attempt as its journal holds it: its report entry, and the journal line it is on (0
// in the store).
struct JournalEntry {
  json::Value result;
  std::int64_t line = 0;
};

// Finished attempts, kept as they finish so an interrupted campaign resumes where it stopped
// (docs/formats/eval.md, "Campaigns"). An attempt is "<case id>.<repeat>". A journal has one
// writer at a time: opening it takes a lock the kernel drops when the process ends.
class Journal {
 public:
  virtual ~Journal() = default;
  // The result the journal held for `attempt` when it was opened, when there is one.
  virtual std::optional<JournalEntry> find(const std::string& attempt) const = 0;
  // True when find() finds nothing, whatever it is asked: the journal held no attempt.
  virtual bool empty() const = 0;
  // Records a finished attempt; safe to call from several threads at once.
  virtual Status append(const std::string& attempt, const json::Value& result) = 0;
  // What diagnostics about a line name: the file, or the store's journal refs.
  virtual std::string name() const = 0;
};

// An append-only JSONL file: one canonical line {"v":2,"campaign","attempt","result","prev"?,
// "hmac_sha256"?} per attempt, written before the attempt counts as done. `prev` is the SHA-256
// of the line before (absent on the first); with a `mac_key`, hmac_sha256 is the HMAC-SHA256 of
// the line without it. Another process holding the file's lock is MF-V005. With `resume` the
// attempts it holds are reused: a last line cut short (a kill mid-write) is dropped; a line over
// json::kMaxHeldBytes, not of the format or of another campaign is MF-V003; a line off the chain,
// or (with a key) without the right MAC, is MF-V004. Without it the file starts empty.
Result<std::unique_ptr<Journal>> open_file_journal(const std::string& path,
                                                   const std::string& campaign, bool resume,
                                                   const std::string& mac_key = "");

// In the store (`mf-eval run --store`): each attempt's entry as an object under the ref
// campaign/<suite_id>/journal/<first 16 hex digits of the campaign>/<attempt>, written in one
// LMDB transaction. Only one campaign's refs are read, so another campaign's are never mixed in.
// `lock` serialises the store with whoever else writes to it (the traces, the reply cache).
// One writer at a time: the lock on the file `lock_path` (MF-V005 when another process holds it).
// Without `resume` nothing already there is reused.
Result<std::unique_ptr<Journal>> store_journal(std::shared_ptr<store::Store> store,
                                               std::shared_ptr<std::mutex> lock,
                                               const std::string& suite_id,
                                               const std::string& campaign, bool resume,
                                               const std::string& lock_path);

}  // namespace mf::eval
