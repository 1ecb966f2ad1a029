// The library side of mf-store's store subcommands: open the store, do one job, print canonical
// JSON. Argument parsing and exit codes stay in mf-store/main.cpp.
#include "mf/store/commands.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"
#include "mf/json/canonical.hpp"
#include "mf/json/value.hpp"

namespace mf::store::commands {
namespace {

namespace codes = diag::codes;

Result<std::unique_ptr<Store>> open_read(const std::string& dir) {
  return Store::open(dir, Mode::ReadOnly);
}

Result<std::unique_ptr<Store>> open_write(const std::string& dir) {
  return Store::open(dir, Mode::ReadWrite);
}

// For writes that only change what is there (ref set/rm, gc): a missing store is MF-K005, as for
// reads, rather than an empty store created to find nothing in it. Probing read-only first keeps
// that rule inside Store::open.
Result<std::unique_ptr<Store>> open_existing(const std::string& dir) {
  if (auto probe = Store::open(dir, Mode::ReadOnly); !probe) return probe.take_diagnostics();
  return open_write(dir);
}

json::Value number(std::uint64_t n) {
  return json::Value(n);
}

json::Value digest_value(const hash::Digest& d) {
  return json::Value(hash::to_hex(d));
}

Status print_json(const json::Value& v, int out) {
  return io::write_all(out, json::canonical_file(v));
}

// Writes an export stream into `output` through io::publish_atomic, so a failed export never
// leaves a partial stream under the final name.
Status export_to_file(Store& s, const std::vector<hash::Digest>& roots,
                      const std::vector<std::string>& refs, const std::string& output) {
  return io::publish_atomic(
      output, [&](int fd) { return s.export_closure(roots, refs, fd); }, io::Clobber::Replace);
}

}  // namespace

bool parse_digests(const std::vector<std::string>& operands, std::vector<hash::Digest>& out,
                   std::string& bad) {
  out.clear();
  for (const auto& text : operands) {
    hash::Digest d{};
    if (!hash::from_hex(text, d)) {
      bad = text;
      return false;
    }
    out.push_back(d);
  }
  return true;
}

std::string object_line(const ObjectInfo& info) {
  json::Value v(json::Object{});
  v.set("digest", digest_value(info.digest));
  v.set("size", number(info.size));
  return json::canonical_file(v);
}

std::string ref_line(std::string_view name, const hash::Digest& digest) {
  json::Value v(json::Object{});
  v.set("digest", digest_value(digest));
  v.set("ref", json::Value(std::string(name)));
  return json::canonical_file(v);
}

std::string verify_summary(const VerifyReport& report) {
  json::Array corrupt;
  for (const auto& d : report.corrupt) corrupt.push_back(digest_value(d));
  json::Array dangling;
  for (const auto& name : report.dangling_refs) dangling.emplace_back(name);
  json::Value v(json::Object{});
  v.set("checked", number(report.checked));
  v.set("corrupt", json::Value(std::move(corrupt)));
  v.set("dangling_refs", json::Value(std::move(dangling)));
  v.set("ok", json::Value(report.corrupt.empty() && report.dangling_refs.empty()));
  return json::canonical_file(v);
}

std::string gc_summary(std::uint64_t kept, std::uint64_t removed) {
  json::Value v(json::Object{});
  v.set("kept", number(kept));
  v.set("removed", number(removed));
  return json::canonical_file(v);
}

std::string stats_summary(const StoreStats& stats) {
  json::Value v(json::Object{});
  v.set("file_bytes", number(stats.file_bytes));
  v.set("map_bytes", number(stats.map_bytes));
  v.set("object_bytes", number(stats.object_bytes));
  v.set("objects", number(stats.objects));
  v.set("refs", number(stats.refs));
  return json::canonical_file(v);
}

Status put(const std::string& dir, const std::vector<std::string>& paths, int out) {
  auto s = open_write(dir);
  if (!s) return s.take_diagnostics();
  for (const auto& path : paths) {
    auto d = (*s)->put_file(path);
    if (!d) return d.take_diagnostics();
    if (auto w = io::write_all(out, hash::to_hex(*d) + "\n"); !w) return w;
  }
  return {};
}

Status get(const std::string& dir, const hash::Digest& digest, int out) {
  auto s = open_read(dir);
  if (!s) return s.take_diagnostics();
  return (*s)->get_to_fd(digest, out);
}

Result<Verdict> has(const std::string& dir, const std::vector<hash::Digest>& digests, int out) {
  auto s = open_read(dir);
  if (!s) return s.take_diagnostics();
  std::string missing;
  for (const auto& d : digests) {
    auto present = (*s)->has(d);
    if (!present) return present.take_diagnostics();
    if (!*present) missing += hash::to_hex(d) + "\n";
  }
  if (auto w = io::write_all(out, missing); !w) return w.take_diagnostics();
  return missing.empty() ? Verdict::Success : Verdict::Failure;
}

Status ls(const std::string& dir, bool refs, int out) {
  auto s = open_read(dir);
  if (!s) return s.take_diagnostics();
  std::string text;
  if (refs) {
    auto list = (*s)->list_refs();
    if (!list) return list.take_diagnostics();
    std::sort(list->begin(), list->end());
    for (const auto& [name, digest] : *list) text += ref_line(name, digest);
  } else {
    auto list = (*s)->list();
    if (!list) return list.take_diagnostics();
    std::sort(list->begin(), list->end(),
              [](const ObjectInfo& a, const ObjectInfo& b) { return a.digest < b.digest; });
    for (const auto& info : *list) text += object_line(info);
  }
  return io::write_all(out, text);
}

Status ref_set(const std::string& dir, std::string_view name, const hash::Digest& digest) {
  auto s = open_existing(dir);
  if (!s) return s.take_diagnostics();
  return (*s)->set_ref(name, digest);
}

Status ref_get(const std::string& dir, std::string_view name, int out) {
  auto s = open_read(dir);
  if (!s) return s.take_diagnostics();
  auto d = (*s)->get_ref(name);
  if (!d) return d.take_diagnostics();
  if (!d->has_value())
    return diag::error(codes::kStoreMissingObject, "ref " + std::string(name) + " does not exist");
  return io::write_all(out, hash::to_hex(**d) + "\n");
}

Result<Verdict> ref_rm(const std::string& dir, std::string_view name) {
  auto s = open_existing(dir);
  if (!s) return s.take_diagnostics();
  auto removed = (*s)->remove_ref(name);
  if (!removed) return removed.take_diagnostics();
  return *removed ? Verdict::Success : Verdict::Failure;
}

Result<Verdict> verify(const std::string& dir, const Progress& progress, int out) {
  auto s = open_read(dir);
  if (!s) return s.take_diagnostics();
  auto report = (*s)->verify(progress);
  if (!report) return report.take_diagnostics();
  std::sort(report->corrupt.begin(), report->corrupt.end());
  std::sort(report->dangling_refs.begin(), report->dangling_refs.end());
  if (auto w = io::write_all(out, verify_summary(*report)); !w) return w.take_diagnostics();
  const bool ok = report->corrupt.empty() && report->dangling_refs.empty();
  return ok ? Verdict::Success : Verdict::Failure;
}

Status gc(const std::string& dir, bool dry_run, int out) {
  if (dry_run) {
    auto s = open_read(dir);
    if (!s) return s.take_diagnostics();
    // One read of each: a concurrent writer may add objects in between, which gc would keep or
    // collect by the same rule; the dry run describes the store as it was read.
    auto reachable = (*s)->reachable();
    if (!reachable) return reachable.take_diagnostics();
    auto objects = (*s)->list();
    if (!objects) return objects.take_diagnostics();
    std::uint64_t kept = 0;
    for (const auto& info : *objects)
      if (std::binary_search(reachable->begin(), reachable->end(), info.digest)) ++kept;
    return io::write_all(out, gc_summary(kept, objects->size() - kept));
  }
  auto s = open_existing(dir);
  if (!s) return s.take_diagnostics();
  auto removed = (*s)->gc();
  if (!removed) return removed.take_diagnostics();
  auto stats = (*s)->stats();
  if (!stats) return stats.take_diagnostics();
  return io::write_all(out, gc_summary(stats->objects, *removed));
}

Status export_stream(const std::string& dir, const std::vector<hash::Digest>& digests,
                     const std::vector<std::string>& refs, const std::string& output, int out) {
  auto s = open_read(dir);
  if (!s) return s.take_diagnostics();
  if (output == "-") return (*s)->export_closure(digests, refs, out);
  return export_to_file(**s, digests, refs, output);
}

Status import_stream(const std::string& dir, const std::string& input, const Progress& progress,
                     int out) {
  auto s = open_write(dir);
  if (!s) return s.take_diagnostics();
  auto added = (*s)->import_stream(input, progress);
  if (!added) return added.take_diagnostics();
  json::Value v(json::Object{});
  v.set("added", number(*added));
  return print_json(v, out);
}

Status merge_stores(const std::string& dir, const std::vector<std::string>& sources, int out) {
  std::error_code ec;
  const auto same = [&ec](const std::string& a, const std::string& b) {
    return std::filesystem::exists(a, ec) && std::filesystem::exists(b, ec) &&
           std::filesystem::equivalent(a, b, ec);
  };
  // Every source's refs first: a name bound to two objects would keep one of them unreachable.
  std::vector<std::unique_ptr<Store>> opened;
  std::vector<std::vector<std::string>> own_refs;                    // per source, its ref names
  std::map<std::string, std::pair<hash::Digest, std::string>> refs;  // name: digest, its store
  const auto conflict = [](const std::string& name, const std::string& a, const std::string& b) {
    return diag::error(codes::kStoreMergeConflict,
                       "ref " + name + " names one object in " + a + " and another in " + b +
                           ": the stores are not parts of one campaign");
  };
  for (const std::string& source : sources) {
    if (same(source, dir)) {
      return diag::error(codes::kStoreMergeConflict,
                         "cannot merge the store " + source + " into itself");
    }
    auto s = open_read(source);
    if (!s) return s.take_diagnostics();
    auto listed = (*s)->list_refs();
    if (!listed) return listed.take_diagnostics();
    own_refs.emplace_back();
    for (auto& [name, digest] : *listed) {
      auto [at, added] = refs.try_emplace(name, digest, source);
      if (!added && at->second.first != digest) return conflict(name, at->second.second, source);
      own_refs.back().push_back(name);
    }
    opened.push_back(std::move(*s));
  }
  auto d = open_write(dir);
  if (!d) return d.take_diagnostics();
  for (const auto& [name, bound] : refs) {
    auto existing = (*d)->get_ref(name);
    if (!existing) return existing.take_diagnostics();
    if (*existing && **existing != bound.first) return conflict(name, dir, bound.second);
  }
  // Each source goes through an export stream in an unlinked file beside the store, so every
  // object is checked by import's rules and memory stays flat whatever the objects' sizes.
  std::uint64_t added = 0;
  for (std::size_t i = 0; i < opened.size(); ++i) {
    auto objects = opened[i]->list();
    if (!objects) return objects.take_diagnostics();
    std::vector<hash::Digest> roots;
    roots.reserve(objects->size());
    for (const ObjectInfo& o : *objects) roots.push_back(o.digest);
    std::string spool = (std::filesystem::path(dir) / ".merge-XXXXXX").string();
    const int fd = ::mkstemp(spool.data());
    if (fd < 0) {
      return diag::error(codes::kStoreLmdb,
                         "cannot create a spool file in " + dir + ": " + std::strerror(errno));
    }
    ::unlink(spool.c_str());
    Status exported = opened[i]->export_closure(roots, own_refs[i], fd);
    Result<std::uint64_t> imported =
        exported ? (*d)->import_stream("/proc/self/fd/" + std::to_string(fd))
                 : Result<std::uint64_t>(exported.diagnostics());
    ::close(fd);
    if (!imported) return imported.take_diagnostics();
    added += *imported;
  }
  json::Value v(json::Object{});
  v.set("added", number(added));
  v.set("refs", number(refs.size()));
  v.set("stores", number(sources.size()));
  return print_json(v, out);
}

Status stat(const std::string& dir, int out) {
  auto s = open_read(dir);
  if (!s) return s.take_diagnostics();
  auto stats = (*s)->stats();
  if (!stats) return stats.take_diagnostics();
  return io::write_all(out, stats_summary(*stats));
}

}  // namespace mf::store::commands
