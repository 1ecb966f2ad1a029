// The strict reader's limits under fuzzing: small, so the fuzzer reaches every limit check quickly.
// Shared by the json_reader and tape_differential targets.
#pragma once

#include "mf/json/reader.hpp"

namespace mf::json {

inline ReadLimits fuzz_limits() {
  ReadLimits limits;
  limits.max_bytes = 1u << 16;
  limits.max_depth = 16;
  limits.max_number_length = 40;
  limits.max_string_bytes = 4096;
  limits.max_entries = 512;
  return limits;
}

}  // namespace mf::json
