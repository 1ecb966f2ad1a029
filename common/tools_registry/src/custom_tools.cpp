#include "mf/tools/custom_tools.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "mf/diag/codes.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/fields.hpp"
#include "mf/json/millforge_form.hpp"
#include "mf/json/pointer.hpp"
#include "mf/schema/schema.hpp"
#include "mf/tools/catalog.hpp"

namespace mf::tools {
namespace {

namespace codes = diag::codes;
using json::Value;

// Millforge's limits for the source contract (its custom_tools contracts).
constexpr std::size_t kMaxFieldBytes = 512;
constexpr std::size_t kMaxPackageIdBytes = 160;
constexpr std::size_t kMaxDescriptionBytes = 65536;
constexpr std::int64_t kMaxSchemaBytes = 65536;
constexpr std::int64_t kMaxTools = 128;
constexpr std::int64_t kMaxTimeoutSeconds = 86400;
constexpr std::int64_t kMaxGraceSeconds = 3600;
constexpr std::int64_t kMaxOutputBytes = 64 << 20;
constexpr std::int64_t kMaxSummaryBytes = 65536;
constexpr std::int64_t kMaxToolVersion = 2147483647;
constexpr std::size_t kMaxListed = 64;  // capabilities or artifacts of one tool (the catalog's)

constexpr const char* kSourceSchema = "millforge.custom_tool.source";
constexpr const char* kSourceKind = "custom_tool_source";
constexpr const char* kPolicySource = "policy";

constexpr std::array kApprovals = {"none", "millrace_explicit", "operator_out_of_band",
                                   "forbidden"};
constexpr std::array kSideEffectNames = {"read_only",         "artifact_write", "workspace_write",
                                         "process_execution", "network_read",   "network_write",
                                         "terminal"};
constexpr std::array kIdempotencyNames = {"idempotent", "idempotent_with_key", "non_idempotent",
                                          "unknown"};

// ---- Character classes. ASCII only; any byte of a multi-byte UTF-8 sequence counts as a word
// character (Python's \w takes most non-ASCII letters).

bool is_word(char c) {
  const auto u = static_cast<unsigned char>(c);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         u >= 0x80;
}
bool is_alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}
char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}
std::string lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower(c);
  return out;
}
bool word_at(std::string_view s, std::size_t i) {
  return i < s.size() && is_word(s[i]);
}
// A word boundary before position i.
bool boundary_before(std::string_view s, std::size_t i) {
  return (i > 0 && is_word(s[i - 1])) != word_at(s, i);
}
std::size_t skip_spaces(std::string_view s, std::size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}
std::string_view trimmed(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}
// Every position where `needle` (lowercase) starts in `hay` (already lowercased).
template <class F>
bool any_at(const std::string& hay, std::string_view needle, F&& accept) {
  for (auto at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1)) {
    if (accept(at)) return true;
  }
  return false;
}

// ---- Millforge's secret rule: a member whose name marks it sensitive and that holds any text,
// or text of a credential's shape. Ours (diag::find_secret) counts too.

bool sensitive_name(std::string_view field) {
  std::string compact;
  for (char c : field) {
    if (c != '_' && c != '-') compact += lower(c);
  }
  for (const char* m :
       {"authorization", "apikey", "token", "secret", "password", "credential", "cookie"}) {
    if (compact.find(m) != std::string::npos) return true;
  }
  return false;
}

// NAME_WITH_TOKEN=value: a word holding SECRET, TOKEN, PASSWORD or API_KEY, right before '='.
bool assigned_secret_name(std::string_view s, const std::string& low) {
  for (std::size_t eq = s.find('='); eq != std::string::npos; eq = s.find('=', eq + 1)) {
    if (eq + 1 >= s.size() || is_space(s[eq + 1])) continue;
    std::size_t start = eq;
    while (start > 0 && is_word(s[start - 1])) --start;
    if (start == eq ||
        !((s[start] >= 'a' && s[start] <= 'z') || (s[start] >= 'A' && s[start] <= 'Z')))
      continue;
    const std::string_view name(low.data() + start, eq - start);
    for (const char* m : {"secret", "token", "password", "api_key"}) {
      if (name.find(m) != std::string_view::npos) return true;
    }
  }
  return false;
}

// "bearer" and 16 or more token characters.
bool bearer_token(const std::string& low) {
  return any_at(low, "bearer", [&](std::size_t at) {
    if (!boundary_before(low, at)) return false;
    std::size_t i = at + 6;
    if (i >= low.size() || !is_space(low[i])) return false;
    i = skip_spaces(low, i);
    std::size_t run = 0;
    static constexpr std::string_view kExtra = "._~+/=-";
    while (run < 16 && i + run < low.size() &&
           (is_alnum(low[i + run]) || kExtra.find(low[i + run]) != std::string_view::npos))
      ++run;
    return run >= 16;
  });
}

// "token: value", "api-key=value", ...: a marker word, ':' or '=', and 8 or more characters.
bool labelled_secret(const std::string& low) {
  for (std::string_view m : {"apikey", "api_key", "api-key", "token", "secret", "password"}) {
    if (any_at(low, m, [&](std::size_t at) {
          if (!boundary_before(low, at)) return false;
          std::size_t i = skip_spaces(low, at + m.size());
          if (i >= low.size() || (low[i] != ':' && low[i] != '=')) return false;
          i = skip_spaces(low, i + 1);
          std::size_t run = 0;
          while (run < 8 && i + run < low.size() && low[i + run] != '&' && !is_space(low[i + run]))
            ++run;
          return run >= 8;
        }))
      return true;
  }
  return false;
}

// scheme://user:password@host
bool url_credentials(std::string_view s) {
  const auto part = [](char c) { return c != '/' && c != ':' && c != '@' && !is_space(c); };
  for (auto at = s.find("://"); at != std::string_view::npos; at = s.find("://", at + 1)) {
    std::size_t i = at + 3;
    std::size_t user = 0;
    while (i + user < s.size() && part(s[i + user])) ++user;
    if (user == 0 || i + user >= s.size() || s[i + user] != ':') continue;
    i += user + 1;
    std::size_t pass = 0;
    while (i + pass < s.size() && part(s[i + pass])) ++pass;
    if (pass > 0 && i + pass < s.size() && s[i + pass] == '@') return true;
  }
  return false;
}

// sk-, pk-, org- or sess- and a run of 16 or more letters and digits ending a word.
bool prefixed_key(std::string_view s) {
  for (std::string_view p : {"sk-", "pk-", "org-", "sess-"}) {
    for (auto at = s.find(p); at != std::string_view::npos; at = s.find(p, at + 1)) {
      if (!boundary_before(s, at)) continue;
      std::size_t i = at + p.size();
      std::size_t run = 0;
      while (i + run < s.size() && is_alnum(s[i + run])) ++run;
      if (run >= 16 && !word_at(s, i + run)) return true;
    }
  }
  return false;
}

bool secret_like(std::string_view field, std::string_view value) {
  if (sensitive_name(field) && !trimmed(value).empty()) return true;
  const std::string low = lowered(value);
  return assigned_secret_name(value, low) || bearer_token(low) || labelled_secret(low) ||
         url_credentials(value) || prefixed_key(value) || diag::find_secret(value).has_value();
}

// ---- Hazards: text that is not a contract. One per string, the first in this order.

enum class Hazard : std::uint8_t {
  None,
  Secret,
  RuntimeKind,
  LiveUrl,
  ParentTraversal,
  ShellCommand,
  AbsolutePath,
  ScriptBody,
  Template,
  InstructionLike,
};

const char* hazard_name(Hazard h) {
  switch (h) {
    case Hazard::Secret:
      return "secret_material";
    case Hazard::RuntimeKind:
      return "runtime_kind";
    case Hazard::LiveUrl:
      return "live_endpoint_url";
    case Hazard::ParentTraversal:
      return "parent_traversal";
    case Hazard::ShellCommand:
      return "shell_command";
    case Hazard::AbsolutePath:
      return "absolute_path";
    case Hazard::ScriptBody:
      return "script_body";
    case Hazard::Template:
      return "template_interpolation";
    case Hazard::InstructionLike:
      return "instruction_like";
    case Hazard::None:
      break;
  }
  return "none";
}

const char* hazard_code(Hazard h) {
  switch (h) {
    case Hazard::Secret:
      return codes::kCtSecretMaterial;
    case Hazard::RuntimeKind:
      return codes::kCtRuntimeKind;
    case Hazard::InstructionLike:
      return codes::kCtDescriptionUnsafe;
    default:
      return codes::kCtExecutableMaterial;
  }
}

const char* hazard_message(Hazard h) {
  switch (h) {
    case Hazard::Secret:
      return "holds secret-looking material (never repeated)";
    case Hazard::RuntimeKind:
      return "names an executable runtime kind; only contract_only compiles";
    case Hazard::LiveUrl:
      return "holds a live http(s) endpoint";
    case Hazard::ParentTraversal:
      return "holds a parent-directory traversal (..)";
    case Hazard::ShellCommand:
      return "holds a shell command";
    case Hazard::AbsolutePath:
      return "holds an absolute path";
    case Hazard::ScriptBody:
      return "holds script source";
    case Hazard::Template:
      return "holds template interpolation";
    case Hazard::InstructionLike:
      return "reads as instructions to the model";
    case Hazard::None:
      break;
  }
  return "";
}

constexpr std::array kExecutableRuntimes = {
    "shell", "process", "python",    "javascript",      "js",         "node", "wasm",    "http",
    "https", "mcp",     "connector", "connector_alias", "filesystem", "fs",   "terminal"};

bool live_url(const std::string& low) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (any_at(low, scheme, [&](std::size_t at) {
          const std::size_t next = at + scheme.size();
          return boundary_before(low, at) && next < low.size() && !is_space(low[next]) &&
                 low[next] != '<' && low[next] != '>' && low[next] != '\'' && low[next] != '"';
        }))
      return true;
  }
  return false;
}

bool parent_traversal(std::string_view s) {
  for (auto at = s.find(".."); at != std::string_view::npos; at = s.find("..", at + 1)) {
    const bool before = at == 0 || is_space(s[at - 1]) || s[at - 1] == '/' || s[at - 1] == '\\';
    const bool after = at + 2 == s.size() || s[at + 2] == '/' || s[at + 2] == '\\';
    if (before && after) return true;
  }
  return false;
}

bool shell_command(const std::string& low) {
  // Each command, and whether it ends with whitespace (then a word must follow it).
  struct Form {
    std::string_view head;  // before the whitespace
    std::string_view tail;  // after it; empty: the head stands alone
    bool needs_space;
  };
  static constexpr std::array kForms = {
      Form{"rm", "-rf", true},     Form{"curl", "", true},    Form{"wget", "", true},
      Form{"bash", "-c", true},    Form{"sh", "-c", true},    Form{"python", "-c", true},
      Form{"python3", "-c", true}, Form{"node", "-e", true},  Form{"powershell", "", false},
      Form{"cmd.exe", "", false},  Form{"chmod", "+x", true},
  };
  for (std::size_t p = 0; p < low.size(); ++p) {
    if (p > 0 && !is_space(low[p - 1])) continue;
    for (const Form& f : kForms) {
      if (low.compare(p, f.head.size(), f.head) != 0) continue;
      std::size_t i = p + f.head.size();
      if (!f.needs_space) {
        if (!word_at(low, i)) return true;
        continue;
      }
      if (i >= low.size() || !is_space(low[i])) continue;
      i = skip_spaces(low, i);
      if (f.tail.empty()) {
        if (word_at(low, i)) return true;
        continue;
      }
      if (low.compare(i, f.tail.size(), f.tail) == 0 && !word_at(low, i + f.tail.size()))
        return true;
    }
  }
  return false;
}

bool absolute_path(std::string_view s) {
  const auto path_char = [](char c) { return is_alnum(c) || c == '_' || c == '.' || c == '-'; };
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (s[i] == '/' && (i == 0 || !path_char(s[i - 1])) && path_char(s[i + 1])) return true;
    // C:\...
    if (s[i + 1] == ':' && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')) &&
        boundary_before(s, i) && i + 3 < s.size() && s[i + 2] == '\\' && !is_space(s[i + 3]))
      return true;
  }
  return false;
}

bool script_body(const std::string& low) {
  if (low.rfind("#!", 0) == 0) return true;
  if (any_at(low, "<script", [&](std::size_t at) { return !word_at(low, at + 7); })) return true;
  if (low.find("subprocess.") != std::string::npos) return true;
  // WORD, then whitespace (needed or not), a name (needed, optional or absent) and '('.
  const auto call_form = [&](std::string_view word, bool space_needed, int name) {
    return any_at(low, word, [&](std::size_t at) {
      std::size_t i = at + word.size();
      if (space_needed && (i >= low.size() || !is_space(low[i]))) return false;
      i = skip_spaces(low, i);
      std::size_t run = 0;
      while (name != 0 && word_at(low, i + run)) ++run;
      if (name == 2 && run == 0) return false;
      i = skip_spaces(low, i + run);
      return i < low.size() && low[i] == '(';
    });
  };
  if (call_form("function", true, 1) || call_form("def", true, 2) || call_form("eval", false, 0) ||
      call_form("exec", false, 0))
    return true;
  return any_at(low, "import", [&](std::size_t at) {
    std::size_t i = at + 6;
    if (i >= low.size() || !is_space(low[i])) return false;
    i = skip_spaces(low, i);
    return low.compare(i, 2, "os") == 0 && !word_at(low, i + 2);
  });
}

// {{...}} and {%...%} within one line, ${...} with something inside. Linear: on each line only
// the first opener matters, since any later one has less text after it.
bool template_interpolation(std::string_view s) {
  for (std::size_t start = 0; start <= s.size();) {
    std::size_t end = s.find('\n', start);
    if (end == std::string_view::npos) end = s.size();
    const std::string_view line = s.substr(start, end - start);
    const auto braces = line.find("{{");
    if (braces != std::string_view::npos && line.find("}}", braces + 2) != std::string_view::npos)
      return true;
    const auto block = line.find("{%");
    if (block != std::string_view::npos && line.find("%}", block + 3) != std::string_view::npos)
      return true;
    start = end + 1;
  }
  for (auto at = s.find("${"); at != std::string_view::npos; at = s.find("${", at + 1)) {
    const auto close = s.find('}', at + 2);
    if (close == std::string_view::npos) break;
    if (close > at + 2) return true;
  }
  return false;
}

bool instruction_like(const std::string& low) {
  for (std::string_view phrase :
       {"ignore", "override", "system prompt", "developer message", "previous instructions",
        "follow these instructions", "you must", "do not tell"}) {
    if (any_at(low, phrase, [&](std::size_t at) {
          return boundary_before(low, at) && !word_at(low, at + phrase.size());
        }))
      return true;
  }
  return false;
}

Hazard hazard_of(std::string_view field, std::string_view value) {
  const std::string_view s = trimmed(value);
  if (secret_like(field, s)) return Hazard::Secret;
  const std::string low = lowered(s);
  if (field == "runtime_kind" && s != "contract_only" &&
      std::find(kExecutableRuntimes.begin(), kExecutableRuntimes.end(), low) !=
          kExecutableRuntimes.end())
    return Hazard::RuntimeKind;
  if (live_url(low)) return Hazard::LiveUrl;
  if (parent_traversal(s)) return Hazard::ParentTraversal;
  if (shell_command(low)) return Hazard::ShellCommand;
  if (absolute_path(s)) return Hazard::AbsolutePath;
  if (script_body(low)) return Hazard::ScriptBody;
  if (template_interpolation(s)) return Hazard::Template;
  if (field == "description" && instruction_like(low)) return Hazard::InstructionLike;
  return Hazard::None;
}

diag::Diagnostic fault(const char* code, std::string message, std::string pointer,
                       const char* source) {
  diag::Diagnostic d = diag::error(code, std::move(message), std::move(pointer));
  d.source = source;
  return d;
}

// Every string of the document, and (beyond Millforge) every member name, for secrets.
void scan(const Value& v, std::string& pointer, std::string_view field, const char* source,
          diag::Diagnostics& out) {
  if (v.is_string()) {
    const Hazard h = hazard_of(field, v.as_string());
    if (h != Hazard::None) {
      out.push_back(
          fault(hazard_code(h),
                std::string("the string ") + hazard_message(h) + " (hazard " + hazard_name(h) + ")",
                pointer, source));
    }
  } else if (v.is_array()) {
    for (std::size_t i = 0; i < v.as_array().size(); ++i) {
      const std::size_t keep = pointer.size();
      json::append_index(pointer, i);
      scan(v.as_array()[i], pointer, std::to_string(i), source, out);
      pointer.resize(keep);
    }
  } else if (v.is_object()) {
    for (const auto& m : v.as_object()) {
      if (secret_like("", m.key)) {
        // At the object: a pointer to the member would repeat the name.
        out.push_back(fault(codes::kCtSecretMaterial,
                            "a member name holds secret-looking material (never repeated)", pointer,
                            source));
        continue;
      }
      const std::size_t keep = pointer.size();
      json::append_token(pointer, m.key);
      scan(m.value, pointer, m.key, source, out);
      pointer.resize(keep);
    }
  }
}

// ---- The contracts, as read.

struct Declaration {
  std::string at;  // "/tools/N"
  std::string tool_id;
  std::int64_t version = 0;
  std::string implementation_id;
  std::string runtime_kind = "contract_only";
  std::string model_tool_name;
  std::string description;
  std::string description_policy;
  Value input_schema;  // admitted and normalized
  Value output_schema;
  std::vector<std::string> capabilities;  // sorted
  std::vector<std::string> artifacts;     // sorted
  SideEffect side_effect = SideEffect::ReadOnly;
  Idempotency idempotency = Idempotency::Unknown;
  std::int64_t timeout_seconds = 0;
  std::int64_t grace_seconds = 0;
  std::int64_t max_output_bytes = 0;
  std::int64_t max_summary_utf8 = 0;
  bool redact_secrets = true;
  std::string approval;
  std::string input_policy = "json_schema_exact";
  std::string output_contract_policy = "json_schema_exact";
  Value idempotency_key_policy;  // null or a string
  std::optional<std::string> expected_declaration, expected_descriptor, expected_record;
};

struct Manifest {
  std::string package_id;
  std::int64_t package_version = 0;
  Value source_name;  // null or a string
  std::vector<Declaration> tools;
  Value policy_metadata = Value(json::Object{});
  std::optional<std::string> expected_source;
};

struct Policy {
  std::set<std::string> capabilities;
  std::int64_t max_tools = kMaxTools;
  std::int64_t max_schema_bytes = kMaxSchemaBytes;
  std::int64_t max_description = static_cast<std::int64_t>(kMaxDescriptionBytes);
  bool require_hashes = false;
  // side effect -> the approval policies allowed for it
  std::map<std::string, std::vector<std::string>> matrix = {
      {"read_only", {"none", "millrace_explicit", "operator_out_of_band"}},
      {"artifact_write", {"millrace_explicit", "operator_out_of_band"}},
      {"workspace_write", {"millrace_explicit", "operator_out_of_band"}},
      {"process_execution", {"millrace_explicit", "operator_out_of_band"}},
      {"network_read", {"millrace_explicit", "operator_out_of_band"}},
      {"network_write", {"millrace_explicit", "operator_out_of_band"}},
      {"terminal", {"millrace_explicit", "operator_out_of_band"}},
  };
};

// Field access through json::FieldReader with the faults of each member under its own code.
class Reader {
 public:
  Reader(const Value& object, std::string at, const char* source, diag::Diagnostics& out)
      : object_(object), at_(std::move(at)), source_(source), out_(out) {}

  std::string pointer_of(std::string_view key) const {
    std::string p = at_;
    json::append_token(p, key);
    return p;
  }
  void bad(const char* code, std::string_view key, std::string message) {
    out_.push_back(fault(code, std::move(message), key.empty() ? at_ : pointer_of(key), source_));
  }
  bool present(std::string_view key) const {
    const Value* v = object_.find(key);
    return v != nullptr && !v->is_null();
  }

  // A string of 1..max bytes that is not all whitespace.
  std::optional<std::string> text(std::string_view key, const char* code, bool required,
                                  std::size_t max = kMaxFieldBytes) {
    auto s = with(code, [&](json::FieldReader& r) { return r.string(key, required); });
    if (!s) return s;
    if (trimmed(*s).empty()) {
      bad(code, key, "\"" + std::string(key) + "\" must not be blank");
      return std::nullopt;
    }
    if (s->size() > max) {
      bad(code, key, "\"" + std::string(key) + "\" is over " + std::to_string(max) + " bytes");
      return std::nullopt;
    }
    return s;
  }
  // A string, null or absent (Millforge's optional strings).
  std::optional<std::string> nullable_text(std::string_view key, const char* code) {
    if (!present(key)) return std::nullopt;
    return text(key, code, true);
  }
  std::optional<std::int64_t> integer(std::string_view key, const char* code, bool required,
                                      std::int64_t min, std::int64_t max) {
    auto i = with(code, [&](json::FieldReader& r) { return r.integer(key, required); });
    if (i && (*i < min || *i > max)) {
      bad(code, key,
          "\"" + std::string(key) + "\" must be " + std::to_string(min) + ".." +
              std::to_string(max));
      return std::nullopt;
    }
    return i;
  }
  std::optional<bool> boolean(std::string_view key, const char* code, bool required) {
    return with(code, [&](json::FieldReader& r) { return r.boolean(key, required); });
  }
  const Value* object(std::string_view key, const char* code, bool required) {
    return with(code, [&](json::FieldReader& r) { return r.object(key, required); });
  }
  const Value* array(std::string_view key, const char* code, bool required) {
    return with(code, [&](json::FieldReader& r) { return r.array(key, required); });
  }
  // A string that must be one of `names`.
  template <std::size_t N>
  std::optional<std::string> choice(std::string_view key, const char* code, bool required,
                                    const std::array<const char*, N>& names) {
    auto s = with(code, [&](json::FieldReader& r) { return r.string(key, required); });
    if (s && std::find_if(names.begin(), names.end(), [&](const char* n) { return *s == n; }) ==
                 names.end()) {
      std::string list;
      for (const char* n : names) list += (list.empty() ? "" : ", ") + std::string(n);
      bad(code, key, "\"" + std::string(key) + "\" must be one of " + list);
      return std::nullopt;
    }
    return s;
  }
  std::optional<std::string> sha256(std::string_view key, const char* code) {
    auto s = nullable_text(key, code);
    if (s && !hash::is_hex_digest(*s)) {
      bad(code, key, "\"" + std::string(key) + "\" must be 64 lowercase hex digits");
      return std::nullopt;
    }
    return s;
  }
  // Members not in `known`; each under the code `code_of` gives its name.
  template <class F>
  void reject_unknown(std::initializer_list<std::string_view> known, F&& code_of) {
    for (const auto& m : object_.as_object()) {
      if (std::find(known.begin(), known.end(), m.key) == known.end()) {
        bad(code_of(m.key), m.key, "unknown member \"" + m.key + "\"");
      }
    }
  }

 private:
  // Runs one FieldReader access; its faults take `code` and this reader's source.
  template <class F>
  auto with(const char* code, F&& read) -> decltype(read(std::declval<json::FieldReader&>())) {
    json::FieldReader r(object_, at_);
    auto v = read(r);
    for (auto& d : r.take()) {
      d.code = code;
      d.source = source_;
      out_.push_back(std::move(d));
    }
    return v;
  }

  const Value& object_;
  std::string at_;
  const char* source_;
  diag::Diagnostics& out_;
};

// Unique strings each passing `valid`, sorted; faults under `code`.
std::vector<std::string> read_ids(Reader& r, std::string_view key, const char* code,
                                  bool (*valid)(std::string_view), const char* what,
                                  diag::Diagnostics& out, const char* source) {
  std::vector<std::string> ids;
  const Value* list = r.array(key, code, false);
  if (list == nullptr) return ids;
  for (std::size_t i = 0; i < list->as_array().size(); ++i) {
    const Value& v = list->as_array()[i];
    std::string p = r.pointer_of(key);
    json::append_index(p, i);
    if (!v.is_string() || !valid(v.as_string())) {
      out.push_back(fault(code, std::string("not ") + what, p, source));
    } else if (std::find(ids.begin(), ids.end(), v.as_string()) != ids.end()) {
      out.push_back(fault(code, "\"" + v.as_string() + "\" is listed twice", p, source));
    } else {
      ids.push_back(v.as_string());
    }
  }
  if (ids.size() > kMaxListed) r.bad(code, key, "at most 64 entries");
  std::sort(ids.begin(), ids.end());
  return ids;
}

// An input or output schema: a JSON object in the supported subset, at most 64 KiB canonical.
Value read_schema(Reader& r, std::string_view key, const char* code, bool input,
                  diag::Diagnostics& out) {
  const Value* s = r.object(key, code, true);
  if (s == nullptr) return Value();
  if (Status ok = schema::admit(*s, code, r.pointer_of(key)); !ok) {
    for (const auto& d : ok.diagnostics()) out.push_back(d);
    return Value();
  }
  if (input) {
    const Value* type = s->find("type");
    if (type == nullptr || !type->is_string() || type->as_string() != "object") {
      r.bad(code, key, "input_schema must be an object schema (\"type\": \"object\")");
      return Value();
    }
  }
  Value normalized = schema::normalize(*s);
  if (static_cast<std::int64_t>(json::canonical(normalized).size()) > kMaxSchemaBytes) {
    r.bad(code, key, std::string(key) + " is over 65536 bytes");
    return Value();
  }
  return normalized;
}

bool valid_id(std::string_view s) {
  return valid_dotted_id(s);
}
bool valid_artifact(std::string_view s) {
  return valid_local_id(s);
}

template <class Enum, std::size_t N>
Enum enum_of(const std::array<const char*, N>& names, const std::string& s) {
  for (std::size_t i = 0; i < N; ++i) {
    if (s == names[i]) return static_cast<Enum>(i);
  }
  return static_cast<Enum>(0);
}

std::optional<Declaration> read_declaration(const Value& v, const std::string& at,
                                            diag::Diagnostics& out) {
  if (!v.is_object()) {
    out.push_back(fault(codes::kCtSourceMalformed, "a tool declaration must be an object", at, ""));
    return std::nullopt;
  }
  const std::size_t before = out.size();
  Reader r(v, at, "", out);
  Declaration d;
  d.at = at;
  const char* malformed = codes::kCtSourceMalformed;
  if (auto s = r.text("tool_id", malformed, true)) {
    if (valid_dotted_id(*s)) {
      d.tool_id = *s;
    } else {
      r.bad(malformed, "tool_id", "tool_id must be dotted lowercase ([a-z][a-z0-9_]* joined by .)");
    }
  }
  if (auto i = r.integer("tool_version", malformed, true, 1, kMaxToolVersion)) d.version = *i;
  if (auto s = r.text("implementation_id", malformed, true)) d.implementation_id = *s;
  if (r.present("runtime_kind")) {
    if (auto s = r.choice("runtime_kind", codes::kCtRuntimeKind, true, std::array{"contract_only"}))
      d.runtime_kind = *s;
  }
  if (auto s = r.text("model_tool_name", malformed, true)) d.model_tool_name = *s;
  if (auto s = r.text("description", malformed, true, kMaxDescriptionBytes)) d.description = *s;
  if (auto s = r.choice("description_policy", malformed, true,
                        std::array{"operator_supplied", "source_supplied"}))
    d.description_policy = *s;
  d.input_schema = read_schema(r, "input_schema", codes::kCtInputSchema, true, out);
  d.output_schema = read_schema(r, "output_schema", codes::kCtOutputSchema, false, out);
  d.capabilities = read_ids(r, "required_capabilities", codes::kCtCapabilityMissing, valid_id,
                            "a dotted capability id", out, "");
  d.artifacts = read_ids(r, "produced_artifact_ids", codes::kCtArtifactPolicy, valid_artifact,
                         "an artifact id ([a-z][a-z0-9_]{0,63})", out, "");
  auto side = r.choice("side_effect_class", malformed, true, kSideEffectNames);
  if (side) d.side_effect = enum_of<SideEffect>(kSideEffectNames, *side);
  if (auto s = r.choice("idempotency", malformed, true, kIdempotencyNames))
    d.idempotency = enum_of<Idempotency>(kIdempotencyNames, *s);
  if (const Value* t = r.object("timeout_policy", codes::kCtTimeoutPolicy, true)) {
    Reader tr(*t, r.pointer_of("timeout_policy"), "", out);
    const char* c = codes::kCtTimeoutPolicy;
    if (auto i = tr.integer("timeout_seconds", c, true, 1, kMaxTimeoutSeconds))
      d.timeout_seconds = *i;
    if (auto i = tr.integer("cancellation_grace_seconds", c, true, 1, kMaxGraceSeconds))
      d.grace_seconds = *i;
    tr.reject_unknown({"timeout_seconds", "cancellation_grace_seconds"},
                      [&](std::string_view) { return c; });
  }
  if (const Value* o = r.object("output_policy", codes::kCtOutputPolicy, true)) {
    Reader orr(*o, r.pointer_of("output_policy"), "", out);
    const char* c = codes::kCtOutputPolicy;
    auto max_out = orr.integer("max_output_bytes", c, true, 1, kMaxOutputBytes);
    auto max_sum = orr.integer("max_summary_utf8", c, true, 1, kMaxSummaryBytes);
    if (auto b = orr.boolean("redact_secrets", c, true)) d.redact_secrets = *b;
    orr.reject_unknown({"max_output_bytes", "max_summary_utf8", "redact_secrets"},
                       [&](std::string_view) { return c; });
    if (max_out && max_sum && *max_sum > *max_out) {
      orr.bad(c, "max_summary_utf8", "max_summary_utf8 must not exceed max_output_bytes");
    }
    if (max_out) d.max_output_bytes = *max_out;
    if (max_sum) d.max_summary_utf8 = *max_sum;
  }
  auto approval = r.choice("approval_policy", codes::kCtApprovalPolicy, true, kApprovals);
  if (approval) d.approval = *approval;
  if (r.present("input_policy")) {
    if (auto s = r.choice("input_policy", malformed, true, std::array{"json_schema_exact"}))
      d.input_policy = *s;
  }
  if (r.present("output_contract_policy")) {
    if (auto s =
            r.choice("output_contract_policy", malformed, true, std::array{"json_schema_exact"}))
      d.output_contract_policy = *s;
  }
  if (auto s = r.nullable_text("idempotency_key_policy", malformed)) d.idempotency_key_policy = *s;
  d.expected_declaration = r.sha256("expected_declaration_sha256", malformed);
  d.expected_descriptor = r.sha256("expected_descriptor_sha256", malformed);
  d.expected_record = r.sha256("expected_compilation_record_sha256", malformed);
  r.reject_unknown({"tool_id",
                    "tool_version",
                    "implementation_id",
                    "runtime_kind",
                    "model_tool_name",
                    "description",
                    "description_policy",
                    "input_schema",
                    "output_schema",
                    "required_capabilities",
                    "produced_artifact_ids",
                    "side_effect_class",
                    "idempotency",
                    "timeout_policy",
                    "output_policy",
                    "approval_policy",
                    "input_policy",
                    "output_contract_policy",
                    "idempotency_key_policy",
                    "expected_declaration_sha256",
                    "expected_descriptor_sha256",
                    "expected_compilation_record_sha256"},
                   [](std::string_view) { return codes::kCtSourceMalformed; });
  // The declaration's own rules, on members that read well.
  const bool writes = side && *side != "read_only";
  if (approval && *approval == "forbidden") {
    r.bad(codes::kCtForbiddenTool, "approval_policy",
          "approval_policy \"forbidden\" is denial evidence; a forbidden tool is never compiled");
  } else if (approval && writes && *approval == "none") {
    r.bad(codes::kCtApprovalPolicy, "approval_policy",
          "a " + *side + " tool needs approval millrace_explicit or operator_out_of_band");
  }
  if (side && (writes || !d.artifacts.empty()) && d.capabilities.empty() &&
      (v.find("required_capabilities") == nullptr || v.find("required_capabilities")->is_array())) {
    r.bad(codes::kCtCapabilityMissing, "required_capabilities",
          "a tool that has side effects or produces artifacts must require capabilities");
  }
  if (out.size() != before) return std::nullopt;
  return d;
}

std::optional<Manifest> read_manifest(const Value& doc, diag::Diagnostics& out) {
  const std::size_t before = out.size();
  Reader r(doc, "", "", out);
  const char* malformed = codes::kCtSourceMalformed;
  Manifest m;
  if (r.present("schema_version"))
    r.choice("schema_version", malformed, true, std::array{kSourceSchema});
  if (r.present("kind")) r.choice("kind", malformed, true, std::array{kSourceKind});
  if (r.present("version")) r.choice("version", malformed, true, std::array{"1.0"});
  if (auto s = r.text("package_id", malformed, true, kMaxPackageIdBytes)) m.package_id = *s;
  if (auto i = r.integer("package_version", malformed, true, 1, INT64_MAX)) m.package_version = *i;
  if (auto s = r.nullable_text("source_name", malformed)) m.source_name = *s;
  if (auto s = r.text("created_at", malformed, true)) {
    // An explicit UTC time: YYYY-MM-DDTHH:MM:SS[.fraction]Z.
    const std::string& t = *s;
    bool ok = t.size() >= 20 && t.back() == 'Z';
    for (std::size_t i = 0; ok && i < 19; ++i) {
      const char want = "0000-00-00T00:00:00"[i];
      ok = want == '0' ? (t[i] >= '0' && t[i] <= '9') : t[i] == want || (i == 10 && t[i] == ' ');
    }
    if (ok && t.size() > 20) {
      ok = t[19] == '.' && t.size() > 21 &&
           std::all_of(t.begin() + 20, t.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
    }
    if (ok) {
      const int month = std::stoi(t.substr(5, 2));
      const int day = std::stoi(t.substr(8, 2));
      ok = month >= 1 && month <= 12 && day >= 1 && day <= 31 && std::stoi(t.substr(11, 2)) < 24 &&
           std::stoi(t.substr(14, 2)) < 60 && std::stoi(t.substr(17, 2)) < 60;
    }
    if (!ok) r.bad(malformed, "created_at", "created_at must be an ISO 8601 UTC time ending in Z");
  }
  if (const Value* meta = r.object("policy_metadata", malformed, false)) m.policy_metadata = *meta;
  m.expected_source = r.sha256("expected_source_sha256", malformed);
  if (const Value* tools = r.array("tools", malformed, true)) {
    const auto& list = tools->as_array();
    if (list.empty()) r.bad(malformed, "tools", "tools must hold at least one declaration");
    if (static_cast<std::int64_t>(list.size()) > kMaxTools) {
      r.bad(malformed, "tools", "tools holds more than 128 declarations");
    } else {
      for (std::size_t i = 0; i < list.size(); ++i) {
        std::string at = "/tools";
        json::append_index(at, i);
        if (auto d = read_declaration(list[i], at, out)) m.tools.push_back(std::move(*d));
      }
    }
  }
  r.reject_unknown(
      {"schema_version", "kind", "version", "package_id", "package_version", "source_name",
       "created_at", "tools", "policy_metadata", "expected_source_sha256"},
      [](std::string_view) { return codes::kCtSourceMalformed; });
  // One tool per identity, model name and implementation; the later one is refused.
  std::map<std::string, std::string> seen_ref, seen_name, seen_impl;
  for (const Declaration& d : m.tools) {
    const auto once = [&](std::map<std::string, std::string>& seen, const std::string& key,
                          const char* code, const char* member, const char* what) {
      auto [it, fresh] = seen.emplace(key, d.at);
      if (!fresh) {
        out.push_back(fault(
            code, std::string(what) + " \"" + key + "\" is declared by " + it->second + " already",
            d.at + "/" + member, ""));
      }
    };
    once(seen_ref, d.tool_id + "@" + std::to_string(d.version), codes::kCtDuplicateTool, "tool_id",
         "tool");
    once(seen_name, d.model_tool_name, codes::kCtDuplicateModelName, "model_tool_name",
         "model_tool_name");
    once(seen_impl, d.implementation_id, codes::kCtDuplicateImplementation, "implementation_id",
         "implementation_id");
  }
  if (out.size() != before) return std::nullopt;
  return m;
}

std::optional<Policy> read_policy(const Value& doc, diag::Diagnostics& out) {
  const std::size_t before = out.size();
  Reader r(doc, "", kPolicySource, out);
  const char* malformed = codes::kCtSourceMalformed;
  Policy p;
  if (const Value* caps = r.array("allowed_capability_ids", malformed, true)) {
    for (std::size_t i = 0; i < caps->as_array().size(); ++i) {
      const Value& c = caps->as_array()[i];
      std::string at = "/allowed_capability_ids";
      json::append_index(at, i);
      if (!c.is_string() || !valid_dotted_id(c.as_string())) {
        out.push_back(fault(malformed, "not a dotted capability id", at, kPolicySource));
      } else if (!p.capabilities.insert(c.as_string()).second) {
        out.push_back(
            fault(malformed, "\"" + c.as_string() + "\" is listed twice", at, kPolicySource));
      }
    }
  }
  if (const Value* kinds = r.array("allowed_runtime_kinds", malformed, false)) {
    if (!(kinds->as_array().size() == 1 && kinds->as_array()[0] == Value("contract_only"))) {
      r.bad(malformed, "allowed_runtime_kinds",
            "allowed_runtime_kinds must be [\"contract_only\"]");
    }
  }
  if (auto i = r.integer("max_tools", malformed, false, 1, kMaxTools)) p.max_tools = *i;
  if (auto i = r.integer("max_schema_bytes", malformed, false, 1, INT64_MAX))
    p.max_schema_bytes = *i;
  if (auto i = r.integer("max_description_utf8", malformed, false, 1,
                         static_cast<std::int64_t>(kMaxDescriptionBytes)))
    p.max_description = *i;
  if (auto b = r.boolean("require_expected_hashes", malformed, false)) p.require_hashes = *b;
  if (const Value* matrix = r.object("side_effect_approval_matrix", malformed, false)) {
    p.matrix.clear();
    for (const auto& m : matrix->as_object()) {
      std::string at = "/side_effect_approval_matrix";
      json::append_token(at, m.key);
      if (std::find_if(kSideEffectNames.begin(), kSideEffectNames.end(),
                       [&](const char* n) { return m.key == n; }) == kSideEffectNames.end()) {
        out.push_back(
            fault(malformed, "\"" + m.key + "\" is not a side-effect class", at, kPolicySource));
        continue;
      }
      if (!m.value.is_array()) {
        out.push_back(
            fault(malformed, "an array of approval policies is expected", at, kPolicySource));
        continue;
      }
      std::vector<std::string> allowed;
      for (std::size_t i = 0; i < m.value.as_array().size(); ++i) {
        const Value& a = m.value.as_array()[i];
        std::string ap = at;
        json::append_index(ap, i);
        if (!a.is_string() ||
            std::find_if(kApprovals.begin(), kApprovals.end(),
                         [&](const char* n) { return a.as_string() == n; }) == kApprovals.end()) {
          out.push_back(fault(malformed, "not an approval policy", ap, kPolicySource));
        } else if (a.as_string() == "forbidden") {
          out.push_back(fault(codes::kCtForbiddenTool,
                              "\"forbidden\" is denial evidence and never allows a tool", ap,
                              kPolicySource));
        } else if (a.as_string() == "none" && m.key != "read_only") {
          out.push_back(fault(codes::kCtApprovalPolicy,
                              "a " + m.key + " tool cannot be allowed approval \"none\"", ap,
                              kPolicySource));
        } else {
          allowed.push_back(a.as_string());
        }
      }
      p.matrix[m.key] = std::move(allowed);
    }
  }
  r.reject_unknown(
      {"allowed_capability_ids", "allowed_runtime_kinds", "max_tools", "max_schema_bytes",
       "max_description_utf8", "require_expected_hashes", "side_effect_approval_matrix"},
      [](std::string_view) { return codes::kCtSourceMalformed; });
  if (out.size() != before) return std::nullopt;
  return p;
}

// ---- Digests, by Millforge's rules (the Millforge form of its hash payloads). The schemas are
// ours, admitted and normalized; they equal Millforge's for schemas without annotations.

json::Array strings(const std::vector<std::string>& v) {
  return json::Array(v.begin(), v.end());
}
Value timeout_json(const Declaration& d) {
  return json::Object{{"timeout_seconds", d.timeout_seconds},
                      {"cancellation_grace_seconds", d.grace_seconds}};
}
Value output_json(const Declaration& d) {
  return json::Object{{"max_output_bytes", d.max_output_bytes},
                      {"max_summary_utf8", d.max_summary_utf8},
                      {"redact_secrets", d.redact_secrets}};
}

std::string declaration_sha256(const Declaration& d) {
  return json::millforge_digest(json::Object{
      {"kind", "millforge.custom_tool.declaration.v1"},
      {"tool_id", d.tool_id},
      {"tool_version", d.version},
      {"implementation_id", d.implementation_id},
      {"runtime_kind", d.runtime_kind},
      {"model_tool_name", d.model_tool_name},
      {"description", d.description},
      {"description_policy", d.description_policy},
      {"input_schema", d.input_schema},
      {"output_schema", d.output_schema},
      {"required_capabilities", strings(d.capabilities)},
      {"produced_artifact_ids", strings(d.artifacts)},
      {"side_effect_class", name(d.side_effect)},
      {"idempotency", name(d.idempotency)},
      {"timeout_policy", timeout_json(d)},
      {"output_policy", output_json(d)},
      {"approval_policy", d.approval},
      {"input_policy", d.input_policy},
      {"output_contract_policy", d.output_contract_policy},
      {"idempotency_key_policy", d.idempotency_key_policy},
  });
}

std::string source_sha256(const Manifest& m) {
  std::vector<const Declaration*> order;
  for (const auto& d : m.tools) order.push_back(&d);
  std::sort(order.begin(), order.end(), [](const Declaration* a, const Declaration* b) {
    return std::tie(a->tool_id, a->version) < std::tie(b->tool_id, b->version);
  });
  json::Array tools;
  for (const Declaration* d : order) {
    tools.push_back(json::Object{{"tool_id", d->tool_id},
                                 {"tool_version", d->version},
                                 {"declaration_sha256", declaration_sha256(*d)}});
  }
  return json::millforge_digest(json::Object{
      {"kind", "millforge.custom_tool.source.v1"},
      {"schema_version", kSourceSchema},
      {"source_kind", kSourceKind},
      {"version", "1.0"},
      {"package_id", m.package_id},
      {"package_version", m.package_version},
      {"source_name", m.source_name},
      {"tools", std::move(tools)},
      {"policy_metadata", m.policy_metadata},
  });
}

// Millforge's registry digest of the descriptor it would build from the declaration.
std::string millforge_descriptor_sha256(const Declaration& d) {
  return json::millforge_digest(json::Object{
      {"schema_version", 1},
      {"kind", "millforge.tool_descriptor.v1"},
      {"tool_id", d.tool_id},
      {"tool_version", d.version},
      {"implementation_id", d.implementation_id},
      {"model_tool_name", d.model_tool_name},
      {"description", d.description},
      {"input_schema", d.input_schema},
      {"output_schema", d.output_schema},
      {"required_capabilities", strings(d.capabilities)},
      {"produced_artifact_ids", strings(d.artifacts)},
      {"side_effect_class", name(d.side_effect)},
      {"idempotency", name(d.idempotency)},
      {"timeout_policy", timeout_json(d)},
      {"output_policy", output_json(d)},
  });
}

// The record, without its own digest; `catalog_sha256` is ours and not part of the digest.
Value record_body(const Manifest& m, const std::string& source_sha, const Declaration& d) {
  return json::Object{
      {"package_id", m.package_id},
      {"package_version", m.package_version},
      {"source_sha256", source_sha},
      {"tool_id", d.tool_id},
      {"tool_version", d.version},
      {"implementation_id", d.implementation_id},
      {"runtime_kind", d.runtime_kind},
      {"model_tool_name", d.model_tool_name},
      {"declaration_sha256", declaration_sha256(d)},
      {"input_schema_sha256", json::millforge_digest(d.input_schema)},
      {"output_schema_sha256", json::millforge_digest(d.output_schema)},
      {"descriptor_sha256", millforge_descriptor_sha256(d)},
      {"required_capabilities", strings(d.capabilities)},
      {"produced_artifact_ids", strings(d.artifacts)},
      {"side_effect_class", name(d.side_effect)},
      {"idempotency", name(d.idempotency)},
      {"timeout_policy", timeout_json(d)},
      {"output_policy", output_json(d)},
      {"approval_policy", d.approval},
  };
}

std::string record_sha256(Value body) {
  body.set("kind", "millforge.custom_tool.compilation_record.v1");
  return json::millforge_digest(body);
}

// ---- The catalog entry a declaration projects to (docs/formats/catalog.md).

Value catalog_entry(const Declaration& d) {
  Value e = json::Object{
      {"tool_id", d.tool_id},
      {"version", d.version},
      {"model_tool_name", d.model_tool_name},
      {"description", d.description},
      {"input_schema", d.input_schema},
      {"output_schema", d.output_schema},
      {"required_capabilities", strings(d.capabilities)},
      {"side_effect_class", name(d.side_effect)},
      {"idempotency", name(d.idempotency)},
      {"timeout_ms", d.timeout_seconds * 1000},
      {"output_policy", json::Object{{"max_output_bytes", d.max_output_bytes},
                                     {"max_summary_bytes", d.max_summary_utf8},
                                     {"redact_secrets", d.redact_secrets}}},
      {"implementation_id", d.implementation_id},
  };
  // Millforge's descriptors produce only the artifacts they list; the catalog's default for a
  // writing tool would be any artifact, so a writing tool always states its list.
  if (!d.artifacts.empty() || d.side_effect != SideEffect::ReadOnly) {
    e.set("produced_artifact_ids", strings(d.artifacts));
  }
  return e;
}

Value catalog_of(json::Array entries) {
  return json::Object{
      {"schema_version", "1.0"}, {"kind", "millforge_tool_catalog"}, {"tools", std::move(entries)}};
}

// The manifest member a catalog member comes from.
std::string manifest_member(std::string_view catalog_member) {
  if (catalog_member == "version") return "tool_version";
  if (catalog_member == "timeout_ms") return "timeout_policy";
  return std::string(catalog_member);
}

// ---- Compilation: the policy's checks on a well-formed manifest.

class Compilation {
 public:
  Compilation(const Manifest& m, const Policy& p) : m_(m), p_(p) {}

  Result<CustomToolCompilation> run() {
    const std::string source_sha = source_sha256(m_);
    if (static_cast<std::int64_t>(m_.tools.size()) > p_.max_tools) {
      bad(codes::kCtSourceMalformed,
          "the manifest declares more tools than the policy's max_tools (" +
              std::to_string(p_.max_tools) + ")",
          "/tools");
    }
    check_hash(m_.expected_source, source_sha, "/expected_source_sha256", "source_sha256");
    shared_artifacts();
    std::vector<std::tuple<std::string, std::int64_t, Value, Value>> lowered;
    for (const Declaration& d : m_.tools) {
      auto entry = lower(d, source_sha);
      if (entry) lowered.push_back(std::move(*entry));
    }
    if (!ds_.empty()) return ds_;
    std::sort(lowered.begin(), lowered.end(), [](const auto& a, const auto& b) {
      return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
    });
    json::Array entries, records;
    for (auto& [id, version, entry, record] : lowered) {
      entries.push_back(std::move(entry));
      records.push_back(std::move(record));
    }
    CustomToolCompilation out;
    out.catalog = catalog_of(std::move(entries));
    if (auto whole = Catalog::from_json(out.catalog); !whole) {
      for (const auto& e : whole.diagnostics()) bad(codes::kCtProjection, e.message, "/tools");
      return ds_;
    }
    out.report = json::Object{
        {"schema_version", "1.0"},     {"kind", "millforge_custom_tool_compilation"},
        {"package_id", m_.package_id}, {"package_version", m_.package_version},
        {"source_sha256", source_sha}, {"records", std::move(records)},
    };
    return out;
  }

 private:
  void bad(const char* code, std::string message, std::string pointer, const char* source = "") {
    ds_.push_back(fault(code, std::move(message), std::move(pointer), source));
  }

  void check_hash(const std::optional<std::string>& expected, const std::string& actual,
                  const std::string& pointer, const char* what) {
    if (expected && *expected != actual) {
      bad(codes::kCtHashMismatch,
          std::string(what) + ": the manifest expects " + *expected + ", the compiler computes " +
              actual,
          pointer);
    } else if (!expected && p_.require_hashes) {
      bad(codes::kCtHashMismatch,
          std::string("the policy requires expected hashes; ") + what + " is not given", pointer);
    }
  }

  // An artifact is produced by one tool only.
  void shared_artifacts() {
    std::map<std::string, std::string> first;
    for (const Declaration& d : m_.tools) {
      for (const std::string& a : d.artifacts) {
        auto [it, fresh] = first.emplace(a, d.tool_id);
        if (!fresh) {
          bad(codes::kCtArtifactPolicy,
              "artifact \"" + a + "\" is produced by " + it->second + " already",
              d.at + "/produced_artifact_ids");
        }
      }
    }
  }

  std::optional<std::tuple<std::string, std::int64_t, Value, Value>> lower(
      const Declaration& d, const std::string& source_sha) {
    const std::size_t before = ds_.size();
    if (d.runtime_kind != "contract_only") {
      bad(codes::kCtRuntimeKind, "the policy allows only runtime kind contract_only",
          d.at + "/runtime_kind");
    }
    if (static_cast<std::int64_t>(d.description.size()) > p_.max_description) {
      bad(codes::kCtSourceMalformed,
          "description is over the policy's max_description_utf8 (" +
              std::to_string(p_.max_description) + " bytes)",
          d.at + "/description");
    }
    for (const auto& [schema, key, code] :
         {std::tuple{&d.input_schema, "input_schema", codes::kCtInputSchema},
          std::tuple{&d.output_schema, "output_schema", codes::kCtOutputSchema}}) {
      const auto size = static_cast<std::int64_t>(json::canonical(*schema).size());
      if (size > p_.max_schema_bytes) {
        bad(code,
            std::string(key) + " is " + std::to_string(size) +
                " bytes, over the policy's max_schema_bytes (" +
                std::to_string(p_.max_schema_bytes) + ")",
            d.at + "/" + key);
      }
    }
    for (std::size_t i = 0; i < d.capabilities.size(); ++i) {
      if (p_.capabilities.count(d.capabilities[i]) == 0) {
        bad(codes::kCtCapabilityUnknown,
            "capability \"" + d.capabilities[i] +
                "\" is not in the policy's allowed_capability_ids",
            d.at + "/required_capabilities");
      }
    }
    const std::string side(name(d.side_effect));
    const auto allowed = p_.matrix.find(side);
    if (allowed == p_.matrix.end() || std::find(allowed->second.begin(), allowed->second.end(),
                                                d.approval) == allowed->second.end()) {
      bad(codes::kCtApprovalPolicy,
          "the policy does not allow approval \"" + d.approval + "\" for a " + side + " tool",
          d.at + "/approval_policy");
    }
    if (!d.artifacts.empty() && d.approval == "none") {
      bad(codes::kCtApprovalPolicy, "a tool that produces artifacts needs explicit approval",
          d.at + "/approval_policy");
    }
    check_hash(d.expected_declaration, declaration_sha256(d), d.at + "/expected_declaration_sha256",
               "declaration_sha256");
    check_hash(d.expected_descriptor, millforge_descriptor_sha256(d),
               d.at + "/expected_descriptor_sha256", "descriptor_sha256");
    Value record = record_body(m_, source_sha, d);
    const std::string record_sha = record_sha256(record);
    check_hash(d.expected_record, record_sha, d.at + "/expected_compilation_record_sha256",
               "compilation_record_sha256");
    // The projection: the entry must be one our catalog reader accepts.
    Value entry = catalog_entry(d);
    auto one = Catalog::from_json(catalog_of(json::Array{entry}));
    if (!one) {
      for (const auto& e : one.diagnostics()) {
        std::string pointer = d.at;
        const std::string prefix = "/tools/0/";
        if (e.pointer.rfind(prefix, 0) == 0) {
          const std::string rest = e.pointer.substr(prefix.size());
          const auto slash = rest.find('/');
          pointer += "/" + manifest_member(rest.substr(0, slash)) +
                     (slash == std::string::npos ? "" : rest.substr(slash));
        }
        bad(codes::kCtProjection, "not representable as a catalog descriptor: " + e.message,
            pointer);
      }
      return std::nullopt;
    }
    if (ds_.size() != before) return std::nullopt;
    record.set("compilation_record_sha256", record_sha);
    record.set("catalog_descriptor_sha256", one->descriptors().begin()->second.descriptor_sha256);
    return std::tuple{d.tool_id, d.version, std::move(entry), std::move(record)};
  }

  const Manifest& m_;
  const Policy& p_;
  diag::Diagnostics ds_;
};

Result<CustomToolCompilation> rejected(diag::Diagnostics ds) {
  std::sort(ds.begin(), ds.end(), [](const diag::Diagnostic& a, const diag::Diagnostic& b) {
    return std::tie(a.code, a.source, a.pointer, a.message) <
           std::tie(b.code, b.source, b.pointer, b.message);
  });
  return ds;
}

}  // namespace

Result<CustomToolCompilation> compile_custom_tools(const json::Value& manifest,
                                                   const json::Value& policy) {
  diag::Diagnostics ds;
  // Hazards first: text that is not a contract stops everything else.
  std::string at;
  scan(manifest, at, "", "", ds);
  at.clear();
  scan(policy, at, "", kPolicySource, ds);
  if (!ds.empty()) return rejected(std::move(ds));
  if (!manifest.is_object())
    ds.push_back(fault(codes::kCtSourceMalformed, "not an object", "", ""));
  if (!policy.is_object()) {
    ds.push_back(fault(codes::kCtSourceMalformed, "not an object", "", kPolicySource));
  }
  if (!ds.empty()) return rejected(std::move(ds));
  auto m = read_manifest(manifest, ds);
  auto p = read_policy(policy, ds);
  if (!m || !p) return rejected(std::move(ds));
  auto out = Compilation(*m, *p).run();
  if (!out) return rejected(out.take_diagnostics());
  return out;
}

}  // namespace mf::tools
