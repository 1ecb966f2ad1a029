// The custom-tool compiler's hazard scan: text in a manifest or a policy that is not a contract
// (secret material, executable runtime kinds, live URLs, paths, shell commands, script bodies,
// templates, instructions to the model) rejects the manifest before anything else reads it.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "custom_tools_model.hpp"
#include "mf/diag/codes.hpp"
#include "mf/diag/secrets.hpp"
#include "mf/json/pointer.hpp"

namespace mf::tools::custom {
namespace {

namespace codes = diag::codes;

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

}  // namespace

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
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

}  // namespace mf::tools::custom
