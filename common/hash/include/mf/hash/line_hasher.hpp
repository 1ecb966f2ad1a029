// The SHA-256 of a stream and of each '\n'-terminated line in it, in one pass over the bytes (the
// trace verifier's digest of the whole trace and of every line its successor names).
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "mf/hash/sha256.hpp"

namespace mf::hash {

// Where the CPU has the SHA extensions, the two digests are computed side by side: one block of
// the stream and one of the current line per step, two independent chains of rounds that the core
// overlaps, so the pair costs little more than one digest. Elsewhere, two OpenSSL contexts.
class LineHasher {
 public:
  // `use_sha_extensions` false takes the OpenSSL path even where the extensions are present (for
  // tests that hold the two paths together).
  explicit LineHasher(bool use_sha_extensions = true);
  ~LineHasher();
  LineHasher(const LineHasher&) = delete;
  LineHasher& operator=(const LineHasher&) = delete;

  // The next bytes of the stream: appends to `lines` the digest of each line they complete (the
  // line's bytes without its '\n'; a line may have begun in earlier bytes).
  void update(std::string_view bytes, std::vector<Digest>& lines);
  // The next bytes of the stream when no more line digests are wanted.
  void update_stream(std::string_view bytes);
  // The digest of the whole stream.
  Digest finish();

  // Whether this CPU has the SHA extensions (and this build can use them).
  static bool sha_extensions();

 private:
  struct Fast;
  std::unique_ptr<Fast> fast_;             // the SHA-extension path, or null
  std::unique_ptr<Sha256> stream_, line_;  // the OpenSSL path
};

}  // namespace mf::hash
