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

// Finished attempts, kept as they finish so an interrupted campaign resumes where it stopped
// (docs/formats/eval.md, "Campaigns"). An attempt is "<case id>.<repeat>".
class Journal {
 public:
  virtual ~Journal() = default;
  // The result the journal held for `attempt` when it was opened, when there is one.
  virtual std::optional<json::Value> find(const std::string& attempt) const = 0;
  // Records a finished attempt; safe to call from several threads at once.
  virtual Status append(const std::string& attempt, const json::Value& result) = 0;
};

// An append-only JSONL file: one canonical line {"v":1,"campaign","attempt","result"} per
// attempt, written before the attempt counts as done. With `resume` the attempts it holds are
// reused: a last line cut short (a kill mid-write) is dropped, a line of another campaign is
// MF-V003, as is any other damage. Without it the file starts empty.
Result<std::unique_ptr<Journal>> open_file_journal(const std::string& path,
                                                   const std::string& campaign, bool resume);

// In the store (`mf-eval run --store`): each attempt's entry as an object under the ref
// campaign/<suite_id>/journal/<first 16 hex digits of the campaign>/<attempt>, written in one
// LMDB transaction. Only one campaign's refs are read, so another campaign's are never mixed in.
// `lock` serialises the store with whoever else writes to it (the traces, the reply cache).
// Without `resume` nothing already there is reused.
std::unique_ptr<Journal> store_journal(std::shared_ptr<store::Store> store,
                                       std::shared_ptr<std::mutex> lock,
                                       const std::string& suite_id, const std::string& campaign,
                                       bool resume);

}  // namespace mf::eval
