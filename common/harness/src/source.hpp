// The harness source model (private to the compiler): the schema pass reads a parsed document into
// it, reporting every field fault with its pointer; later passes work on it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"
#include "mf/prompt/projection.hpp"

namespace mf::harness {

struct ArgumentMatch {
  std::string prior;    // argument of the prerequisite's call
  std::string current;  // argument of this node's call
};

struct Prerequisite {
  std::string node_id;
  std::vector<ArgumentMatch> matches;
  std::string pointer;
};

struct Node {
  std::string node_id;
  std::string tool_id;
  std::int64_t tool_version = 0;
  bool required = false;
  std::vector<Prerequisite> prerequisites;
  std::optional<std::string> terminal_result;
  std::vector<std::string> produces;
  std::string pointer;  // /graph/nodes/<id>
};

struct Budgets {
  std::int64_t max_iterations = 0;
  std::int64_t max_validation_retries = 0;
  std::int64_t max_tool_errors = 0;
  std::int64_t max_prerequisite_violations = 0;
  std::int64_t max_premature_terminal_attempts = 0;
  // Tool calls run from one model reply; the rest are refused. Optional (the runtime's default,
  // kDefaultMaxToolCallsPerReply, applies), and written into the plan only when given, so plans
  // that leave it out keep their digests.
  std::optional<std::int64_t> max_tool_calls_per_reply;
};

struct ContextPolicy {
  std::string strategy_id;
  std::int64_t budget_tokens = 0;
  std::int64_t keep_recent_iterations = 0;
  std::array<double, 3> phase_thresholds{};
  // Fractions of budget_tokens at which the model is told how full its context is (a transient
  // user message, docs/compaction.md "Context warnings"); empty: never. Left out of the plan when
  // empty, so plans compiled without it keep their bytes and digests.
  std::vector<double> warning_thresholds{};
};

// The optional projection section (docs/projection.md, "In a harness"): what each model turn of
// a run of the plan is shown.
struct ProjectionPolicy {
  prompt::Mode mode = prompt::Mode::Compiled;
  std::int64_t budget_tokens = 8192;
  std::int64_t candidate_limit = 64;
  std::vector<prompt::Unit> units;  // declared; the nodes' tools join them at resolution
};

struct Source {
  std::string harness_id;
  std::int64_t harness_version = 0;
  std::vector<std::string> stage_kind_ids;  // sorted
  std::string model_profile_id;
  std::string policy_id;
  std::string system_instructions;
  bool include_request_context = false;
  Budgets budgets;
  ContextPolicy context;
  std::vector<Node> nodes;  // sorted by node_id
  std::vector<std::string> declared_artifact_ids;
  std::string declared_pointer;  // /artifacts/declared_artifact_ids
  // terminal_result -> artifact ids, in source order, with the pointer of each entry.
  struct TerminalArtifacts {
    std::string terminal_result;
    std::vector<std::string> artifact_ids;
    std::string pointer;
  };
  std::vector<TerminalArtifacts> required_by_terminal;
  std::optional<ProjectionPolicy> projection;
};

// The schema phase: MF-S020..S026 faults, every one reported.
Result<Source> read_source(const json::Value& doc);

// The canonical semantic payload source_sha256 is computed over.
json::Value semantic_payload(const Source& s);
// The members the payload and the plan share, written once.
json::Value prompt_json(const Source& s);
json::Value budgets_json(const Budgets& b);
json::Value context_json(const ContextPolicy& c);
// A context policy's warning_thresholds: 1..8 increasing numbers in (0, 1], else nullopt.
std::optional<std::vector<double>> warning_thresholds(const json::Value& v);
inline constexpr const char* kWarningThresholdsRule =
    "warning_thresholds must be 1..8 increasing numbers in (0, 1]";
// {mode, budget_tokens, candidate_limit, units}: the units normalized and sorted by id.
json::Value projection_json(const ProjectionPolicy& p);

// The projection catalog of a harness or plan: the declared units over the tools of its nodes
// (MF-P002, MF-P003; a fault of the catalog as a whole points at /projection/units).
Result<prompt::Catalog> projection_catalog(std::vector<prompt::Unit> declared,
                                           const std::vector<prompt::ToolSource>& tools);

// A pointer one token or index below `base`.
std::string pointer_at(std::string base, std::string_view token);
std::string pointer_at(std::string base, std::size_t index);

bool valid_node_id(std::string_view s);          // ^[a-z][a-z0-9_]{0,63}$
bool valid_terminal_result(std::string_view s);  // ^[A-Z][A-Z0-9_]*$ (at most 64)

}  // namespace mf::harness
