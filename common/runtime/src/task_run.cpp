// `mf-run --task` (task_run.hpp): every input loaded and checked before the trace is opened, then
// the loop.
#include "mf/runtime/task_run.hpp"

#include "run_model.hpp"

#include <sys/random.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/store/refs.hpp"
#include "mf/store/store.hpp"

namespace mf::runtime {

std::string new_run_id() {
  std::array<unsigned char, 8> bytes{};
  if (getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    bytes.fill(0);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "run-";
  for (unsigned char b : bytes) {
    id.push_back(kHex[b >> 4]);
    id.push_back(kHex[b & 0xF]);
  }
  return id;
}

Result<RunOutcome> run_task_request(const TaskRunRequest& request) {
  Result<std::string> bytes = io::read_input(request.task_path, 1u << 20);
  if (!bytes) return bytes.take_diagnostics();
  Result<Task> task = parse_task(*bytes);
  if (!task) return task.take_diagnostics();

  RunOptions options;
  if (request.check_evidence) {
    const json::Value* repository = task->input.find("repository");
    if (repository == nullptr || !repository->is_string()) {
      return diag::error(diag::codes::kSchema,
                         "--check-evidence needs input.repository, the root evidence is read from",
                         "/input/repository");
    }
    options.semantic = evidence_check(repository->as_string());
  }
  const bool keep = !request.store_dir.empty();
  if (keep && request.trace_path == "-") {
    return diag::error(diag::codes::kUsage, "--store needs the trace in a file, not on stdout");
  }
  Result<detail::RunModel> model =
      detail::open_run_model(request.model_spec, request.cache, request.repeat, request.store_dir,
                             keep, request.durability);
  if (!model) return model.take_diagnostics();
  store::Store* store = keep ? model->session.store.get() : nullptr;
  options.trace_content = request.trace_content;
  options.durability = request.durability == trace::Durability::Event ? "event" : "batch";
  options.cancel = request.cancel;
  trace::WriterOptions wo;
  wo.run_id = request.run_id.empty() ? new_run_id() : request.run_id;
  if (store && !store::valid_ref_name(store::refs::run_trace(wo.run_id))) {
    return diag::error(diag::codes::kUsage, "run id \"" + wo.run_id + "\" cannot name a store ref");
  }
  // Under batched durability the responses are kept with the trace in one transaction at the end,
  // so the store is not synced once per model call.
  const bool batched = request.durability == trace::Durability::Batch;
  std::vector<std::pair<std::string, std::string>> responses;  // ref, content
  if (store && request.trace_content == TraceContent::Store) {
    options.keep_content = [&](std::int64_t call, std::string_view content) -> Status {
      std::string ref = store::refs::run_response(wo.run_id, call);
      if (batched) {
        responses.emplace_back(std::move(ref), content);
        return {};
      }
      auto kept = store->put_named(ref, content);
      return kept ? Status() : Status(kept.take_diagnostics());
    };
  }
  wo.fixed_clock = request.fixed_clock;
  wo.durability = request.durability;
  wo.mac_key = request.mac_key;
  auto writer = trace::Writer::open(request.trace_path, wo);
  if (!writer) return writer.take_diagnostics();

  Result<RunOutcome> outcome = run_task(*task, *model->model, **writer, options);
  if (!store || (!outcome && responses.empty())) return outcome;
  // The trace is complete and closed: keep it, and the verified result, under the run's refs, with
  // the responses a batched run held back.
  Status kept = store->batch([&]() -> Status {
    for (const auto& [ref, content] : responses) {
      auto put = store->put_named(ref, content);
      if (!put) return put.take_diagnostics();
    }
    if (!outcome) return {};
    Result<hash::Digest> trace_digest = store->put_file(request.trace_path);
    if (!trace_digest) return trace_digest.take_diagnostics();
    if (Status s = store->set_ref(store::refs::run_trace(wo.run_id), *trace_digest); !s) return s;
    if (!outcome->completed()) return {};
    auto result =
        store->put_named(store::refs::run_result(wo.run_id), json::canonical_file(outcome->output));
    return result ? Status() : Status(result.take_diagnostics());
  });
  if (!kept) return kept.take_diagnostics();
  return outcome;
}

}  // namespace mf::runtime
