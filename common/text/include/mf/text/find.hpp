// Finding a literal in bytes: the searches of grep and mf-toolread. Candidates are found 32 or 16
// bytes at a time by the needle's two rarest bytes at once (AVX2 where the CPU has it, else SSE2;
// byte by byte elsewhere), then
// compared whole: far fewer stops than memchr on one byte, and no shift table to build per call
// as glibc's memmem does.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mf::text {

class LiteralFinder {
 public:
  // `ascii_case_insensitive`: ASCII letters match either case; every other byte matches itself.
  explicit LiteralFinder(std::string needle, bool ascii_case_insensitive = false);

  // The start of the first occurrence wholly inside [from, end), or nullptr. An empty needle
  // occurs at `from`.
  const char* find(const char* from, const char* end) const;

  const std::string& needle() const { return needle_; }

 private:
  bool equal_at(const char* p) const;
  const char* find_avx2(const char*& p, const char* last) const;

  std::string needle_;  // lowercased when case-insensitive
  bool fold_ = false;
  bool avx2_ = false;       // the CPU has AVX2: 32 starts at a time
  std::size_t first_ = 0;   // the rarest byte's offset
  std::size_t second_ = 0;  // the second rarest's (first_ again for a one-byte needle)
};

}  // namespace mf::text
