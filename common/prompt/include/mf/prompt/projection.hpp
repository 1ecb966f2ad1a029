// Prompt projection (docs/projection.md): which prompt units a model sees on one turn. A catalog of
// units (tools, MCP tools, skills, instructions, resources) is compiled against the turn's input
// (text, trusted signals, needs, host selections and denials, granted capabilities, a token
// budget) into the selected and rejected units with their reasons, the active units that fit the
// budget, the tool schemas the model sees, the rendered guidance, a token ledger and a fingerprint.
// Visibility is never authority: the executor keeps every bound tool and rechecks every call.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/json/value.hpp"

namespace mf::prompt {

enum class Kind { Tool, McpTool, Skill, Instruction, Resource };
enum class Activation { Relevant, Always };
enum class Mode { Compiled, AllTools };

struct Trigger {
  enum class On { Keyword, Phrase, Signal, Need } on = On::Keyword;
  std::string value;
  std::int64_t weight = 0;  // 0..100000
};

struct Unit {
  std::string id;  // "<kind>:<name>", e.g. "tool:read", "skill:review"
  Kind kind = Kind::Skill;
  std::string name;
  std::string description;
  std::vector<std::string> aliases;
  std::vector<Trigger> triggers;
  Activation activation = Activation::Relevant;
  std::vector<std::string> capabilities;  // every one must be granted
  std::vector<std::string> requirements, suggests, conflicts,
      supersedes;               // unit ids ("requires" in JSON)
  std::int64_t priority = 100;  // 0..1000
  bool mandatory = false;       // when selected it must fit, or the projection fails
  // tool and mcp_tool: what the model is shown, {"description","input_schema","name"}.
  json::Value schema;
  // the other kinds: the guidance text, and an optional shorter variant.
  std::string content;
  std::string summary;
};

// A tool the catalog may project: its model-facing name, description, closed input schema and
// the capabilities a call needs; `connector` when an MCP server provides it (docs/connectors.md).
struct ToolSource {
  std::string name;
  std::string description;
  json::Value input_schema;
  std::vector<std::string> capabilities;
  bool connector = false;
};

// The unit id of a tool: "tool:<name>", or "mcp_tool:<name>" for a connector tool.
std::string tool_unit_id(const std::string& name, bool connector);

// Reads the "units" array of a units document or a harness's projection section; `pointer` is
// where that array sits, for diagnostics (MF-P001).
Result<std::vector<Unit>> units_from_json(const json::Value& units, const std::string& pointer);

// Every tool becomes a unit (tool_unit_id) with its schema and capabilities; a declared unit of
// that id refines it (aliases, triggers, activation, relations, priority, mandatory). A declared
// tool unit without a tool is MF-P002, and so is a declared mcp_tool unit with neither a connector
// tool nor a schema of its own; one that refines a connector tool and declares a schema is MF-P001
// (the pinned descriptor's schema is the one shown). Two tools of one name are MF-P003.
Result<std::vector<Unit>> with_tools(std::vector<Unit> declared,
                                     const std::vector<ToolSource>& tools);

// The normalized JSON of a unit (every default filled in, sets sorted): what plans carry.
json::Value to_json(const Unit& unit);

// An immutable, indexed catalog. Checks that ids are unique and well formed, that every relation
// names a unit of the catalog, and that supersession has no cycle (MF-P002, MF-P003).
class Catalog {
 public:
  static Result<Catalog> build(std::vector<Unit> units);
  const std::vector<Unit>& units() const;  // sorted by id
  const std::string& sha256() const;       // of the canonical normalized units
  const Unit* find(const std::string& id) const;
  struct Index;
  const Index& index() const { return *index_; }

 private:
  std::shared_ptr<const Index> index_;
};

struct Input {
  std::string text;
  std::vector<std::string> signals, needs, selected, denied;  // sets
  std::vector<std::string> capabilities;                      // granted
  std::int64_t budget_tokens = 8192;                          // 1..10000000
  Mode mode = Mode::Compiled;
  std::int64_t candidate_limit = 64;  // 1..256; compiled mode only
};

// {"text","signals","needs","selected","denied","capabilities","budget_tokens","mode",
//  "candidate_limit"}; a mode other than compiled|all_tools is MF-P004 (as is any other fault).
Result<Input> input_from_json(const json::Value& input);

struct Decision {
  std::string unit;
  std::int64_t score = 0;
  std::vector<std::string> reasons;
};

struct LedgerItem {
  std::string unit;
  std::string variant;  // "full" | "summary"
  std::int64_t bytes = 0;
  std::int64_t tokens = 0;
};

struct Ledger {
  std::int64_t limit = 0;
  std::int64_t charged = 0;  // sum of the items' tokens
  std::int64_t remaining = 0;
  std::int64_t bytes = 0;         // sum of the items' bytes = guidance bytes + schema bytes
  std::vector<LedgerItem> items;  // in render order: guidance units, then tools, each by id
};

struct Projection {
  std::string fingerprint;
  std::string catalog_sha256;
  Mode mode = Mode::Compiled;
  std::vector<Decision> selected;  // before packing, by id
  std::vector<Decision> rejected;  // by id
  // Candidates ranked past candidate_limit: counted, not listed (neither selected nor rejected).
  std::int64_t beyond_candidate_limit = 0;
  std::vector<std::string> active;         // after packing, by id
  std::vector<std::string> visible_tools;  // model-facing names of the active tool units
  std::vector<json::Value> tool_schemas;   // their schemas, in the same order
  std::string guidance;                    // the active guidance units, rendered
  Ledger ledger;
  std::string packing;  // "exact" | "greedy"
};

// Compiles one turn. Selected mandatory units that cannot fit are MF-P005 (pointer
// /budget_tokens of the input; the message names the units and the tokens they need).
Result<Projection> project(const Catalog& catalog, const Input& input);

// The canonical document mf-compile project prints (docs/projection.md).
json::Value to_json(const Projection& projection);
// {bytes, charged, items: [{bytes, tokens, unit, variant}], limit, remaining}
json::Value to_json(const Ledger& ledger);
// A readable account of every decision.
std::string explain(const Projection& projection, const Catalog& catalog);

// The text of a rendered tool schema and of a guidance block: what the ledger charges.
std::string render_schema(const json::Value& schema);
std::string render_guidance(const Unit& unit, bool summary);
// The token estimate of `bytes` rendered bytes: ceil(bytes * 1.15 / 4), at least 1.
std::int64_t estimate_tokens(std::int64_t bytes);

const char* name(Mode mode);

// The packer (multiple-choice knapsack over groups), public for its differential tests. Each
// item offers one or two variants (full first, then a summary), and an optional item may also be
// omitted. An item is kept only with every item it `needs` (indexes into the same list), so an
// item and its requirement closure are packed as one group; a mandatory item's requirements are
// mandatory too. The objective is lexicographic: most items kept, then most kept in full, then
// the largest sum of kept weights.
struct PackItem {
  bool mandatory = false;
  std::int64_t weight = 0;
  std::vector<std::int64_t> tokens;  // per variant: [full] or [full, summary]
  std::vector<int> needs;            // items that must be kept with this one
};
struct Pack {
  bool feasible = false;
  bool exact = false;       // solved exactly (or provably optimal)
  std::vector<int> choice;  // per item: -1 omitted, else the variant index
};
Pack pack_exact(const std::vector<PackItem>& items, std::int64_t budget);
Pack pack_greedy(const std::vector<PackItem>& items, std::int64_t budget);  // items in rank order
// Exact when small enough (the groups' options x budget cells within a bound) or when everything
// fits; greedy otherwise.
Pack pack(const std::vector<PackItem>& items, std::int64_t budget);

}  // namespace mf::prompt
