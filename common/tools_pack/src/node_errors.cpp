// The texts of the file tools' refusals: Node's fs error strings (libuv's wording), and Pi's.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <string>

#include "file_tools.hpp"

namespace mf::tools {

std::string escape_message(std::string_view user_path) {
  return "Path escapes the workspace: " + std::string(user_path);
}

std::string too_large_message(std::string_view verb, std::string_view path, std::string_view size) {
  return "File too large to " + std::string(verb) + ": " + std::string(path) + " (" +
         std::string(size) + " bytes, the limit is " + std::to_string(kMaxToolFileBytes) + ")";
}

std::string node_error(int err, std::string_view syscall, std::string_view path) {
  // libuv's wording for the codes a file tool meets; anything else takes the C library's.
  const char* name = ::strerrorname_np(err);
  std::string desc;
  switch (err) {
    case ENOENT:
      desc = "no such file or directory";
      break;
    case EACCES:
      desc = "permission denied";
      break;
    case EPERM:
      desc = "operation not permitted";
      break;
    case EISDIR:
      desc = "illegal operation on a directory";
      break;
    case ENOTDIR:
      desc = "not a directory";
      break;
    case ELOOP:
      desc = "too many symbolic links encountered";
      break;
    case EEXIST:
      desc = "file already exists";
      break;
    case ENAMETOOLONG:
      desc = "name too long";
      break;
    case ENOSPC:
      desc = "no space left on device";
      break;
    case EROFS:
      desc = "read-only file system";
      break;
    case EIO:
      desc = "i/o error";
      break;
    case EMFILE:
      desc = "too many open files";
      break;
    case ENXIO:
      desc = "no such device or address";
      break;
    case EBUSY:
      desc = "resource busy or locked";
      break;
    case ETXTBSY:
      desc = "text file is busy";
      break;
    case EFBIG:
      desc = "file too large";
      break;
    default: {
      const char* d = ::strerrordesc_np(err);
      desc = d != nullptr ? d : "unknown error";
      std::transform(desc.begin(), desc.end(), desc.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    }
  }
  std::string out =
      std::string(name != nullptr ? name : "EUNKNOWN") + ": " + desc + ", " + std::string(syscall);
  if (!path.empty()) out += " '" + std::string(path) + "'";
  return out;
}

}  // namespace mf::tools
