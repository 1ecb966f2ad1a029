// The model of one mf-run, opened with the reply cache when --cache asks for one
// (docs/live-backends.md). The store the cache uses is the run's one store handle: task mode's
// --store keeping of the trace and the result goes through the same handle.
#pragma once

#include <memory>
#include <string>

#include "mf/model/live.hpp"
#include "mf/model/model.hpp"
#include "mf/trace/writer.hpp"

namespace mf::runtime::detail {

struct RunModel {
  model::StoreSession session;
  std::unique_ptr<model::Model> model;
};

// `store_dir`: --store (or MF_STORE), empty when neither was given; `keep`: the run itself also
// writes to the store (task mode's --store). Under batched durability the reply cache follows the
// trace's policy (ReplyCache::batch): synced at the run's end and at the trace's interval.
Result<RunModel> open_run_model(const std::string& spec, model::CacheMode cache,
                                std::int64_t repeat, const std::string& store_dir, bool keep,
                                trace::Durability durability);

}  // namespace mf::runtime::detail
