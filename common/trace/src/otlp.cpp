// A verified trace as OTLP/JSON spans (otlp.hpp); span and trace ids derive from the run, so the
// same trace exports the same spans.
#include "mf/trace/otlp.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/json/jsonl.hpp"

namespace mf::trace {

namespace {

using json::Value;

constexpr std::int64_t kInternal = 1, kClient = 3;  // SpanKind
constexpr std::int64_t kStatusOk = 1, kStatusError = 2;

std::string id_hex(std::string_view material, std::size_t bytes) {
  return hash::sha256_hex(material).substr(0, bytes * 2);
}

Value attribute(std::string_view key, const Value& v) {
  Value any;
  if (v.is_string()) {
    any = json::Object{{"stringValue", v}};
  } else if (v.is_bool()) {
    any = json::Object{{"boolValue", v}};
  } else if (v.is_number() && v.as_exact_int()) {
    any = json::Object{{"intValue", std::to_string(*v.as_exact_int())}};  // int64 as a string
  } else if (v.is_number()) {
    any = json::Object{{"doubleValue", v}};
  } else if (v.is_array()) {
    json::Array values;
    for (const Value& x : v.as_array()) values.push_back(*attribute("", x).find("value"));
    any = json::Object{{"arrayValue", json::Object{{"values", std::move(values)}}}};
  } else {
    any = json::Object{{"stringValue", json::Value("")}};
  }
  return json::Object{{"key", std::string(key)}, {"value", std::move(any)}};
}

// An attribute the conventions type as a double, written as one even when the value is whole.
Value double_attribute(std::string_view key, const Value& v) {
  return json::Object{{"key", std::string(key)},
                      {"value", json::Object{{"doubleValue", Value(v.as_number())}}}};
}

struct Span {
  std::string span_id, parent, name;
  std::int64_t kind = kInternal;
  std::int64_t start_ms = 0, end_ms = 0;
  json::Array attributes, events;
  std::int64_t status = kStatusOk;
  std::string message;

  Value to_json(const std::string& trace_id, std::int64_t base_ms) const {
    const auto nanos = [&](std::int64_t ms) { return std::to_string((base_ms + ms) * 1000000); };
    Value s = json::Object{{"traceId", trace_id},
                           {"spanId", span_id},
                           {"name", name},
                           {"kind", kind},
                           {"startTimeUnixNano", nanos(start_ms)},
                           {"endTimeUnixNano", nanos(end_ms)},
                           {"attributes", attributes},
                           {"status", json::Object{{"code", status}, {"message", message}}}};
    if (!parent.empty()) s.set("parentSpanId", parent);
    if (!events.empty()) {
      json::Array out;
      for (const Value& e : events) {
        Value copy = e;
        copy.set("timeUnixNano", nanos(*e.find("t_ms")->as_exact_int()));
        copy.as_object().erase(
            std::remove_if(copy.as_object().begin(), copy.as_object().end(),
                           [](const json::Member& m) { return m.key == "t_ms"; }),
            copy.as_object().end());
        out.push_back(std::move(copy));
      }
      s.set("events", std::move(out));
    }
    return s;
  }
};

const Value* member(const Value& v, std::string_view key) {
  return v.is_object() ? v.find(key) : nullptr;
}

std::string text(const Value& v, std::string_view key) {
  const Value* m = member(v, key);
  return m != nullptr && m->is_string() ? m->as_string() : std::string();
}

// gen_ai.provider.name: the conventions' value for the live APIs; a scripted or simulated model
// is Millforge's own ("millforge.scripted", "millforge.sim").
std::string provider_name(const std::string& model) {
  return model == "openai" || model == "anthropic" ? model : "millforge." + model;
}

// server.address and server.port of an endpoint URL (scheme://host[:port]/path; an IPv6 host in
// brackets), the port defaulting to the scheme's.
void add_server(const std::string& url, json::Array& attributes) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string::npos) return;
  const std::size_t from = scheme + 3;
  const std::string authority = url.substr(from, url.find('/', from) - from);
  std::string host = authority;
  std::string port;
  if (!authority.empty() && authority.front() == '[') {
    const std::size_t close = authority.find(']');
    if (close == std::string::npos) return;
    host = authority.substr(1, close - 1);
    if (authority.size() > close + 1 && authority[close + 1] == ':')
      port = authority.substr(close + 2);
  } else if (const std::size_t colon = authority.rfind(':'); colon != std::string::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return;
  std::int64_t number = url.compare(0, scheme, "https") == 0 ? 443 : 80;
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos) return;
    number = std::stoll(port);
  }
  attributes.push_back(attribute("server.address", Value(host)));
  attributes.push_back(attribute("server.port", Value(number)));
}

// The request options a live profile sets (run_started's model_options) as the conventions name
// them; an option they do not name (min_p, reasoning_effort) is left out.
void add_request_options(const Value* options, json::Array& attributes) {
  if (options == nullptr || !options->is_object()) return;
  for (const json::Member& m : options->as_object()) {
    if (m.key == "temperature" || m.key == "top_p" || m.key == "top_k" ||
        m.key == "presence_penalty" || m.key == "frequency_penalty") {
      if (m.value.is_number()) {
        attributes.push_back(double_attribute("gen_ai.request." + m.key, m.value));
      }
    } else if (m.key == "max_tokens" || m.key == "seed") {
      if (m.value.as_exact_int())
        attributes.push_back(attribute("gen_ai.request." + m.key, m.value));
    } else if (m.key == "stop" || m.key == "stop_sequences") {
      const Value stops = m.value.is_string() ? Value(json::Array{m.value}) : m.value;
      if (stops.is_array() && std::all_of(stops.as_array().begin(), stops.as_array().end(),
                                          [](const Value& x) { return x.is_string(); })) {
        attributes.push_back(attribute("gen_ai.request.stop_sequences", stops));
      }
    }
  }
}

// error.type of a failed model call: the HTTP status when the provider answered with one
// ("HTTP 429: ..."), else model_failed.
std::string model_error_type(const std::string& error) {
  const std::size_t digits_end = error.find_first_not_of("0123456789", 5);
  if (error.size() >= 8 && error.compare(0, 5, "HTTP ") == 0 &&
      (digits_end == 8 || digits_end == std::string::npos)) {
    return error.substr(5, 3);
  }
  return "model_failed";
}

}  // namespace

Result<json::Value> to_otlp(std::string_view trace, std::int64_t start_unix_ms) {
  std::vector<Value> events;
  json::JsonlReader reader(trace);
  Result<Value> line = Value();
  while (reader.next(line)) {
    if (!line) return line.take_diagnostics();
    events.push_back(std::move(*line));
  }
  if (events.empty()) return diag::error(diag::codes::kTraceNoTerminal, "the trace has no events");
  const std::string run_id = text(events.front(), "run_id");
  const std::string trace_id = id_hex(run_id, 16);
  const auto span_id = [&](const Value& opening) {
    return id_hex(run_id + ":" + std::to_string(*member(opening, "seq")->as_exact_int()), 8);
  };
  const auto t = [](const Value& e) { return *member(e, "t_ms")->as_exact_int(); };
  const Value& started = events.front();
  Span run;
  run.span_id = span_id(started);
  const std::string agent =
      !text(started, "harness_id").empty() ? text(started, "harness_id") : text(started, "task_id");
  run.name = "invoke_agent " + agent;
  // The model as the run named it: a trace recorded before run_started carried model_id has
  // only the backend's kind.
  const std::string provider = provider_name(text(started, "model"));
  const std::string model =
      !text(started, "model_id").empty() ? text(started, "model_id") : text(started, "model");
  run.attributes = {attribute("gen_ai.operation.name", Value("invoke_agent")),
                    attribute("gen_ai.provider.name", Value(provider)),
                    attribute("gen_ai.agent.name", Value(agent)),
                    attribute("gen_ai.request.model", Value(model)),
                    attribute("gen_ai.conversation.id", Value(run_id)),
                    attribute("millforge.run_id", Value(run_id)),
                    attribute("millforge.mode", *member(started, "mode"))};
  std::vector<Span> children;
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t open_call = kNone;                  // the model call span awaiting its reply
  std::map<std::string, std::size_t> open_tools;  // call id -> span index
  for (const Value& e : events) {
    const std::string event = text(e, "event");
    run.end_ms = t(e);
    if (event == "model_requested") {
      Span s;
      s.span_id = span_id(e);
      s.parent = run.span_id;
      s.kind = kClient;
      s.name = "chat " + model;
      s.start_ms = s.end_ms = t(e);
      s.attributes = {attribute("gen_ai.operation.name", Value("chat")),
                      attribute("gen_ai.provider.name", Value(provider)),
                      attribute("gen_ai.request.model", Value(model)),
                      attribute("gen_ai.conversation.id", Value(run_id))};
      add_server(text(started, "endpoint"), s.attributes);
      add_request_options(member(started, "model_options"), s.attributes);
      s.attributes.push_back(attribute("millforge.call", *member(e, "call")));
      s.attributes.push_back(attribute("millforge.request.kind", *member(e, "kind")));
      if (const Value* tools = member(e, "tools")) {
        s.attributes.push_back(attribute("millforge.request.tools", *tools));
      }
      children.push_back(std::move(s));
      open_call = children.size() - 1;
    } else if ((event == "model_responded" || event == "model_failed") && open_call != kNone) {
      Span& s = children[open_call];
      s.end_ms = t(e);
      if (const Value* usage = member(e, "usage")) {
        for (const char* key : {"input_tokens", "output_tokens"}) {
          if (const Value* n = member(*usage, key)) {
            s.attributes.push_back(attribute(std::string("gen_ai.usage.") + key, *n));
          }
        }
      }
      if (const Value* stop = member(e, "stop_reason")) {
        s.attributes.push_back(attribute("gen_ai.response.finish_reasons", json::Array{*stop}));
      }
      if (const Value* v = member(e, "response_model")) {
        s.attributes.push_back(attribute("gen_ai.response.model", *v));
      }
      if (const Value* v = member(e, "response_id")) {
        s.attributes.push_back(attribute("gen_ai.response.id", *v));
      }
      if (event == "model_failed") {
        s.status = kStatusError;
        s.message = text(e, "error");
        s.attributes.push_back(attribute("error.type", Value(model_error_type(s.message))));
      }
      open_call = kNone;
    } else if (event == "tool_called") {
      Span s;
      s.span_id = span_id(e);
      s.parent = run.span_id;
      s.name = "execute_tool " + text(e, "tool");
      s.start_ms = s.end_ms = t(e);
      s.attributes = {attribute("gen_ai.operation.name", Value("execute_tool")),
                      attribute("gen_ai.tool.name", *member(e, "tool")),
                      attribute("gen_ai.tool.call.id", *member(e, "call_id"))};
      children.push_back(std::move(s));
      open_tools[text(e, "call_id")] = children.size() - 1;
    } else if (event == "tool_completed" || event == "tool_denied") {
      auto it = open_tools.find(text(e, "call_id"));
      if (it == open_tools.end()) {
        // A denial before the boundary: a guardrail refused the call; an event of the run.
        run.events.push_back(json::Object{
            {"t_ms", t(e)},
            {"name", "tool_denied"},
            {"attributes", json::Array{attribute("gen_ai.tool.name", Value(text(e, "tool"))),
                                       attribute("millforge.reason", Value(text(e, "reason")))}}});
        continue;
      }
      Span& s = children[it->second];
      s.end_ms = t(e);
      const Value* ok = member(e, "ok");
      if (event == "tool_denied" || (ok != nullptr && ok->is_bool() && !ok->as_bool())) {
        s.status = kStatusError;
        s.message = event == "tool_denied" ? text(e, "reason") : "the tool returned an error";
        s.attributes.push_back(attribute("error.type", Value(event)));
      }
      open_tools.erase(it);
    } else if (event == "guardrail_violation" || event == "budget_exhausted" ||
               event == "context_compacted" || event == "projection_compiled" ||
               event == "verification_failed" || event == "nudge_sent" ||
               event == "tools_skipped") {
      json::Array attributes;
      for (const json::Member& m : e.as_object()) {
        static const std::set<std::string> envelope = {"v",     "run_id", "seq",
                                                       "event", "t_ms",   "prev"};
        if (envelope.count(m.key) != 0 || m.value.is_object()) continue;
        attributes.push_back(attribute("millforge." + m.key, m.value));
      }
      run.events.push_back(
          json::Object{{"t_ms", t(e)}, {"name", event}, {"attributes", std::move(attributes)}});
    } else if (event == "run_completed" || event == "run_failed") {
      run.attributes.push_back(attribute("millforge.terminal", *member(e, "terminal")));
      if (event == "run_failed") {
        run.attributes.push_back(attribute("error.type", *member(e, "terminal")));
        run.status = kStatusError;
        run.message =
            text(e, "terminal") + (text(e, "error").empty() ? "" : ": " + text(e, "error"));
      }
    }
  }
  json::Array spans;
  spans.push_back(run.to_json(trace_id, start_unix_ms));
  for (const Span& s : children) spans.push_back(s.to_json(trace_id, start_unix_ms));
  return Value(json::Object{
      {"resourceSpans",
       json::Array{json::Object{
           {"resource", json::Object{{"attributes",
                                      json::Array{attribute("service.name", Value("millforge"))}}}},
           {"scopeSpans", json::Array{json::Object{
                              {"scope", json::Object{{"name", "mf-replay"}, {"version", "0.1.0"}}},
                              {"spans", std::move(spans)}}}}}}}});
}

}  // namespace mf::trace
