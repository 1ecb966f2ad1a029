// Opening one mf-run's model with the reply cache (run_model.hpp) over the run's one store handle.
#include "run_model.hpp"

#include "mf/diag/codes.hpp"

namespace mf::runtime::detail {

Result<RunModel> open_run_model(const std::string& spec, model::CacheMode cache,
                                std::int64_t repeat, const std::string& store_dir, bool keep,
                                trace::Durability durability) {
  if (cache != model::CacheMode::Off && !model::is_live_spec(spec)) {
    return diag::error(
        diag::codes::kUsage,
        "--cache applies to live models (openai:, anthropic:), not \"" + spec + "\"");
  }
  RunModel out;
  auto session = model::open_store_session(store_dir, cache, keep);
  if (!session) return session.take_diagnostics();
  out.session = std::move(*session);
  out.session.models.repeat = repeat;
  if (durability == trace::Durability::Batch && out.session.models.replies) {
    out.session.models.replies->batch(trace::WriterOptions{}.sync_interval);
  }
  auto model = model::open_model(spec, out.session.models);
  if (!model) return model.take_diagnostics();
  out.model = std::move(*model);
  return out;
}

}  // namespace mf::runtime::detail
