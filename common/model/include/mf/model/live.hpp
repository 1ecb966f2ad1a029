// The reply cache of the live backends (docs/live-backends.md, "Record and replay"): replies kept
// in the content-addressed store under refs cache/model/<request_sha256>/<repeat>, so a campaign
// recorded once replays without the network or a key. One cache serves every thread of a
// process; it takes the lock its store is used under.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/model/model.hpp"

namespace mf::store {
class Store;
}

namespace mf::model {

// Checks a model spec as open_model would, without needing what a call needs (the secret
// variable, the cache): the scripted file, the sim parameters, or the live profile.
Status check_model_spec(const std::string& spec);

class ReplyCache {
 public:
  // `lock` is held around every use of the store (the caller's other uses of it take the same
  // lock).
  ReplyCache(std::shared_ptr<store::Store> store, std::shared_ptr<std::mutex> lock)
      : store_(std::move(store)), lock_(std::move(lock)) {}

  // The recorded reply of (request, repeat), or nothing when it was never recorded.
  Result<std::optional<Reply>> get(const std::string& request_sha256, std::int64_t repeat);
  // Records a reply (replacing an earlier recording of the same key): committed and synced before
  // it returns, unless batch() was called.
  Status put(const std::string& request_sha256, std::int64_t repeat, const Reply& reply);

  // Batched durability (--durability batch), the trace writer's policy: put() only holds a reply
  // (get() sees it), and the replies held are committed in one synced transaction by the first
  // put() once `interval` has passed or 1 MiB is held since the last commit, and by flush().
  void batch(std::chrono::milliseconds interval) { interval_ = interval; }
  // Commits the replies held (one synced transaction); nothing to do when none are.
  Status flush();
  // Commits what is held; a failure here is lost, so the run calls flush() itself.
  ~ReplyCache();
  ReplyCache(const ReplyCache&) = delete;
  ReplyCache& operator=(const ReplyCache&) = delete;

 private:
  Status flush_locked();

  std::shared_ptr<store::Store> store_;
  std::shared_ptr<std::mutex> lock_;
  std::optional<std::chrono::milliseconds> interval_;      // set by batch()
  std::vector<std::pair<std::string, std::string>> held_;  // ref name, reply bytes
  std::size_t held_bytes_ = 0;
  std::chrono::steady_clock::time_point committed_at_ = std::chrono::steady_clock::now();
};

// The store a process's runs share: one handle and one lock for the reply cache and for what the
// caller keeps there itself (traces, reports), and the options that open live models over it.
struct StoreSession {
  std::shared_ptr<store::Store> store;  // null when neither the cache nor the caller needs one
  std::shared_ptr<std::mutex> lock;
  OpenOptions models;
};

// `store_dir`: --store (or MF_STORE), empty when neither was given (the cache then uses the
// default store); `keep`: the caller writes to the store too. A read-only cache alone opens the
// store read-only and never creates it.
Result<StoreSession> open_store_session(const std::string& store_dir, CacheMode cache, bool keep);

}  // namespace mf::model
