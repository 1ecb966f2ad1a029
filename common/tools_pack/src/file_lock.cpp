// Pi's file mutation queue: one registry of per-file mutexes, keyed by canonical path.
#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "edit_core.hpp"
#include "mf/io/file.hpp"

namespace mf::tools {
using io::Fd;

namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}

}  // namespace

struct FileLock::Entry {
  std::mutex mutex;
  int users = 0;
};

namespace {
std::map<std::string, std::unique_ptr<FileLock::Entry>, std::less<>>& registry() {
  static std::map<std::string, std::unique_ptr<FileLock::Entry>, std::less<>> r;
  return r;
}
}  // namespace

FileLock::FileLock(std::string key) : key_(std::move(key)) {
  {
    std::lock_guard<std::mutex> guard(registry_mutex());
    auto& slot = registry()[key_];
    if (!slot) slot = std::make_unique<Entry>();
    ++slot->users;
    entry_ = slot.get();
  }
  entry_->mutex.lock();
}

FileLock::~FileLock() {
  entry_->mutex.unlock();
  std::lock_guard<std::mutex> guard(registry_mutex());
  if (--entry_->users == 0) registry().erase(key_);
}

std::string file_lock_key(const Workspace& ws, const std::string& relative) {
  Fd probe(ws.open_at(relative, O_PATH));
  if (probe.get() >= 0) {
    if (auto path = descriptor_path(probe.get())) return *path;
  }
  return ws.absolute(relative);
}

}  // namespace mf::tools
