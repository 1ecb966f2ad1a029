// What LMDB does not check about its data file (private to the store). LMDB maps data.mdb and
// trusts it: a file cut shorter than its meta page says, or pages whose offsets point past the
// end of the file, make a read fault (SIGBUS, SIGSEGV) instead of failing. So:
//   - check_data_file() compares the file with its meta pages before it is mapped;
//   - watch_map() registers a mapped range so that a fault inside it (a corruption found mid-read)
//     ends the process with a diagnostic and exit 3, never a signal. Faults elsewhere keep their
//     previous handling.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "mf/diag/diagnostic.hpp"

namespace mf::store::detail {

// MF-K003 when data.mdb at `path`, an LMDB file by its first page's magic, has no valid meta page
// or is shorter than its newest one requires; {} otherwise (a file that is not LMDB's at all is
// left to LMDB's own refusal).
Status check_data_file(const std::string& path);

// Watches this process's mapping of the data file at `path` (found in /proc/self/maps by its device
// and inode) in `slot` (-1 takes a free one) and returns the slot, or -1 when none is free or the
// mapping cannot be found (the map is then unwatched). unwatch_map(-1) does nothing.
int watch_map(int slot, const std::string& path);
void unwatch_map(int slot);
// The address at which the mapping watched in `slot` starts (data.mdb's offset 0) and where it
// ends, or {0, 0} when the slot watches nothing.
std::pair<std::uintptr_t, std::uintptr_t> watched_map(int slot);

}  // namespace mf::store::detail
