// Millforge's terminal tools, submit, reject and escalate: the recorder's terminal result, once
// every artifact the intent names exists.
#include <fcntl.h>
#include <sys/stat.h>

#include <memory>
#include <string>
#include <utility>

#include "mf/io/file.hpp"
#include "millforge_builtins.hpp"
#include "millforge_support.hpp"

namespace mf::tools {

using namespace millforge;

namespace {

using io::Fd;
using json::Value;

// The recorder decides the terminal result; this adds the check that every artifact the intent
// names exists, the status the output schema asks for and the tool's own members (`more`).
ToolResult terminal_intent(const Invocation& call, json::Object more) {
  json::Array refs;
  if (const Value* named = call.args.find("artifact_refs"); named != nullptr) {
    std::shared_ptr<const Workspace> dir;
    for (const Value& r : named->as_array()) {
      const std::string& id = r.as_string();
      if (!valid_artifact_id(id)) {
        return failure("Invalid artifact id \"" + id + "\": use lowercase letters, digits and _");
      }
      if (call.artifact_dir.empty()) {
        return failure("No artifact directory is configured for this run");
      }
      if (!dir) {
        auto opened = Workspace::open(call.artifact_dir);
        if (!opened) return failure("The artifact directory cannot be opened");
        dir = std::move(*opened);
      }
      Fd fd(dir->open_at(id, O_PATH));
      struct stat st {};
      if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return failure("The intent names artifact " + id + ", which does not exist");
      }
      refs.push_back(id);
    }
  }
  ToolResult result = record_terminal(call);
  if (result.is_error) {
    result.details = json::Object{{"status", "soft_failure"}, {"summary", result.text}};
    return result;
  }
  result.details.set("status", "success");
  if (call.args.find("artifact_refs") != nullptr) result.details.set("artifact_refs", refs);
  for (auto& m : more) result.details.set(m.key, std::move(m.value));
  return result;
}

}  // namespace

ToolResult run_submit_terminal(const Invocation& call) {
  return terminal_intent(call, {});
}

ToolResult run_reject_terminal(const Invocation& call) {
  return terminal_intent(call, {});
}

ToolResult run_escalate_terminal(const Invocation& call) {
  return terminal_intent(call, {{"blocker", *call.args.find("blocker")}});
}

}  // namespace mf::tools
