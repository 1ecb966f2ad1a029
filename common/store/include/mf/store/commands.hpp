// The store subcommands of mf-store (put, get, has, ls, ref, verify, gc, export, import, stat) as
// library calls: each opens the store at `dir` in the mode its job needs (reads ReadOnly; only put
// and import create a missing store, every other command reports it as MF-K005 and creates
// nothing), writes its machine-readable output to a file descriptor, and returns either
// diagnostics or a verdict. Exit codes: docs/store.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "mf/diag/diagnostic.hpp"
#include "mf/hash/sha256.hpp"
#include "mf/store/store.hpp"

namespace mf::store::commands {

// A command that completed its work either succeeded or judged the outcome a failure (a missing
// object for `has`, corruption for `verify`): the CLI's exit 0 or 1. Diagnostics mean the request
// could not be served (exit 2, or 3 for failures of the store itself: the exit classes of
// codes.def).
enum class Verdict : std::uint8_t { Success, Failure };

using Progress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Parses DIGEST operands (64 lowercase hex digits each); the first bad one is named in `bad`.
bool parse_digests(const std::vector<std::string>& operands, std::vector<hash::Digest>& out,
                   std::string& bad);

// put: stores each file ("-" = stdin) and writes its digest + '\n' once the put is durable, so
// the lines printed before a failure name objects that are stored.
Status put(const std::string& dir, const std::vector<std::string>& paths, int out);
// get: the object's bytes, re-hashed before they are written (MF-K001 missing, MF-K003 corrupt).
Status get(const std::string& dir, const hash::Digest& digest, int out);
// has: writes each missing digest + '\n' (in operand order); Failure when any is missing.
Result<Verdict> has(const std::string& dir, const std::vector<hash::Digest>& digests, int out);
// ls: canonical JSONL sorted by digest, {"digest","size"} per object, or {"digest","ref"} per ref
// (sorted by name) with `refs`.
Status ls(const std::string& dir, bool refs, int out);

// ref set refuses a bad name (MF-K004) and a digest the store lacks (MF-K001), so that no ref is
// born dangling.
Status ref_set(const std::string& dir, std::string_view name, const hash::Digest& digest);
// ref get writes the digest + '\n'; an unknown ref is MF-K001.
Status ref_get(const std::string& dir, std::string_view name, int out);
// ref rm: Failure when there was no such ref (nothing removed).
Result<Verdict> ref_rm(const std::string& dir, std::string_view name);

// verify: re-hashes every object and checks every ref; writes the summary
// {"checked","corrupt","dangling_refs","ok"}; Failure on any corrupt object or dangling ref.
Result<Verdict> verify(const std::string& dir, const Progress& progress, int out);
// gc: removes every object no ref reaches (Store::reachable); writes {"kept","removed"}. With
// `dry_run` nothing is removed and the figures say what gc would do.
Status gc(const std::string& dir, bool dry_run, int out);
// export: the closure of `digests` and of the refs' targets, with the refs, as an export stream
// (docs/store.md) to `output` ("-" = stdout; a file appears atomically, complete or not at all).
// A missing digest or ref is MF-K001, a corrupt object MF-K003.
Status export_stream(const std::string& dir, const std::vector<hash::Digest>& digests,
                     const std::vector<std::string>& refs, const std::string& output, int out);
// import: reads an export stream ("-" = stdin) into the store (created if missing); writes
// {"added":N}.
Status import_stream(const std::string& dir, const std::string& input, const Progress& progress,
                     int out);
// merge: every object and ref of the stores at `sources` into the store at `dir` (created if
// missing), each object's bytes hashed against its digest on the way in, as import does; writes
// {"added":N,"refs":M,"stores":K}. A ref that two of the stores (or `dir` and one of them) bind to
// different objects is refused (MF-K009) before anything is written, so no object is lost behind
// a ref; a source that is `dir` itself is a usage error (MF-K009 too). Idempotent.
Status merge_stores(const std::string& dir, const std::vector<std::string>& sources, int out);
// stat: {"file_bytes","map_bytes","object_bytes","objects","refs"}.
Status stat(const std::string& dir, int out);

// The canonical JSON documents the commands print (pure, for tests).
std::string object_line(const ObjectInfo& info);
std::string ref_line(std::string_view name, const hash::Digest& digest);
std::string verify_summary(const VerifyReport& report);
std::string gc_summary(std::uint64_t kept, std::uint64_t removed);
std::string stats_summary(const StoreStats& stats);

}  // namespace mf::store::commands
