// mf_gen_corpus: writes the deterministic trace-like JSONL corpus used by bench/run.sh.
// Usage: mf_gen_corpus OUT [--mb N] [--seed S]   (defaults: 100 MB, seed 20240501)
// The same arguments always produce the same bytes, so figures from different machines compare.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "trace_gen.hpp"

namespace {

int usage() {
  std::fputs("usage: mf_gen_corpus OUT [--mb N] [--seed S]\n", stderr);
  return 2;
}

bool parse_u64(const char* s, std::uint64_t& out) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (end == s || *end != '\0') return false;
  out = v;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = nullptr;
  std::uint64_t mb = 100;
  std::uint64_t seed = 20240501;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--mb") == 0 && i + 1 < argc) {
      if (!parse_u64(argv[++i], mb) || mb == 0) return usage();
    } else if (std::strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      if (!parse_u64(argv[++i], seed)) return usage();
    } else if (path == nullptr && argv[i][0] != '-') {
      path = argv[i];
    } else {
      return usage();
    }
  }
  if (path == nullptr) return usage();

  std::FILE* f = std::fopen(path, "wb");
  if (f == nullptr) {
    std::fprintf(stderr, "mf_gen_corpus: cannot open %s: %s\n", path, std::strerror(errno));
    return 3;
  }
  mf::bench::TraceGenerator gen(seed);
  const std::uint64_t total = mb * 1000 * 1000;
  std::uint64_t written = 0;
  std::uint64_t lines = 0;
  std::string buf;
  buf.reserve(1 << 21);
  while (written < total) {
    buf.clear();
    while (buf.size() < (1u << 20) && written + buf.size() < total) {
      gen.append_line(buf);
      ++lines;
    }
    if (std::fwrite(buf.data(), 1, buf.size(), f) != buf.size()) {
      std::fprintf(stderr, "mf_gen_corpus: write failed: %s\n", std::strerror(errno));
      std::fclose(f);
      return 3;
    }
    written += buf.size();
  }
  if (std::fclose(f) != 0) {
    std::fprintf(stderr, "mf_gen_corpus: close failed: %s\n", std::strerror(errno));
    return 3;
  }
  std::fprintf(stderr, "mf_gen_corpus: wrote %llu bytes, %llu lines to %s\n",
               static_cast<unsigned long long>(written), static_cast<unsigned long long>(lines),
               path);
  return 0;
}
