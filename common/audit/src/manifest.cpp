// The audit manifest of manifest.hpp: read strictly, every problem reported at once with its
// pointer and line, every file it names found before anything runs.
#include "mf/audit/manifest.hpp"

#include <cstdlib>
#include <filesystem>
#include <functional>

#include "mf/cli/cli.hpp"
#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/reader.hpp"
#include "mf/json/source_map.hpp"
#include "mf/yaml/reader.hpp"

namespace mf::audit {

namespace {

namespace fs = std::filesystem;
namespace codes = diag::codes;

enum class Want { File, Directory };

class Loader {
 public:
  explicit Loader(fs::path dir) : dir_(std::move(dir)) {}

  // A path relative to the manifest that names an existing file or directory.
  std::string path(json::FieldReader& r, std::string_view key, Want want, bool required = true) {
    std::optional<std::string> p = r.string(key, required);
    if (!p) return {};
    const std::string at = r.pointer_of(key);
    if (p->empty() || fs::path(*p).is_absolute()) {
      r.add(diag::error(codes::kSchema, "must be a path relative to the manifest's directory", at));
      return {};
    }
    std::error_code ec;
    const fs::file_status st = fs::status(dir_ / *p, ec);
    const bool found = want == Want::File ? fs::is_regular_file(st) : fs::is_directory(st);
    if (!found) {
      r.add(diag::error(codes::kMissing,
                        *p + " is not " + (want == Want::File ? "a file" : "a directory") +
                            " (relative to the manifest)",
                        at));
      return {};
    }
    return *p;
  }

  // 64 lowercase hex digits: anything else (upper case, a prefix, "sha256:...") is refused, so a
  // pin cannot silently never match.
  std::string pin(json::FieldReader& r, std::string_view key, bool required = true) {
    std::optional<std::string> p = r.string(key, required);
    if (!p) return {};
    if (!hash::is_hex_digest(*p)) {
      r.add(diag::error(codes::kSchema, "must be a SHA-256 digest: 64 lowercase hexadecimal digits",
                        r.pointer_of(key)));
      return {};
    }
    return *p;
  }

  std::string key_env(json::FieldReader& r, std::string_view key) {
    std::optional<std::string> name = r.string(key, false);
    if (!name) return {};
    const std::string at = r.pointer_of(key);
    const bool shaped =
        !name->empty() &&
        name->find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
    if (!shaped || (*name)[0] <= '9') {
      r.add(diag::error(codes::kSchema, "must be an environment variable name: [A-Z_][A-Z0-9_]*",
                        at));
      return {};
    }
    const char* value = std::getenv(name->c_str());
    if (value == nullptr || std::string_view(value).size() < cli::kMinSecretBytes) {
      r.add(diag::error(codes::kMissing,
                        "the environment variable " + *name + " is not set or shorter than " +
                            std::to_string(cli::kMinSecretBytes) + " bytes",
                        at));
      return {};
    }
    return *name;
  }

  // `v` read as an object at `pointer` by `read`; its problems go to `parent`.
  static void within(json::FieldReader& parent, const json::Value& v, std::string pointer,
                     const std::function<void(json::FieldReader&)>& read) {
    json::FieldReader r(v, std::move(pointer));
    if (r.ok()) read(r);
    for (auto& d : r.take()) parent.add(std::move(d));
  }

  // The optional object member `key`, read by `read`; false when it is absent.
  static bool object(json::FieldReader& parent, std::string_view key,
                     const std::function<void(json::FieldReader&)>& read) {
    const json::Value* v = parent.object(key, false);
    if (v != nullptr) within(parent, *v, parent.pointer_of(key), read);
    return v != nullptr;
  }

  // Each element of the array member `key`, as an object read by `read`.
  void each(json::FieldReader& top, std::string_view key,
            const std::function<void(json::FieldReader&)>& read) {
    const json::Value* list = top.array(key, false);
    if (list == nullptr) return;
    const std::string base = top.pointer_of(key);
    if (list->as_array().empty()) {
      top.add(diag::error(codes::kSchema, "an empty list checks nothing: leave it out", base));
    }
    for (std::size_t i = 0; i < list->as_array().size(); ++i) {
      within(top, list->as_array()[i], base + "/" + std::to_string(i), read);
    }
  }

  // A positive number (or, for max_regressions, an integer >= 0) as mf-eval compare takes it.
  void threshold(json::FieldReader& r, std::string_view key, GateCheck& gate) {
    const json::Value* v = r.optional(key);
    if (v == nullptr) return;
    const bool integer = key == "max_regressions";
    const bool ok =
        v->is_number() && (integer ? v->as_exact_int().value_or(-1) >= 0 : v->as_number() > 0);
    if (!ok) {
      r.add(diag::error(codes::kSchema, integer ? "an integer of at least 0" : "a positive number",
                        r.pointer_of(key)));
      return;
    }
    std::string option = "--" + std::string(key);
    for (char& c : option) c = c == '_' ? '-' : c;
    gate.options.emplace_back(option, json::canonical(*v));
  }

 private:
  fs::path dir_;
};

void read_checks(json::FieldReader& top, Loader& l, Manifest& m) {
  Loader::object(top, "product", [&](json::FieldReader& r) {
    m.fixtures = l.path(r, "fixtures", Want::Directory);
    r.reject_unknown({"fixtures"});
  });
  l.each(top, "harnesses", [&](json::FieldReader& r) {
    HarnessCheck h{.source = l.path(r, "source", Want::File),
                   .catalog = l.path(r, "catalog", Want::File, false),
                   .profiles = l.path(r, "profiles", Want::File, false),
                   .compiled_sha256 = l.pin(r, "compiled_sha256")};
    r.reject_unknown({"source", "catalog", "profiles", "compiled_sha256"});
    m.harnesses.push_back(std::move(h));
  });
  l.each(top, "plans", [&](json::FieldReader& r) {
    m.plans.push_back({l.path(r, "path", Want::File), l.pin(r, "compiled_sha256", false)});
    r.reject_unknown({"path", "compiled_sha256"});
  });
  l.each(top, "traces", [&](json::FieldReader& r) {
    TraceCheck t{.path = l.path(r, "path", Want::File),
                 .sha256 = l.pin(r, "sha256", false),
                 .mac_key_env = l.key_env(r, "mac_key_env")};
    if (r.optional("sha256") == nullptr && r.optional("mac_key_env") == nullptr) {
      r.add(diag::error(codes::kSchema,
                        "a trace needs sha256 or mac_key_env: without either, anyone could have "
                        "written it",
                        r.pointer()));
    }
    Loader::object(r, "strict", [&](json::FieldReader& s) {
      t.strict =
          StrictCheck{l.path(s, "plan", Want::File), l.path(s, "workspace", Want::Directory)};
      s.reject_unknown({"plan", "workspace"});
    });
    r.reject_unknown({"path", "sha256", "mac_key_env", "strict"});
    m.traces.push_back(std::move(t));
  });
  l.each(top, "campaigns", [&](json::FieldReader& r) {
    CampaignCheck c{.report = l.path(r, "report", Want::File),
                    .traces = l.path(r, "traces", Want::Directory, false),
                    .store = l.path(r, "store", Want::Directory, false),
                    .suite = l.path(r, "suite", Want::File, false),
                    .mac_key_env = l.key_env(r, "mac_key_env")};
    if ((r.optional("traces") == nullptr) == (r.optional("store") == nullptr)) {
      r.add(diag::error(codes::kSchema,
                        "a campaign names where its traces are: traces (a directory) or store, "
                        "one of the two",
                        r.pointer()));
    }
    Loader::object(r, "gate", [&](json::FieldReader& g) {
      GateCheck check{.baseline = l.path(g, "baseline", Want::File)};
      for (const char* key : {"max_regressions", "alpha", "max_latency_ratio", "max_cost_ratio",
                              "max_false_closure_rate"}) {
        l.threshold(g, key, check);
      }
      g.reject_unknown({"baseline", "max_regressions", "alpha", "max_latency_ratio",
                        "max_cost_ratio", "max_false_closure_rate"});
      c.gate = std::move(check);
    });
    r.reject_unknown({"report", "traces", "store", "suite", "mac_key_env", "gate"});
    m.campaigns.push_back(std::move(c));
  });
  l.each(top, "pins", [&](json::FieldReader& r) {
    m.pins.push_back({l.path(r, "path", Want::File), l.pin(r, "sha256")});
    r.reject_unknown({"path", "sha256"});
  });
}

}  // namespace

Result<Manifest> load_manifest(const std::string& path) {
  Result<std::string> text = io::read_input(path, 1u << 20);
  if (!text) return text.take_diagnostics();
  const bool yaml_text = path.ends_with(".yaml") || path.ends_with(".yml");
  Result<json::Value> doc = yaml_text ? yaml::parse_object(*text) : json::parse_object(*text);
  if (!doc) return doc.take_diagnostics();

  std::error_code ec;
  const fs::path absolute = fs::absolute(path, ec);
  Manifest m;
  m.dir = absolute.parent_path().string();
  m.name = absolute.filename().string();
  m.sha256 = hash::sha256_hex(*text);
  Loader loader(m.dir);
  json::FieldReader top(*doc, "");
  if (std::optional<std::int64_t> v = top.integer("v"); v && *v != 1) {
    top.add(diag::error(codes::kSchema, "version 1 is the one this mf-audit reads", "/v"));
  }
  if (std::optional<std::string> kind = top.string("kind"); kind && *kind != kManifestKind) {
    top.add(diag::error(codes::kSchema, std::string("kind is ") + kManifestKind, "/kind"));
  }
  read_checks(top, loader, m);
  top.reject_unknown({"v", "kind", "product", "harnesses", "plans", "traces", "campaigns", "pins"});
  if (top.ok() && m.fixtures.empty() && m.harnesses.empty() && m.plans.empty() &&
      m.traces.empty() && m.campaigns.empty() && m.pins.empty()) {
    top.add(diag::error(codes::kSchema, "the manifest checks nothing"));
  }
  if (!top.ok()) {
    diag::Diagnostics ds = top.take();
    json::locate(ds, yaml_text ? yaml::source_map(*text) : json::json_source_map(*text, ds));
    return ds;
  }
  return m;
}

}  // namespace mf::audit
