// The catalog's index: what a turn's compilation looks up instead of scanning every unit.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "mf/prompt/projection.hpp"

namespace mf::prompt {

// Lowercased ASCII tokens, split at every ASCII character that is not a letter or digit.
std::vector<std::string> tokenize(std::string_view text);
bool stop_word(std::string_view token);

struct Catalog::Index {
  std::vector<Unit> units;  // by id
  std::unordered_map<std::string, int> by_id;
  std::string sha256;
  struct TriggerRef {
    int unit;
    int trigger;
    std::vector<std::string> tokens;  // keyword/phrase triggers
  };
  std::unordered_map<std::string, std::vector<TriggerRef>> by_first_token;  // keyword, phrase
  std::unordered_map<std::string, std::vector<TriggerRef>> by_signal, by_need;
  std::unordered_map<std::string, std::vector<int>> lexical;  // token -> units
  struct NameRef {
    int unit;
    std::vector<std::string> tokens;
  };
  std::unordered_map<std::string, std::vector<NameRef>> names;  // first token -> name/alias
  std::vector<int> always;
  std::vector<std::vector<int>> requirements, suggests, conflicts, superseded_by;  // unit indexes
  std::vector<std::string> full, summary;  // rendered variants ("" = none)
  std::vector<std::int64_t> full_tokens, summary_tokens;
};

}  // namespace mf::prompt
