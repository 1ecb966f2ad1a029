#include "implementations.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "edit_core.hpp"
#include "mf/io/file.hpp"

namespace mf::tools {
namespace {

using json::Value;

// The pack's tools take their arguments and the call's context only.
template <ToolResult (*Run)(const Value&, const CallContext&)>
ToolResult pack_tool(const Invocation& call) {
  return Run(call.args, call.ctx);
}

ToolResult record_terminal(const Invocation& call) {
  const Value* terminal = call.args.find("terminal_result");
  const Value* summary = call.args.find("summary");
  if (terminal == nullptr || !terminal->is_string()) {
    return ToolResult::error("Terminal controls need a terminal_result");
  }
  return ToolResult{
      false, "Terminal intent recorded: " + terminal->as_string(),
      json::Object{{"terminal_result", *terminal}, {"summary", summary ? *summary : Value("")}}};
}

bool valid_artifact_id(std::string_view s) {
  if (s.empty() || s.size() > 64 || s[0] < 'a' || s[0] > 'z') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// The artifact's path, or the error result that refuses the call.
std::pair<std::string, std::optional<ToolResult>> artifact_path(const Invocation& call) {
  if (call.artifact_dir.empty()) {
    return {{}, ToolResult::refusal("No artifact directory is configured for this run")};
  }
  const std::string id = call.args.find("artifact_id")->as_string();
  if (!valid_artifact_id(id)) {
    return {{},
            ToolResult::refusal("Invalid artifact id \"" + id +
                                "\": use lowercase letters, digits and _")};
  }
  return {call.artifact_dir + "/" + id, std::nullopt};
}

// Read beneath the artifact directory, held open as the workspace is: a link leading out of it is
// refused rather than followed, as write_artifact never writes through one.
ToolResult read_artifact(const Invocation& call) {
  if (auto refused = artifact_path(call).second) return std::move(*refused);
  const std::string& id = call.args.find("artifact_id")->as_string();
  const ToolResult missing = ToolResult::error("Artifact not found: " + id);
  auto dir = Workspace::open(call.artifact_dir);
  if (!dir) return missing;
  io::Fd fd((*dir)->open_at(id, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  if (fd.get() == -EXDEV) {
    return ToolResult::error("Artifact " + id + " leads out of the artifact directory");
  }
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) return missing;
  if (!S_ISREG(st.st_mode)) return ToolResult::error("Artifact " + id + " is not a regular file");
  std::string text;
  if (io::read_all(fd.get(), text, kMaxToolFileBytes) != 0) return missing;
  if (text.size() > kMaxToolFileBytes)
    return ToolResult::error(too_large_message("read", id, "more than"));
  return ToolResult{false, std::move(text), {}};
}

ToolResult write_artifact(const Invocation& call) {
  auto [path, refused] = artifact_path(call);
  if (refused) return std::move(*refused);
  const std::string& id = call.args.find("artifact_id")->as_string();
  const std::string& content = call.args.find("content")->as_string();
  if (Status s = io::publish_atomic(path, content, io::Clobber::Replace); !s) {
    return ToolResult::error("Could not write artifact " + id + ": " +
                             s.diagnostics().front().message);
  }
  return ToolResult{
      false, "Wrote artifact " + id + " (" + std::to_string(content.size()) + " bytes)", {}};
}

constexpr std::array kImplementations = {
    Implementation{"impl.builtin.pi_compat.read.v1", nullptr, pack_tool<run_read>},
    Implementation{"impl.builtin.pi_compat.write.v1", nullptr, pack_tool<run_write>},
    // Pi's prepareArguments for edit: a stringified `edits` and top-level oldText/newText.
    Implementation{"impl.builtin.pi_compat.edit.v1", prepare_edit_arguments, pack_tool<run_edit>},
    Implementation{"impl.builtin.pi_compat.ls.v1", nullptr, pack_tool<run_ls>},
    Implementation{"impl.builtin.pi_compat.grep.v1", nullptr, pack_tool<run_grep>},
    Implementation{"impl.builtin.pi_compat.find.v1", nullptr, pack_tool<run_find>},
    Implementation{"impl.builtin.pi_compat.bash.v1", nullptr, pack_tool<run_bash>},
    Implementation{"impl.builtin.artifact.read.v1", nullptr, read_artifact},
    Implementation{"impl.builtin.artifact.write.v1", nullptr, write_artifact},
};
constexpr Implementation kTerminal{{}, nullptr, record_terminal};

}  // namespace

const Implementation* implementation_for(const ToolDescriptor& tool) {
  const auto it =
      std::find_if(kImplementations.begin(), kImplementations.end(),
                   [&](const Implementation& i) { return i.id == tool.implementation_id; });
  if (it != kImplementations.end()) return &*it;
  if (tool.side_effect_class == SideEffect::Terminal) return &kTerminal;
  return nullptr;
}

}  // namespace mf::tools
