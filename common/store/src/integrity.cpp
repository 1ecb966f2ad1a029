// The checks LMDB does not make (integrity.hpp): the data file compared with its meta pages before
// it is mapped, and a fault inside a mapped range ended with a diagnostic instead of a signal.
#include "integrity.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>

#include "mf/diag/codes.hpp"
#include "mf/io/file.hpp"

namespace mf::store::detail {
namespace {

namespace codes = diag::codes;

// LMDB 0.9's on-disk meta page (64-bit): a 16-byte page header, then MDB_meta: magic, version,
// address, mapsize, two MDB_db records of 48 bytes (the free DB's md_pad holds the page size),
// last_pg, txnid.
constexpr std::size_t kHeader = 16;
constexpr std::size_t kMagicAt = kHeader;
constexpr std::size_t kVersionAt = kHeader + 4;
constexpr std::size_t kPageSizeAt = kHeader + 24;  // mm_dbs[0].md_pad
constexpr std::size_t kFreeRootAt = kHeader + 24 + 40;
constexpr std::size_t kMainRootAt = kHeader + 24 + 48 + 40;
constexpr std::size_t kLastPageAt = kHeader + 24 + 96;
constexpr std::size_t kTxnIdAt = kLastPageAt + 8;
constexpr std::size_t kMetaBytes = kTxnIdAt + 8;
constexpr std::uint32_t kMagic = 0xBEEFC0DE;
constexpr std::uint32_t kVersion = 1;
constexpr std::uint64_t kNoPage = ~std::uint64_t{0};

template <class T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct Meta {
  std::uint32_t page_size;
  std::uint64_t last_page;
  std::uint64_t txn_id;
};

// The meta page at `offset`, when it is one LMDB would accept and its roots lie within it.
std::optional<Meta> read_meta(int fd, off_t offset) {
  std::array<unsigned char, kMetaBytes> buf{};
  const std::int64_t got = io::pread_all(fd, reinterpret_cast<char*>(buf.data()), buf.size(),
                                         static_cast<std::uint64_t>(offset));
  if (got != static_cast<std::int64_t>(buf.size())) return std::nullopt;
  const Meta m{load<std::uint32_t>(&buf[kPageSizeAt]), load<std::uint64_t>(&buf[kLastPageAt]),
               load<std::uint64_t>(&buf[kTxnIdAt])};
  const bool power_of_two =
      m.page_size >= 512 && m.page_size <= 65536 && (m.page_size & (m.page_size - 1)) == 0;
  const auto root_ok = [&](std::size_t at) {
    const auto root = load<std::uint64_t>(&buf[at]);
    return root == kNoPage || root <= m.last_page;
  };
  if (load<std::uint32_t>(&buf[kMagicAt]) != kMagic ||
      load<std::uint32_t>(&buf[kVersionAt]) != kVersion || !power_of_two || m.last_page < 1 ||
      !root_ok(kFreeRootAt) || !root_ok(kMainRootAt)) {
    return std::nullopt;
  }
  return m;
}

// --- the fault handler ---------------------------------------------------------------------------

// Past the end of a map a read can run over a page's worth of garbage offsets before it faults.
constexpr std::uintptr_t kSlack = 1u << 16;
constexpr std::size_t kSlots = 16;

struct Range {
  std::atomic<std::uintptr_t> lo{0};
  std::atomic<std::uintptr_t> hi{0};
  std::atomic<bool> taken{false};
};
std::array<Range, kSlots> g_ranges;
struct sigaction g_previous_bus {};
struct sigaction g_previous_segv {};

constexpr char kFault[] =
    ": error MF-K003: the store's data file is corrupt (a read of its map faulted; it may have "
    "been truncated or overwritten): the command stopped. Restore the store from an export or a "
    "backup\n";

void write_stderr(const char* text, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, text, n);
    if (w <= 0) return;
    text += w;
    n -= static_cast<std::size_t>(w);
  }
}

void on_fault(int sig, siginfo_t* info, void*) {
  const auto at = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (const auto& r : g_ranges) {
    const auto lo = r.lo.load(std::memory_order_acquire);
    const auto hi = r.hi.load(std::memory_order_acquire);
    if (lo != 0 && at >= lo && at < hi + kSlack) {
      // The line is assembled first and written once, so it never interleaves with another
      // process's (only async-signal-safe calls here: no allocation).
      char line[512];
      static_assert(64 + sizeof kFault <= sizeof line);
      const std::size_t name =
          std::min(std::strlen(program_invocation_short_name), std::size_t{64});
      std::memcpy(line, program_invocation_short_name, name);
      std::memcpy(line + name, kFault, sizeof kFault - 1);
      write_stderr(line, name + sizeof kFault - 1);
      ::_exit(3);
    }
  }
  // Not a store's: the previous disposition takes over. A fault the kernel raised (si_code > 0)
  // repeats when the instruction runs again; a signal sent by a process is sent again.
  ::sigaction(sig, sig == SIGBUS ? &g_previous_bus : &g_previous_segv, nullptr);
  if (info->si_code <= 0) ::raise(sig);
}

void install_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous_bus);
    ::sigaction(SIGSEGV, &sa, &g_previous_segv);
  });
}

}  // namespace

Status check_data_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};  // LMDB reports what cannot be opened
  struct stat st {};
  const bool stat_ok = ::fstat(fd, &st) == 0;
  std::array<char, kMagicAt + 4> head{};
  const bool lmdb_file =
      io::pread_all(fd, head.data(), head.size(), 0) == static_cast<std::int64_t>(head.size()) &&
      load<std::uint32_t>(reinterpret_cast<const unsigned char*>(&head[kMagicAt])) == kMagic;
  std::optional<Meta> newest = read_meta(fd, 0);
  if (newest) {
    if (auto second = read_meta(fd, newest->page_size); second && second->txn_id > newest->txn_id) {
      newest = second;
    }
  }
  ::close(fd);
  if (!stat_ok || st.st_size == 0 || !lmdb_file) return {};  // LMDB says what it is not
  if (!newest) {
    return diag::error(codes::kStoreCorrupt,
                       "the store's data file " + path + " has no valid meta page: it is corrupt");
  }
  const std::uint64_t needed = (newest->last_page + 1) * newest->page_size;
  if (static_cast<std::uint64_t>(st.st_size) < needed) {
    return diag::error(codes::kStoreCorrupt, "the store's data file " + path + " holds " +
                                                 std::to_string(st.st_size) +
                                                 " bytes where its meta page needs " +
                                                 std::to_string(needed) + ": it was truncated");
  }
  return {};
}

namespace {

// The address range of this process's mapping of (dev, ino), from /proc/self/maps.
std::optional<std::pair<std::uintptr_t, std::uintptr_t>> find_mapping(dev_t dev, ino_t ino) {
  const int fd = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::string maps;
  const int rc = io::read_all(fd, maps, 64u << 20);
  ::close(fd);
  if (rc != 0) return std::nullopt;
  std::optional<std::pair<std::uintptr_t, std::uintptr_t>> found;
  std::size_t at = 0;
  while (at < maps.size()) {
    const auto end = maps.find('\n', at);
    const std::string line = maps.substr(at, end - at);
    at = end == std::string::npos ? maps.size() : end + 1;
    unsigned long lo = 0, hi = 0, offset = 0, inode = 0;
    unsigned major_no = 0, minor_no = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s %lx %x:%x %lu", &lo, &hi, perms, &offset, &major_no,
                    &minor_no, &inode) == 7 &&
        inode == ino && major_no == major(dev) && minor_no == minor(dev)) {
      // LMDB maps the file once; take the whole extent if the kernel shows it in pieces.
      if (!found) found = std::make_pair(std::uintptr_t{lo}, std::uintptr_t{hi});
      found->first = std::min<std::uintptr_t>(found->first, lo);
      found->second = std::max<std::uintptr_t>(found->second, hi);
    }
  }
  return found;
}

}  // namespace

int watch_map(int slot, const std::string& path) {
  install_handler();
  struct stat st {};
  const auto range =
      ::stat(path.c_str(), &st) == 0 ? find_mapping(st.st_dev, st.st_ino) : std::nullopt;
  if (!range) {
    unwatch_map(slot);
    return -1;
  }
  if (slot < 0) {
    for (std::size_t i = 0; i < kSlots && slot < 0; ++i) {
      bool expected = false;
      if (g_ranges[i].taken.compare_exchange_strong(expected, true)) slot = static_cast<int>(i);
    }
    if (slot < 0) return -1;
  }
  g_ranges[slot].lo.store(0, std::memory_order_release);
  g_ranges[slot].hi.store(range->second, std::memory_order_release);
  g_ranges[slot].lo.store(range->first, std::memory_order_release);
  return slot;
}

std::pair<std::uintptr_t, std::uintptr_t> watched_map(int slot) {
  if (slot < 0) return {0, 0};
  return {g_ranges[slot].lo.load(std::memory_order_acquire),
          g_ranges[slot].hi.load(std::memory_order_acquire)};
}

void unwatch_map(int slot) {
  if (slot < 0) return;
  g_ranges[slot].lo.store(0, std::memory_order_release);
  g_ranges[slot].hi.store(0, std::memory_order_release);
  g_ranges[slot].taken.store(false, std::memory_order_release);
}

}  // namespace mf::store::detail
