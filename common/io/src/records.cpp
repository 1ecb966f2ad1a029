// The temporary files of records.hpp: made unnamed in TMPDIR, written and read positionally.
#include "mf/io/records.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "mf/diag/codes.hpp"

namespace mf::io {

namespace codes = diag::codes;

Result<Fd> open_temporary(const std::string& what) {
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  Fd fd(::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
  if (!fd.valid()) {
    // A file system without O_TMPFILE: a named file, unlinked at once.
    std::string templ = (dir / "mf-spill-XXXXXX").string();
    fd = Fd(::mkostemp(templ.data(), O_CLOEXEC));
    if (fd.valid()) ::unlink(templ.c_str());
  }
  if (!fd.valid()) {
    return diag::error(codes::kWriteFailed, "cannot create a temporary file for " + what + " in " +
                                                dir.string() + ": " + std::strerror(errno));
  }
  return fd;
}

Status SpillBytes::write(std::uint64_t offset, const void* data, std::size_t size) {
  if (size == 0) return Status();
  if (!fd_.valid()) {
    Result<Fd> fd = open_temporary(what_);
    if (!fd) return fd.take_diagnostics();
    fd_ = std::move(*fd);
  }
  const char* bytes = static_cast<const char*>(data);
  for (std::size_t done = 0; done < size;) {
    const ssize_t n =
        ::pwrite(fd_.get(), bytes + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return diag::error(codes::kWriteFailed,
                         "cannot write " + what_ + " to a temporary file: " +
                             (n < 0 ? std::strerror(errno) : "no space written"));
    }
    done += static_cast<std::size_t>(n);
  }
  return Status();
}

Status SpillBytes::read(std::uint64_t offset, void* data, std::size_t size) const {
  if (size == 0) return Status();
  if (!fd_.valid() || pread_all(fd_.get(), static_cast<char*>(data), size, offset) !=
                          static_cast<std::int64_t>(size)) {
    return diag::error(codes::kInternal, "cannot read " + what_ + " back from a temporary file");
  }
  return Status();
}

}  // namespace mf::io
