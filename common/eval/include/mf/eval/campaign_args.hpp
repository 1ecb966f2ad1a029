// `mf-eval run`'s campaign options as values (docs/formats/eval.md, "Campaigns"): the shard, the
// matrix of --model LABEL=SPEC columns crossed with --guardrails presets, the journal's place, and
// the progress line with its estimate of the time left. Pure but for the model specs' check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/outcome.hpp"
#include "mf/eval/runner.hpp"
#include "mf/runtime/plan_run.hpp"

namespace mf::eval {

// --shard "i/n": 1 <= i <= n, each written with one to nine decimal digits; nothing otherwise.
struct Shard {
  std::int64_t index = 1;
  std::int64_t count = 1;
};
std::optional<Shard> parse_shard(std::string_view text);

// --model "LABEL=SPEC": LABEL of [A-Za-z0-9_-], one to 64 bytes, and SPEC not empty (it may hold
// '='); nothing otherwise. The spec itself is not checked here.
struct ModelColumn {
  std::string label;
  std::string spec;
};
std::optional<ModelColumn> parse_model_column(std::string_view text);

// The matrix's columns: every model crossed with every preset, models outer, each in the order
// given. A column is labelled by its model's label, its preset's name, or "<label>.<preset>" when
// crossed. Empty when there is neither.
std::vector<Variant> cross(const std::vector<ModelColumn>& models,
                           const std::vector<runtime::Guardrails>& presets);

// The matrix of `mf-eval run --model ... --guardrails ...` into `variants`. Every --model value in
// turn must parse, carry a label not seen before and a spec model::check_model_spec accepts (its
// diagnostics stop the command); then every --guardrails value must name a preset not seen before.
// The first problem stops: a usage error, or the spec's diagnostics.
diag::CommandOutcome read_matrix(const std::vector<std::string>& models,
                                 const std::vector<std::string>& presets,
                                 std::vector<Variant>& variants);

// Where the attempts journal lives: in the store when there is one and --journal was not given;
// else the --journal FILE (none when it is empty); else REPORT.journal beside a report file, none
// for a report on stdout ("-").
struct JournalPlace {
  enum class Kind : std::uint8_t { None, File, Store };
  Kind kind = Kind::None;
  std::string path;  // Kind::File
};
JournalPlace journal_place(const std::string& output, const std::optional<std::string>& journal,
                           bool store);

// The progress line's text, "attempt 37/120, 31 passed (84%), 12 s left" (mf-eval draws it with
// cli::ProgressLine, after its label). The percentage is left out before
// the first attempt; the time left, when this process has run no attempt yet (`run_here`, those
// after the ones a journal held) or none is left: it is `elapsed_seconds` per attempt run here
// times the attempts left, in whole seconds.
std::string progress_line(std::size_t done, std::size_t total, std::size_t passed,
                          std::size_t run_here, double elapsed_seconds);

// The lines of one campaign, timed by `seconds` (a monotonic clock; the steady clock by default)
// from the meter's construction. The first call's `done` counts the attempts a journal held, which
// are not timed.
class ProgressMeter {
 public:
  explicit ProgressMeter(std::function<double()> seconds = {});
  std::string line(std::size_t done, std::size_t total, std::size_t passed);

 private:
  std::function<double()> seconds_;
  double start_ = 0;
  std::optional<std::size_t> first_;
};

}  // namespace mf::eval
