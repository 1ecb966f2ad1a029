// Prompt units: the JSON form (docs/projection.md, "Units"), tool import and normalization.
#include <algorithm>
#include <map>

#include "mf/diag/codes.hpp"
#include "mf/json/fields.hpp"
#include "mf/prompt/projection.hpp"

namespace mf::prompt {

namespace {

using json::Value;

constexpr std::size_t kMaxText = 32 * 1024;

const std::pair<Kind, std::string_view> kKinds[] = {{Kind::Tool, "tool"},
                                                    {Kind::McpTool, "mcp_tool"},
                                                    {Kind::Skill, "skill"},
                                                    {Kind::Instruction, "instruction"},
                                                    {Kind::Resource, "resource"}};

const std::pair<Trigger::On, std::string_view> kTriggers[] = {{Trigger::On::Keyword, "keyword"},
                                                              {Trigger::On::Phrase, "phrase"},
                                                              {Trigger::On::Signal, "signal"},
                                                              {Trigger::On::Need, "need"}};

bool name_char(char c, bool first) {
  const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  return alnum || (!first && (c == '_' || c == '.' || c == '/' || c == '-'));
}

diag::Diagnostic fault(const std::string& pointer, std::string message) {
  return diag::error(diag::codes::kUnitMalformed, std::move(message), pointer);
}

// Splits "<kind>:<name>"; false when either part is not in the format.
bool parse_id(const std::string& id, Kind& kind, std::string& name) {
  const auto colon = id.find(':');
  if (colon == std::string::npos) return false;
  const std::string_view k(id.data(), colon);
  name = id.substr(colon + 1);
  if (name.empty() || name.size() > 128) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!name_char(name[i], i == 0)) return false;
  }
  for (const auto& [kk, n] : kKinds) {
    if (n == k) {
      kind = kk;
      return true;
    }
  }
  return false;
}

// A list of distinct strings, each checked by `valid`; stored sorted.
std::vector<std::string> strings(json::FieldReader& r, std::string_view key, std::size_t max_items,
                                 std::size_t max_bytes, bool ids) {
  std::vector<std::string> out;
  const Value* a = r.array(key, false);
  if (a == nullptr) return out;
  const std::string base = r.pointer_of(key);
  if (a->as_array().size() > max_items) {
    r.add(
        fault(base, std::string(key) + " holds more than " + std::to_string(max_items) + " items"));
    return out;
  }
  for (std::size_t i = 0; i < a->as_array().size(); ++i) {
    const Value& v = a->as_array()[i];
    const std::string at = base + "/" + std::to_string(i);
    Kind kind;
    std::string name;
    if (!v.is_string() || v.as_string().empty() || v.as_string().size() > max_bytes) {
      r.add(fault(at, std::string(key) + " items are strings of 1.." + std::to_string(max_bytes) +
                          " bytes"));
    } else if (ids && !parse_id(v.as_string(), kind, name)) {
      r.add(fault(at, "'" + v.as_string() + "' is not a unit id (<kind>:<name>)"));
    } else if (std::find(out.begin(), out.end(), v.as_string()) != out.end()) {
      r.add(fault(at, "'" + v.as_string() + "' is listed twice in " + std::string(key)));
    } else {
      out.push_back(v.as_string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<Unit> unit_from_json(const Value& v, const std::string& pointer) {
  if (!v.is_object()) return fault(pointer, "a unit is an object");
  json::FieldReader r(v, pointer);
  Unit u;
  if (auto id = r.string("id")) {
    if (!parse_id(*id, u.kind, u.name)) {
      r.add(fault(r.pointer_of("id"), "'" + *id +
                                          "' is not a unit id: <kind>:<name> with kind tool, "
                                          "mcp_tool, skill, instruction or resource"));
    }
    u.id = *id;
  }
  if (auto d = r.string("description", false)) {
    if (d->size() > 8192) r.add(fault(r.pointer_of("description"), "description over 8192 bytes"));
    u.description = *d;
  }
  u.aliases = strings(r, "aliases", 32, 128, false);
  if (const Value* t = r.array("triggers", false)) {
    if (t->as_array().size() > 64) r.add(fault(r.pointer_of("triggers"), "more than 64 triggers"));
    for (std::size_t i = 0; i < t->as_array().size() && i < 64; ++i) {
      const std::string at = r.pointer_of("triggers") + "/" + std::to_string(i);
      const Value& tv = t->as_array()[i];
      if (!tv.is_object()) {
        r.add(fault(at, "a trigger is an object"));
        continue;
      }
      json::FieldReader tr(tv, at);
      Trigger trig;
      int kinds = 0;
      for (const auto& [on, key] : kTriggers) {
        if (auto s = tr.string(key, false)) {
          ++kinds;
          trig.on = on;
          trig.value = *s;
          if (s->empty() || s->size() > 256) {
            tr.add(fault(tr.pointer_of(key), "a trigger value is 1..256 bytes"));
          }
        }
      }
      if (kinds != 1)
        tr.add(fault(at, "a trigger has exactly one of keyword, phrase, signal, need"));
      if (auto w = tr.integer("weight")) {
        if (*w < 0 || *w > 100000) tr.add(fault(tr.pointer_of("weight"), "weight is 0..100000"));
        trig.weight = *w;
      }
      tr.reject_unknown({"keyword", "phrase", "signal", "need", "weight"});
      for (auto& d : tr.take()) r.add(std::move(d));
      u.triggers.push_back(std::move(trig));
    }
  }
  if (auto a = r.string("activation", false)) {
    if (*a == "always") {
      u.activation = Activation::Always;
    } else if (*a != "relevant") {
      r.add(fault(r.pointer_of("activation"), "activation is 'relevant' or 'always'"));
    }
  }
  u.capabilities = strings(r, "capabilities", 64, 128, false);
  u.requirements = strings(r, "requires", 64, 256, true);
  u.suggests = strings(r, "suggests", 64, 256, true);
  u.conflicts = strings(r, "conflicts", 64, 256, true);
  u.supersedes = strings(r, "supersedes", 64, 256, true);
  for (const auto* list : {&u.requirements, &u.suggests, &u.conflicts, &u.supersedes}) {
    if (!u.id.empty() && std::find(list->begin(), list->end(), u.id) != list->end()) {
      r.add(fault(pointer, "unit '" + u.id + "' names itself in a relation"));
    }
  }
  if (auto p = r.integer("priority", false)) {
    if (*p < 0 || *p > 1000) r.add(fault(r.pointer_of("priority"), "priority is 0..1000"));
    u.priority = *p;
  }
  if (auto m = r.boolean("mandatory", false)) u.mandatory = *m;
  const bool tool = u.kind == Kind::Tool || u.kind == Kind::McpTool;
  for (const char* key : {"content", "summary"}) {
    if (auto c = r.string(key, false)) {
      if (tool) r.add(fault(r.pointer_of(key), std::string("a tool unit has no ") + key));
      if (c->size() > kMaxText) r.add(fault(r.pointer_of(key), std::string(key) + " over 32 KiB"));
      (std::string_view(key) == "content" ? u.content : u.summary) = *c;
    }
  }
  if (const Value* s = r.object("schema", false)) {
    if (u.kind != Kind::McpTool) {
      r.add(fault(r.pointer_of("schema"),
                  "only mcp_tool units carry a schema; a tool's comes from its descriptor"));
    } else {
      json::FieldReader sr(*s, r.pointer_of("schema"));
      const auto d = sr.string("description", false);
      const Value* in = sr.object("input_schema");
      sr.reject_unknown({"description", "input_schema"});
      for (auto& diag : sr.take()) r.add(std::move(diag));
      if (in != nullptr) {
        u.schema = json::Object{
            {"description", d ? *d : u.description}, {"input_schema", *in}, {"name", u.name}};
      }
    }
  }
  r.reject_unknown({"id", "description", "aliases", "triggers", "activation", "capabilities",
                    "requires", "suggests", "conflicts", "supersedes", "priority", "mandatory",
                    "content", "summary", "schema"});
  if (!r.ok()) {
    auto ds = r.take();
    for (auto& d : ds) d.code = diag::codes::kUnitMalformed;  // field faults are unit faults here
    return ds;
  }
  return u;
}

}  // namespace

Result<std::vector<Unit>> units_from_json(const Value& units, const std::string& pointer) {
  if (!units.is_array()) return fault(pointer, "units is an array of units");
  std::vector<Unit> out;
  diag::Diagnostics faults;
  for (std::size_t i = 0; i < units.as_array().size(); ++i) {
    auto u = unit_from_json(units.as_array()[i], pointer + "/" + std::to_string(i));
    if (!u) {
      for (const auto& d : u.diagnostics()) faults.push_back(d);
    } else {
      out.push_back(std::move(*u));
    }
  }
  if (!faults.empty()) return faults;
  return out;
}

std::string tool_unit_id(const std::string& name, bool connector) {
  return (connector ? "mcp_tool:" : "tool:") + name;
}

Result<std::vector<Unit>> with_tools(std::vector<Unit> declared,
                                     const std::vector<ToolSource>& tools) {
  std::map<std::string, Unit*> by_id;
  for (auto& u : declared) by_id.emplace(u.id, &u);
  std::vector<Unit> out;
  diag::Diagnostics faults;
  std::map<std::string, bool> named;  // tool name -> whether a connector provides it
  for (const auto& t : tools) {
    if (auto [it, fresh] = named.emplace(t.name, t.connector);
        !fresh && it->second != t.connector) {
      faults.push_back(diag::error(diag::codes::kUnitCatalog,
                                   "two tools are named '" + t.name + "': a tool and a connector's",
                                   ""));
    }
    const std::string id = tool_unit_id(t.name, t.connector);
    Unit u;
    if (auto it = by_id.find(id); it != by_id.end()) {
      u = std::move(*it->second);
      it->second->id.clear();  // consumed: a second tool of the name is a unit of its own,
      by_id.erase(it);         // which Catalog::build refuses as declared twice (MF-P003)
      if (t.connector && !u.schema.is_null()) {
        faults.push_back(diag::error(diag::codes::kUnitMalformed,
                                     "unit '" + id +
                                         "' refines a connector tool: its schema is "
                                         "the pinned descriptor's and cannot be declared",
                                     ""));
      }
    } else {
      u.id = id;
      u.name = t.name;
      u.kind = t.connector ? Kind::McpTool : Kind::Tool;
    }
    u.description = t.description;
    u.capabilities = t.capabilities;
    std::sort(u.capabilities.begin(), u.capabilities.end());
    u.capabilities.erase(std::unique(u.capabilities.begin(), u.capabilities.end()),
                         u.capabilities.end());
    u.schema = json::Object{
        {"description", t.description}, {"input_schema", t.input_schema}, {"name", t.name}};
    out.push_back(std::move(u));
  }
  for (auto& u : declared) {
    if (u.id.empty()) continue;
    if (u.kind == Kind::Tool || (u.kind == Kind::McpTool && u.schema.is_null())) {
      std::string msg =
          "unit '" + u.id + "' names no " +
          (u.kind == Kind::Tool ? "tool of the catalog" : "connector tool and declares no schema");
      if (auto it = named.find(u.name); it != named.end()) {
        msg += it->second ? " ('" + u.name + "' is a connector tool: mcp_tool:" + u.name + ")"
                          : " ('" + u.name + "' is not a connector tool: tool:" + u.name + ")";
      }
      faults.push_back(diag::error(diag::codes::kUnitUnknown, std::move(msg), ""));
      continue;
    }
    out.push_back(std::move(u));
  }
  if (!faults.empty()) return faults;
  return out;
}

Value to_json(const Unit& u) {
  const auto list = [](const std::vector<std::string>& items) {
    json::Array a;
    for (const auto& i : items) a.push_back(i);
    return Value(std::move(a));
  };
  json::Array triggers;
  for (const auto& t : u.triggers) {
    std::string_view on;
    for (const auto& [k, n] : kTriggers) {
      if (k == t.on) on = n;
    }
    triggers.push_back(json::Object{{std::string(on), t.value}, {"weight", t.weight}});
  }
  Value v = json::Object{{"id", u.id},
                         {"description", u.description},
                         {"aliases", list(u.aliases)},
                         {"triggers", std::move(triggers)},
                         {"activation", u.activation == Activation::Always ? "always" : "relevant"},
                         {"capabilities", list(u.capabilities)},
                         {"requires", list(u.requirements)},
                         {"suggests", list(u.suggests)},
                         {"conflicts", list(u.conflicts)},
                         {"supersedes", list(u.supersedes)},
                         {"priority", u.priority},
                         {"mandatory", u.mandatory}};
  if (u.kind == Kind::McpTool) {
    if (u.schema.is_null()) return v;  // a declared refinement of a connector tool
    v.set("schema", json::Object{{"description", *u.schema.find("description")},
                                 {"input_schema", *u.schema.find("input_schema")}});
  } else if (u.kind != Kind::Tool) {  // a tool's schema is its descriptor's, never declared
    v.set("content", u.content);
    if (!u.summary.empty()) v.set("summary", u.summary);
  }
  return v;
}

const char* name(Mode mode) {
  return mode == Mode::AllTools ? "all_tools" : "compiled";
}

}  // namespace mf::prompt
