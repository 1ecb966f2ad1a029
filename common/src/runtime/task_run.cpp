#include "mf/runtime/task_run.hpp"

#include <sys/random.h>

#include <array>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"

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
  Result<std::unique_ptr<model::Model>> model = model::open_model(request.model_spec);
  if (!model) return model.take_diagnostics();

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
  options.trace_content = request.trace_content;
  options.durability = request.durability == trace::Durability::Event ? "event" : "batch";
  options.cancel = request.cancel;
  trace::WriterOptions wo;
  wo.run_id = request.run_id.empty() ? new_run_id() : request.run_id;
  wo.fixed_clock = request.fixed_clock;
  wo.durability = request.durability;
  auto writer = trace::Writer::open(request.trace_path, wo);
  if (!writer) return writer.take_diagnostics();

  return run_task(*task, **model, **writer, options);
}

}  // namespace mf::runtime
