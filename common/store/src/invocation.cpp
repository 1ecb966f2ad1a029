// mf-store's command line as values (invocation.hpp): operands checked per command, then dispatched
// to a store or plumbing command.
#include "mf/store/invocation.hpp"

#include <cstdint>
#include <string_view>

#include "mf/io/file.hpp"
#include "mf/store/plumbing.hpp"
#include "mf/text/suggest.hpp"

namespace mf::store::commands {
namespace {

using diag::CommandOutcome;

std::string source_name(const std::string& path) {
  return path == "-" ? "<stdin>" : path;
}

// The one input operand of a command that reads one; "-" (stdin) when omitted.
bool single_input(const std::vector<std::string>& args, std::string& path,
                  CommandOutcome& refused) {
  if (args.size() > 2) {
    refused = CommandOutcome::usage_error("'" + args[0] + "' takes at most one FILE");
    return false;
  }
  path = args.size() == 2 ? args[1] : "-";
  return true;
}

// The operand count of `args` (the command name excluded) within [min, max].
bool arity(const std::vector<std::string>& args, std::size_t min, std::size_t max,
           std::string_view what, CommandOutcome& refused) {
  const std::size_t n = args.size() - 1;
  if (n >= min && n <= max) return true;
  refused = CommandOutcome::usage_error("'" + args[0] + "' takes " + std::string(what));
  return false;
}

bool digest_operands(const std::vector<std::string>& operands, std::vector<hash::Digest>& digests,
                     CommandOutcome& refused) {
  std::string bad;
  if (parse_digests(operands, digests, bad)) return true;
  refused = CommandOutcome::usage_error("'" + bad + "' is not a digest (64 lowercase hex digits)");
  return false;
}

CommandOutcome done(Status status, std::string source = {}) {
  if (status) return {};
  return CommandOutcome::stopped_by(status.take_diagnostics(), std::move(source));
}

CommandOutcome verdict(Result<Verdict> result) {
  if (!result) return CommandOutcome::stopped_by(result.take_diagnostics());
  CommandOutcome outcome;
  outcome.failed = *result == Verdict::Failure;
  return outcome;
}

CommandOutcome canon(const Invocation& in, int out) {
  std::string path;
  CommandOutcome refused;
  if (!single_input(in.args, path, refused)) return refused;
  CanonOptions options;
  options.lines = in.lines;
  options.limits.max_bytes = in.max_bytes;
  return done(canon_input(path, out, options), source_name(path));
}

CommandOutcome hash(const Invocation& in, int out) {
  std::string path;
  CommandOutcome refused;
  if (!single_input(in.args, path, refused)) return refused;
  auto digest = hash_input(path, in.json, in.max_bytes);
  if (!digest) return CommandOutcome::stopped_by(digest.take_diagnostics(), source_name(path));
  return done(io::write_all(out, *digest + "\n"));
}

CommandOutcome ref(const std::string& dir, const std::vector<std::string>& operands, int out) {
  const std::string sub = operands.empty() ? std::string() : operands[0];
  const std::vector<std::string> rest(operands.begin() + (operands.empty() ? 0 : 1),
                                      operands.end());
  if (sub == "set" && rest.size() == 2) {
    std::vector<hash::Digest> digests;
    CommandOutcome refused;
    if (!digest_operands({rest[1]}, digests, refused)) return refused;
    return done(ref_set(dir, rest[0], digests[0]));
  }
  if (sub == "get" && rest.size() == 1) return done(ref_get(dir, rest[0], out));
  if (sub == "rm" && rest.size() == 1) {
    CommandOutcome outcome = verdict(ref_rm(dir, rest[0]));
    if (outcome.failed)
      outcome.remarks.push_back("ref " + rest[0] + " does not exist; nothing removed");
    return outcome;
  }
  return CommandOutcome::usage_error("'ref' takes 'set NAME DIGEST', 'get NAME' or 'rm NAME'");
}

}  // namespace

CommandOutcome run(const Invocation& in, int out) {
  const auto& args = in.args;
  const std::string& command = args[0];
  if (command == "canon") return canon(in, out);
  if (command == "hash") return hash(in, out);
  const std::vector<std::string> operands(args.begin() + 1, args.end());
  const std::string dir = Store::resolve_dir(in.store);
  std::vector<hash::Digest> digests;
  CommandOutcome refused;
  if (command == "put") {
    return done(put(dir, operands.empty() ? std::vector<std::string>{"-"} : operands, out));
  }
  if (command == "get") {
    if (!arity(args, 1, 1, "one DIGEST", refused) || !digest_operands(operands, digests, refused)) {
      return refused;
    }
    return done(get(dir, digests[0], out));
  }
  if (command == "has") {
    if (!arity(args, 1, SIZE_MAX, "one or more DIGESTs", refused) ||
        !digest_operands(operands, digests, refused)) {
      return refused;
    }
    return verdict(has(dir, digests, out));
  }
  if (command == "ls") {
    if (!arity(args, 0, 0, "no operands", refused)) return refused;
    return done(ls(dir, in.refs, out));
  }
  if (command == "ref") return ref(dir, operands, out);
  if (command == "verify") {
    if (!arity(args, 0, 0, "no operands", refused)) return refused;
    return verdict(verify(dir, in.progress, out));
  }
  if (command == "gc") {
    if (!arity(args, 0, 0, "no operands", refused)) return refused;
    return done(gc(dir, in.dry_run, out));
  }
  if (command == "export") {
    if (operands.empty() && in.export_refs.empty()) {
      return CommandOutcome::usage_error("'export' takes DIGESTs and/or --ref NAME");
    }
    if (!digest_operands(operands, digests, refused)) return refused;
    return done(export_stream(dir, digests, in.export_refs, in.output, out));
  }
  if (command == "import") {
    std::string path;
    if (!single_input(args, path, refused)) return refused;
    return done(import_stream(dir, path, in.progress, out), source_name(path));
  }
  if (command == "merge") {
    if (!arity(args, 1, SIZE_MAX, "one or more STORE directories", refused)) return refused;
    return done(merge_stores(dir, operands, out));
  }
  if (command == "stat") {
    if (!arity(args, 0, 0, "no operands", refused)) return refused;
    return done(stat(dir, out));
  }
  return CommandOutcome::usage_error(
      "unknown command '" + command + "'" +
      text::did_you_mean(command, {"canon", "hash", "put", "get", "has", "ls", "ref", "verify",
                                   "gc", "export", "import", "merge", "stat"}));
}

}  // namespace mf::store::commands
