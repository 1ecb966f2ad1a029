// open_model: the one place a model spec ("scripted:FILE", "sim:FILE?...", "openai:PROFILE",
// "anthropic:PROFILE") becomes a Model.
#include <filesystem>

#include "live.hpp"
#include "mf/diag/codes.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/io/file.hpp"
#include "mf/model/live.hpp"
#include "mf/model/model.hpp"
#include "mf/model/scripted.hpp"
#include "mf/model/sim.hpp"
#include "mf/text/suggest.hpp"

namespace mf::model {

namespace {

// The API and profile path of a live spec.
std::optional<std::pair<wire::Api, std::string>> live_profile(const std::string& spec) {
  for (const auto& [prefix, api] :
       {std::pair<std::string_view, wire::Api>{"openai:", wire::Api::OpenAI},
        {"anthropic:", wire::Api::Anthropic}}) {
    if (spec.rfind(prefix, 0) == 0) return std::pair(api, spec.substr(prefix.size()));
  }
  return std::nullopt;
}

}  // namespace

json::Value file_identity(std::string_view path, std::string_view bytes, std::string_view suffix) {
  return json::Object{
      {"model_id", std::filesystem::path(path).filename().string() + std::string(suffix)},
      {"model_sha256", hash::sha256_hex(bytes)}};
}

bool is_live_spec(std::string_view spec) {
  return live_profile(std::string(spec)).has_value();
}

std::optional<CacheMode> parse_cache_mode(std::string_view text) {
  if (text == "off") return CacheMode::Off;
  if (text == "read") return CacheMode::Read;
  if (text == "write") return CacheMode::Write;
  if (text == "readwrite") return CacheMode::ReadWrite;
  return std::nullopt;
}

Result<std::unique_ptr<Model>> open_model(const std::string& spec, const OpenOptions& options) {
  const auto after = [&](std::string_view prefix) -> std::optional<std::string> {
    if (spec.rfind(prefix, 0) != 0) return std::nullopt;
    return spec.substr(prefix.size());
  };
  if (auto path = after("scripted:")) {
    Result<std::string> bytes = io::read_input(*path, 16u << 20);
    if (!bytes) return bytes.take_diagnostics();
    auto model = ScriptedModel::parse(*bytes);
    if (!model) {
      auto ds = model.take_diagnostics();
      for (auto& d : ds) d.source = *path;  // about the responses file, not the task
      return ds;
    }
    (*model)->set_identity(file_identity(*path, *bytes, ""));
    return std::unique_ptr<Model>(std::move(*model));
  }
  if (auto rest = after("sim:")) return open_sim(*rest, options.repeat);
  if (auto live = live_profile(spec)) return open_live(live->first, live->second, options);
  // A misspelt kind ("opneai:p.json") is named with its correction.
  std::string hint;
  if (const std::size_t colon = spec.find(':'); colon != std::string::npos) {
    if (auto kind = text::closest(std::string_view(spec).substr(0, colon),
                                  {"scripted", "sim", "openai", "anthropic"})) {
      hint = " (did you mean \"" + *kind + spec.substr(colon) + "\"?)";
    }
  }
  return diag::error(diag::codes::kUsage,
                     "unsupported model \"" + spec + "\"" + hint +
                         " (scripted:FILE, sim:FILE?seed=S&faults=R[&kinds=a,b], "
                         "openai:PROFILE.json, anthropic:PROFILE.json)");
}

Status check_model_spec(const std::string& spec) {
  if (auto live = live_profile(spec)) {
    auto profile = read_profile(live->second, live->first);
    return profile ? Status() : Status(profile.take_diagnostics());
  }
  auto opened = open_model(spec);
  return opened ? Status() : Status(opened.take_diagnostics());
}

}  // namespace mf::model
