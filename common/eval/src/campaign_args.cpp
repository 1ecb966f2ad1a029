// `mf-eval run`'s campaign options read from their text forms (campaign_args.hpp): shard, matrix
// columns, the journal's place and the progress line.
#include "mf/eval/campaign_args.hpp"

#include <algorithm>
#include <chrono>
#include <utility>

#include "mf/model/live.hpp"

namespace mf::eval {
namespace {

// One to nine decimal digits: a number that fits comfortably in an int64.
bool short_number(std::string_view t) {
  return !t.empty() && t.size() <= 9 && t.find_first_not_of("0123456789") == std::string_view::npos;
}

std::int64_t to_int(std::string_view digits) {
  std::int64_t n = 0;
  for (const char c : digits) n = n * 10 + (c - '0');
  return n;
}

}  // namespace

std::optional<Shard> parse_shard(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size() ||
      text.size() > 21) {
    return std::nullopt;
  }
  const std::string_view i = text.substr(0, slash), n = text.substr(slash + 1);
  if (!short_number(i) || !short_number(n)) return std::nullopt;
  const Shard shard{to_int(i), to_int(n)};
  if (shard.count < 1 || shard.index < 1 || shard.index > shard.count) return std::nullopt;
  return shard;
}

std::optional<ModelColumn> parse_model_column(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq > 64 || eq + 1 == text.size()) {
    return std::nullopt;
  }
  const std::string_view label = text.substr(0, eq);
  if (label.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                              "0123456789_-") != std::string_view::npos) {
    return std::nullopt;
  }
  return ModelColumn{std::string(label), std::string(text.substr(eq + 1))};
}

std::vector<Variant> cross(const std::vector<ModelColumn>& models,
                           const std::vector<runtime::Guardrails>& presets) {
  std::vector<Variant> variants;
  if (models.empty() && presets.empty()) return variants;
  for (std::size_t m = 0; m < std::max<std::size_t>(models.size(), 1); ++m) {
    for (std::size_t g = 0; g < std::max<std::size_t>(presets.size(), 1); ++g) {
      Variant v;
      if (!models.empty()) {
        v.label = models[m].label;
        v.model = models[m].spec;
      }
      if (!presets.empty()) {
        v.label += (v.label.empty() ? "" : ".") + std::string(runtime::name(presets[g]));
        v.guardrails = presets[g];
      }
      variants.push_back(std::move(v));
    }
  }
  return variants;
}

diag::CommandOutcome read_matrix(const std::vector<std::string>& models,
                                 const std::vector<std::string>& presets,
                                 std::vector<Variant>& variants) {
  using diag::CommandOutcome;
  std::vector<ModelColumn> columns;
  for (const auto& m : models) {
    auto column = parse_model_column(m);
    if (!column) {
      return CommandOutcome::usage_error("--model takes LABEL=SPEC, LABEL of [A-Za-z0-9_-], not '" +
                                         m + "'");
    }
    for (const auto& seen : columns) {
      if (seen.label == column->label) {
        return CommandOutcome::usage_error("--model " + column->label + " given twice");
      }
    }
    if (Status s = model::check_model_spec(column->spec); !s) {
      return CommandOutcome::stopped_by(s.take_diagnostics());
    }
    columns.push_back(std::move(*column));
  }
  std::vector<runtime::Guardrails> chosen;
  for (const auto& p : presets) {
    const auto g = runtime::parse_guardrails(p);
    if (!g) return CommandOutcome::usage_error("--guardrails: no preset '" + p + "'");
    if (std::find(chosen.begin(), chosen.end(), *g) != chosen.end()) {
      return CommandOutcome::usage_error("--guardrails " + p + " given twice");
    }
    chosen.push_back(*g);
  }
  variants = cross(columns, chosen);
  return {};
}

JournalPlace journal_place(const std::string& output, const std::optional<std::string>& journal,
                           bool store) {
  if (store && !journal) return {JournalPlace::Kind::Store, {}};
  std::string path = journal ? *journal : (output == "-" ? "" : output + ".journal");
  if (path.empty()) return {};
  return {JournalPlace::Kind::File, std::move(path)};
}

std::string progress_line(std::size_t done, std::size_t total, std::size_t passed,
                          std::size_t run_here, double elapsed_seconds) {
  std::string line = "attempt " + std::to_string(done) + "/" + std::to_string(total) + ", " +
                     std::to_string(passed) + " passed";
  if (done > 0) line += " (" + std::to_string(passed * 100 / done) + "%)";
  if (run_here > 0 && done < total) {
    const auto left = static_cast<long long>(elapsed_seconds / static_cast<double>(run_here) *
                                             static_cast<double>(total - done));
    line += ", " + std::to_string(left) + " s left";
  }
  return line;
}

ProgressMeter::ProgressMeter(std::function<double()> seconds) : seconds_(std::move(seconds)) {
  if (!seconds_) {
    seconds_ = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
  }
  start_ = seconds_();
}

std::string ProgressMeter::line(std::size_t done, std::size_t total, std::size_t passed) {
  if (!first_) first_ = done;
  return progress_line(done, total, passed, done - *first_, seconds_() - start_);
}

}  // namespace mf::eval
