// mf-compile's file side (command.hpp): reading the source, catalogs and profiles, compiling, and
// publishing the plan and its report to a directory, stdout or the store.
#include "mf/harness/command.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "mf/diag/codes.hpp"
#include "mf/diag/report.hpp"
#include "mf/harness/compiler.hpp"
#include "mf/harness/millforge.hpp"
#include "mf/harness/plan.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/diagnostics.hpp"
#include "mf/json/reader.hpp"
#include "mf/json/source_map.hpp"
#include "mf/prompt/projection.hpp"
#include "mf/store/refs.hpp"
#include "mf/store/store.hpp"
#include "mf/text/suggest.hpp"
#include "mf/tools/catalog.hpp"
#include "mf/tools/custom_tools.hpp"
#include "mf/yaml/reader.hpp"

namespace mf::harness {
namespace {

namespace codes = diag::codes;
using json::Value;

constexpr std::size_t kMaxSourceBytes = 1 << 20;
constexpr std::size_t kMaxCatalogBytes = 16 << 20;

std::string display(const std::string& path) {
  return path == "-" ? "<stdin>" : path;
}

// Names the file each diagnostic is about (its source) unless it names one already: shown once,
// before the line, in place of the source the command reads.
diag::Diagnostics about(const std::string& file, diag::Diagnostics ds) {
  for (auto& d : ds) {
    if (d.source.empty()) d.source = display(file);
  }
  return ds;
}

Result<Format> source_format(const CompileArgs& args, std::string_view text) {
  if (args.format == "yaml") return Format::Yaml;
  if (args.format == "json") return Format::Json;
  if (!args.format.empty()) {
    return diag::error(codes::kUnsupportedFormat,
                       "format \"" + args.format + "\" is neither yaml nor json");
  }
  const std::string& p = args.source;
  auto ends_with = [&](std::string_view suffix) {
    return p.size() >= suffix.size() &&
           p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".yaml") || ends_with(".yml")) return Format::Yaml;
  if (ends_with(".json")) return Format::Json;
  if (p == "-") {  // a pipe: JSON documents start with '{', anything else is read as YAML
    const auto first = text.find_first_not_of(" \t\r\n");
    return first != std::string_view::npos && text[first] == '{' ? Format::Json : Format::Yaml;
  }
  return diag::error(codes::kUnsupportedFormat,
                     display(p) + " is neither .yaml, .yml nor .json (use --format)");
}

Result<std::vector<std::string>> split_list(const std::string& text, const char* option,
                                            bool (*valid)(std::string_view)) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    if (!valid(item)) {
      return diag::error(codes::kBadRequest,
                         std::string("--") + option + ": \"" + item + "\" is not a valid entry");
    }
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

bool valid_terminal(std::string_view s) {
  if (s.empty() || s.size() > 64 || s[0] < 'A' || s[0] > 'Z') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}
bool valid_stage(std::string_view s) {
  return tools::valid_dotted_id(s) && s.find('.') == std::string_view::npos;
}

// Reads the named JSON documents ("builtin" = `builtin`).
Result<std::vector<NamedDocument>> read_documents(const std::vector<std::string>& paths,
                                                  const Value& builtin) {
  std::vector<NamedDocument> docs;
  diag::Diagnostics ds;
  for (const auto& p : paths.empty() ? std::vector<std::string>{"builtin"} : paths) {
    if (p == "builtin") {
      docs.push_back({"builtin", builtin});
      continue;
    }
    auto text = io::read_input(p, kMaxCatalogBytes);
    if (!text) {
      for (auto& d : about(p, text.take_diagnostics())) ds.push_back(std::move(d));
      continue;
    }
    auto doc = json::parse_object(*text);
    if (!doc) {
      for (auto& d : about(p, doc.take_diagnostics())) ds.push_back(std::move(d));
      continue;
    }
    docs.push_back({p, std::move(*doc)});
  }
  if (!ds.empty()) return ds;
  return docs;
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool plan_to_stdout(const CompileArgs& args) {
  return args.out_dir.empty() && (args.output.empty() || args.output == "-");
}

std::string join_path(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

}  // namespace

const json::Value& builtin_profiles_json() {
  static const Value doc = json::Object{
      {"schema_version", "1.0"},
      {"kind", "millforge_model_profiles"},
      {"profiles",
       json::Array{json::Object{{"profile_id", "profile.scripted"},
                                {"backend", "scripted"},
                                {"description", "a scripted model replaying recorded responses"}},
                   // The profile Millforge's builtin harnesses name (fixtures/harness/builtin/).
                   json::Object{{"profile_id", "profile.standard"},
                                {"backend", "scripted"},
                                {"description", "the standard profile of the builtin harnesses"}}}},
  };
  return doc;
}

namespace {

struct Documents {
  std::vector<NamedDocument> catalogs, profiles;
};

// The request options the compiler does not check itself (lists, stage, output directory) into
// `request`; the catalogs and profiles read into `docs`.
diag::Diagnostics check_request(const CompileArgs& args, CompileRequest& request, Documents& docs) {
  request.expected_harness_id = args.expected_harness_id;
  request.stage = args.stage;
  if (!args.emit.empty() && args.emit != "mf" && args.emit != kMillforgeForm) {
    return {diag::error(codes::kBadRequest, "--emit \"" + args.emit +
                                                "\" is not a plan form (mf, " +
                                                std::string(kMillforgeForm) + ")")};
  }
  if (args.emit == kMillforgeForm) request.form = PlanForm::MillforgeV1;
  if (args.legal_terminals_given) {
    auto list = split_list(args.legal_terminals, "legal-terminals", valid_terminal);
    if (!list) return list.take_diagnostics();
    request.legal_terminals = std::move(*list);
  }
  if (args.capabilities_given) {
    auto list = split_list(args.capabilities, "capabilities", tools::valid_dotted_id);
    if (!list) return list.take_diagnostics();
    request.capabilities = std::move(*list);
  }
  if (!args.stage.empty() && !valid_stage(args.stage)) {
    return {
        diag::error(codes::kBadRequest, "--stage \"" + args.stage + "\" is not a stage kind id")};
  }
  if (!args.out_dir.empty() && !is_directory(args.out_dir)) {
    return {diag::error(codes::kOutputDirMissing,
                        "output directory '" + args.out_dir + "' does not exist")};
  }
  // With --legal-terminals the built-in catalog also has one terminal control per legal result
  // (builtin.pi_compat.terminal.<token>@1, docs/tools.md).
  Value builtin = tools::builtin_catalog_json();
  if (request.legal_terminals) {
    auto configured = tools::builtin_catalog_json(*request.legal_terminals);
    if (!configured) {
      auto ds = configured.take_diagnostics();
      for (auto& d : ds) d.message = "--legal-terminals: " + d.message;
      return ds;
    }
    builtin = std::move(*configured);
  }
  auto catalogs = read_documents(args.catalogs, builtin);
  if (!catalogs) return catalogs.take_diagnostics();
  auto profiles = read_documents(args.profiles, builtin_profiles_json());
  if (!profiles) return profiles.take_diagnostics();
  docs.catalogs = std::move(*catalogs);
  docs.profiles = std::move(*profiles);
  return {};
}

// request + parse + the compiler's phases. `source_document_sha256` is set once the source is read.
CompileResult compile_source(const CompileArgs& args, CompileRequest& request,
                             std::string& source_document_sha256) {
  CompileResult result;
  auto reject = [&](const char* phase, diag::Diagnostics ds) {
    result.failure_phase = phase;
    result.diagnostics = std::move(ds);
    return result;
  };
  Documents docs;
  if (auto faults = check_request(args, request, docs); !faults.empty()) {
    return reject("request", std::move(faults));
  }
  auto text = io::read_input(args.source, kMaxSourceBytes);
  if (!text) return reject("request", about(args.source, text.take_diagnostics()));
  source_document_sha256 = hash::sha256_hex(*text);
  auto format = source_format(args, *text);
  auto doc = format ? parse_source(*text, *format) : Result<Value>(format.take_diagnostics());
  if (!doc) return reject("parse", doc.take_diagnostics());
  request.source = std::move(*doc);
  request.catalogs = std::move(docs.catalogs);
  request.profiles = std::move(docs.profiles);
  result = compile(request);
  // Faults found after parsing point into the value model; give them source positions.
  if (!result.ok) {
    json::locate(result.diagnostics, *format == Format::Json
                                         ? json::json_source_map(*text, result.diagnostics)
                                         : yaml::source_map(*text));
  }
  return result;
}

const char* form_name(PlanForm form) {
  return form == PlanForm::MillforgeV1 ? kMillforgeForm : "mf";
}

// What was asked, as a digest: names the report of a rejected compilation.
std::string request_digest(const CompileArgs& args, const CompileRequest& request,
                           const std::string& source_document_sha256) {
  json::Array catalog_digests, profile_digests;
  for (const auto& c : request.catalogs) catalog_digests.push_back(json::canonical_digest(c.doc));
  for (const auto& p : request.profiles) profile_digests.push_back(json::canonical_digest(p.doc));
  return json::canonical_digest(json::Object{
      {"source_document_sha256", source_document_sha256},
      {"catalogs", std::move(catalog_digests)},
      {"profiles", std::move(profile_digests)},
      {"expected_harness_id", args.expected_harness_id},
      {"stage", args.stage},
      {"legal_terminals", args.legal_terminals_given ? Value(args.legal_terminals) : Value()},
      {"capabilities", args.capabilities_given ? Value(args.capabilities) : Value()},
      {"emit", form_name(request.form)},
  });
}

// The identity member `key` of a compilation: the plan's, or for a rejected source the one the
// source states when it has the member's type (a string id, an integer version); else null.
Value identity_member(const CompileResult& result, const Value& source, const char* key) {
  if (result.ok) return *result.plan.find(key);
  const Value* v = source.is_object() ? source.find(key) : nullptr;
  if (v == nullptr) return Value();
  const bool typed =
      std::string_view(key) == "harness_id" ? v->is_string() : v->as_exact_int().has_value();
  return typed ? *v : Value();
}

// The compile report (docs/formats/plan.md).
Value report_document(const diag::Report& report, const CompileResult& result, const Value& source,
                      const std::string& source_document_sha256, const std::string& request_sha256,
                      const char* form) {
  auto maybe = [](const std::string& s) { return s.empty() ? Value() : Value(s); };
  Value doc = json::to_json(report);
  doc.set("schema_version", "1.0");
  doc.set("kind", "millforge_compile_report");
  doc.set("status", result.ok ? "compiled" : "rejected");
  doc.set("failure_phase", maybe(result.failure_phase));
  doc.set("harness_id", identity_member(result, source, "harness_id"));
  doc.set("harness_version", identity_member(result, source, "harness_version"));
  doc.set("source_document_sha256", maybe(source_document_sha256));
  doc.set("source_sha256", maybe(result.source_sha256));
  doc.set("compiled_sha256", maybe(result.compiled_sha256));
  doc.set("plan_file", maybe(result.ok ? plan_file_name(result.plan) : std::string()));
  doc.set("plan_form", form);
  json::Array snapshots;
  for (const auto& c : result.catalog_snapshots) {
    snapshots.push_back(json::Object{{"catalog", c.name},
                                     {"snapshot_id", c.snapshot_id},
                                     {"snapshot_sha256", c.snapshot_sha256}});
  }
  doc.set("catalog_snapshots", std::move(snapshots));
  doc.set("request_sha256", request_sha256);
  return doc;
}

// Collects the output faults; `code` (when given) replaces each diagnostic's own.
class OutputFaults {
 public:
  void note(Status s, const char* code = nullptr) {
    if (s) return;
    for (auto d : s.take_diagnostics()) {
      if (code != nullptr) d.code = code;
      faults_.push_back(std::move(d));
    }
  }
  bool none() const { return faults_.empty(); }
  diag::Diagnostics& list() { return faults_; }

 private:
  diag::Diagnostics faults_;
};

// output: the plan first, then its report beside it; `out_fd` carries one document only.
void publish(const CompileArgs& args, const CompileResult& result, const std::string& report_bytes,
             const std::string& request_sha256, int out_fd, OutputFaults& faults) {
  const bool to_fd = plan_to_stdout(args);
  const bool to_dir = !args.out_dir.empty();
  if (result.ok) {
    faults.note(to_fd    ? io::write_all(out_fd, result.plan_bytes)
                : to_dir ? io::publish_atomic(join_path(args.out_dir, plan_file_name(result.plan)),
                                              result.plan_bytes)
                         : io::write_output(args.output, result.plan_bytes));
  }
  // -o FILE: the report is stdout's one document.
  if (!to_fd && !to_dir && faults.none()) faults.note(io::write_all(out_fd, report_bytes));
  if (to_dir && faults.none() && is_directory(args.out_dir)) {
    // The report is a function of the request, so it is named by the request's digest: two
    // requests compiling to one plan (a YAML file and its JSON twin) keep one report each.
    std::string name = "request-" + request_sha256 + ".diagnostics.json";
    if (result.ok) {
      name = result.plan.find("harness_id")->as_string() + "@" +
             std::to_string(*result.plan.find("harness_version")->as_exact_int()) + "." + name;
    }
    faults.note(io::publish_atomic(join_path(args.out_dir, name), report_bytes),
                codes::kDiagnosticsWriteFailed);
    if (faults.none()) faults.note(io::write_all(out_fd, report_bytes));
  }
  // "--diagnostics -" with --out-dir or -o FILE: the report is already on `out_fd`, once.
  if (!args.diagnostics.empty() && !(args.diagnostics == "-" && !to_fd) && faults.none()) {
    faults.note(args.diagnostics == "-"
                    ? io::write_all(out_fd, report_bytes)
                    : io::publish_atomic(args.diagnostics, report_bytes, io::Clobber::Replace),
                codes::kDiagnosticsWriteFailed);
  }
}

// Refs: compile/<harness_id>/<version>/{plan,diagnostics}; a rejected compilation has no identity
// yet and files its report under compile/rejected/<request_sha256>.
Status keep_in_store(const std::string& store_dir, const CompileResult& result,
                     const std::string& report_bytes, const std::string& request_sha256) {
  auto opened = store::Store::open(store_dir, store::Mode::ReadWrite);
  if (!opened) return opened.take_diagnostics();
  store::Store& s = **opened;
  return s.batch([&]() -> Status {
    std::string ref = store::refs::compile_rejected(request_sha256);
    if (result.ok) {
      const std::string& id = result.plan.find("harness_id")->as_string();
      const std::int64_t version = *result.plan.find("harness_version")->as_exact_int();
      auto plan = s.put_named(store::refs::compile_plan(id, version), result.plan_bytes);
      if (!plan) return plan.take_diagnostics();
      ref = store::refs::compile_diagnostics(id, version);
    }
    auto kept = s.put_named(ref, report_bytes);
    return kept ? Status() : Status(kept.take_diagnostics());
  });
}

}  // namespace

CompileOutcome compile_command(const CompileArgs& args, int out_fd) {
  CompileRequest request;
  std::string source_document_sha256;
  const CompileResult result = compile_source(args, request, source_document_sha256);
  const std::string request_sha256 = request_digest(args, request, source_document_sha256);

  diag::Report report;
  report.add_all(result.diagnostics);
  CompileOutcome outcome;
  outcome.compiled = result.ok;
  outcome.report = report_document(report, result, request.source, source_document_sha256,
                                   request_sha256, form_name(request.form));
  outcome.diagnostics = report.diagnostics();
  const std::string report_bytes = json::canonical_file(outcome.report);

  OutputFaults faults;
  publish(args, result, report_bytes, request_sha256, out_fd, faults);
  if (!args.store_dir.empty() && faults.none()) {
    faults.note(keep_in_store(args.store_dir, result, report_bytes, request_sha256));
  }
  for (auto& d : faults.list()) outcome.diagnostics.push_back(std::move(d));
  return outcome;
}

std::string check_compile_args(const CompileArgs& args) {
  if (!args.out_dir.empty() && !args.output.empty()) {
    return "--out-dir and -o both say where the plan goes: give one";
  }
  if (plan_to_stdout(args) && args.diagnostics == "-") {
    return "the plan already goes to stdout; give --diagnostics a FILE";
  }
  return {};
}

diag::CommandOutcome compile_plan(const CompileArgs& args, int out_fd) {
  if (std::string why = check_compile_args(args); !why.empty()) {
    return diag::CommandOutcome::usage_error(std::move(why));
  }
  CompileOutcome compiled = compile_command(args, out_fd);
  if (compiled.diagnostics.empty()) return {};
  const std::string source = args.source == "-" ? "<stdin>" : args.source;
  // exit_status is 2 (a refusal) when there is no error among them, or when every error refuses.
  if (compiled.compiled && diag::exit_status(compiled.diagnostics) == 2) {
    diag::CommandOutcome done;
    done.warnings = std::move(compiled.diagnostics);
    done.source = source;
    return done;
  }
  return diag::CommandOutcome::stopped_by(std::move(compiled.diagnostics), source);
}

diag::CommandOutcome verify_plan(const std::string& path, int out_fd) {
  auto summary = verify_command(path);
  if (!summary) {
    return diag::CommandOutcome::stopped_by(summary.take_diagnostics(),
                                            path == "-" ? "<stdin>" : path, diag::Job::Check);
  }
  if (Status written = io::write_all(out_fd, json::canonical_file(*summary)); !written) {
    return diag::CommandOutcome::stopped_by(written.take_diagnostics());
  }
  return {};
}

Result<json::Value> verify_command(const std::string& path) {
  auto text = io::read_input(path, json::kMaxHeldBytes);  // as the runtime's plan loader
  if (!text) return about(path, text.take_diagnostics());
  // Which form decides which loader parses the bytes again; one tree at a time.
  const bool millforge = [&] {
    auto parsed = json::parse_object(*text);
    return parsed && is_millforge_plan(*parsed);
  }();
  auto plan = millforge ? load_millforge_plan(*text) : load_plan(*text, path);
  if (!plan) return plan;
  return Value(json::Object{
      {"verified", true},
      {"form", millforge ? kMillforgeForm : "mf"},
      {"harness_id", *plan->find("harness_id")},
      {"harness_version", *plan->find("harness_version")},
      {"compiled_sha256", *plan->find("compiled_sha256")},
      {"source_sha256", *plan->find("source_sha256")},
      {"nodes", static_cast<std::int64_t>(plan->find("nodes")->as_array().size())},
      {"file", plan_file_name(*plan)},
  });
}

namespace {

// A JSON document of `kind` from `path`, its faults located and named after the file.
Result<Value> read_kind(const std::string& path, const char* kind, std::string& text) {
  auto bytes = io::read_input(path, kMaxCatalogBytes);
  if (!bytes) return about(path, bytes.take_diagnostics());
  text = std::move(*bytes);
  auto doc = json::parse_object(text);
  if (!doc) return about(path, doc.take_diagnostics());
  if (kind != nullptr) {
    const Value* k = doc->find("kind");
    const Value* v = doc->find("schema_version");
    if (k == nullptr || !k->is_string() || k->as_string() != kind || v == nullptr ||
        !v->is_string() || v->as_string() != "1.0") {
      return about(path, {diag::error(codes::kUnitMalformed,
                                      std::string("not a units document: needs \"kind\": \"") +
                                          kind + "\" and \"schema_version\": \"1.0\"")});
    }
    for (const auto& m : doc->as_object()) {
      if (m.key != "kind" && m.key != "schema_version" && m.key != "units") {
        return about(
            path, {diag::error(codes::kUnitMalformed,
                               "unknown member \"" + m.key + "\"" +
                                   text::did_you_mean(m.key, {"kind", "schema_version", "units"}),
                               "/" + m.key)});
      }
    }
  }
  return doc;
}

diag::Diagnostics located(const std::string& path, const std::string& text, diag::Diagnostics ds) {
  json::locate(ds, json::json_source_map(text, ds));
  return about(path, std::move(ds));
}

}  // namespace

Status project_command(const ProjectArgs& args, int out_fd, int explain_fd) {
  auto docs = read_documents(args.catalogs, tools::builtin_catalog_json());
  if (!docs) return docs.take_diagnostics();
  tools::Catalog tools;
  for (const auto& d : *docs) {
    auto c = tools::Catalog::from_json(d.doc);
    if (!c) return about(d.name, c.take_diagnostics());
    if (Status s = tools.merge(*c); !s) return about(d.name, s.take_diagnostics());
  }
  std::vector<prompt::ToolSource> sources;
  for (const auto& [key, t] : tools.descriptors()) {
    sources.push_back({t.model_tool_name, t.description, t.input_schema, t.required_capabilities,
                       !t.connector.is_null()});
  }
  std::vector<prompt::Unit> declared;
  if (!args.units.empty()) {
    std::string text;
    auto doc = read_kind(args.units, "millforge_prompt_units", text);
    if (!doc) return doc.take_diagnostics();
    const Value* units = doc->find("units");
    auto read = units == nullptr ? Result<std::vector<prompt::Unit>>(std::vector<prompt::Unit>{})
                                 : prompt::units_from_json(*units, "/units");
    if (!read) return located(args.units, text, read.take_diagnostics());
    declared = std::move(*read);
  }
  auto all = prompt::with_tools(std::move(declared), sources);
  if (!all) return about(args.units, all.take_diagnostics());
  auto catalog = prompt::Catalog::build(std::move(*all));
  if (!catalog)
    return about(args.units.empty() ? "catalog" : args.units, catalog.take_diagnostics());
  std::string text;
  auto doc = read_kind(args.input, nullptr, text);
  if (!doc) return doc.take_diagnostics();
  auto input = prompt::input_from_json(*doc);
  if (!input) return located(args.input, text, input.take_diagnostics());
  auto projection = prompt::project(*catalog, *input);
  if (!projection) return located(args.input, text, projection.take_diagnostics());
  if (args.explain) {
    if (Status s = io::write_all(explain_fd, prompt::explain(*projection, *catalog)); !s) return s;
  }
  return io::write_all(out_fd, json::canonical_file(prompt::to_json(*projection)));
}

Status custom_tools_command(const std::string& manifest, const std::string& policy,
                            const std::string& out, int out_fd) {
  if (manifest == "-" && policy == "-") {
    return diag::error(codes::kUsage, "only one of the manifest and the policy can be -");
  }
  std::string manifest_text, policy_text;
  auto m = read_kind(manifest, nullptr, manifest_text);
  if (!m) return m.take_diagnostics();
  auto p = read_kind(policy, nullptr, policy_text);
  if (!p) return p.take_diagnostics();
  auto compiled = tools::compile_custom_tools(*m, *p);
  if (!compiled) {
    // Each names its file, with a line and column there; the compiler's order is kept.
    diag::Diagnostics all = compiled.take_diagnostics(), of_manifest, of_policy;
    for (const auto& d : all) (d.source == "policy" ? of_policy : of_manifest).push_back(d);
    json::locate(of_manifest, json::json_source_map(manifest_text, of_manifest));
    json::locate(of_policy, json::json_source_map(policy_text, of_policy));
    std::size_t next_manifest = 0, next_policy = 0;
    for (auto& d : all) {
      const bool about_policy = d.source == "policy";
      d = about_policy ? of_policy[next_policy++] : of_manifest[next_manifest++];
      d.source = display(about_policy ? policy : manifest);
    }
    return all;
  }
  const std::string catalog = json::canonical_file(compiled->catalog);
  if (out.empty() || out == "-") return io::write_all(out_fd, catalog);
  if (Status s = io::write_output(out, catalog); !s) return s;
  return io::write_all(out_fd, json::canonical_file(compiled->report));
}

diag::CommandOutcome command(const CommandArgs& a, int out_fd, int err_fd) {
  using diag::CommandOutcome;
  const std::vector<std::string>& args = a.operands;
  const auto outcome = [](const Status& s) {
    return s ? CommandOutcome{} : CommandOutcome::stopped_by(s.diagnostics());
  };
  const std::string sub = args.empty() ? "" : args[0];
  if (sub == "verify") {
    if (args.size() > 2) return CommandOutcome::usage_error("verify takes one PLAN file (or -)");
    return verify_plan(args.size() == 2 ? args[1] : "-", out_fd);
  }
  if (sub == "project") {
    if (args.size() > 1) return CommandOutcome::usage_error("project takes no operand");
    if (!a.input) return CommandOutcome::usage_error("--input is required");
    const ProjectArgs project{a.compile.catalogs, a.units, *a.input, a.explain};
    return outcome(project_command(project, out_fd, err_fd));
  }
  if (sub == "custom-tools") {
    if (args.size() != 2) {
      return CommandOutcome::usage_error("custom-tools takes one MANIFEST (or -)");
    }
    if (!a.policy) return CommandOutcome::usage_error("--policy is required");
    return outcome(custom_tools_command(args[1], *a.policy, a.compile.output, out_fd));
  }
  if (args.size() > 1) return CommandOutcome::usage_error("give one HARNESS file (or -)");
  CompileArgs compile = a.compile;
  compile.source = args.empty() ? "-" : args[0];
  return compile_plan(compile, out_fd);
}

}  // namespace mf::harness
