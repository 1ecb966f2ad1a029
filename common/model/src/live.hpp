// Opening a live backend (openai:, anthropic:) from its profile file; open_model dispatches here.
#pragma once

#include <memory>
#include <string>

#include "mf/model/model.hpp"
#include "profile.hpp"

namespace mf::model {

Result<std::unique_ptr<Model>> open_live(wire::Api api, const std::string& path,
                                         const OpenOptions& options);

}  // namespace mf::model
