// The stream-and-lines hasher (line_hasher.hpp). The SHA-extension path is FIPS 180-4's SHA-256
// written with the x86 SHA instructions (sha256rnds2 runs two rounds; sha256msg1/msg2 extend the
// message schedule), in the state layout they use (ABEF, CDGH). One block takes 32 dependent
// sha256rnds2, so a single message is bound by their latency; two messages interleaved fill the
// gaps. Each message is fed as a source of 64-byte blocks: blocks of the caller's bytes in place
// where they are whole, the rest assembled in the lane's buffer, then the padding.
#include "mf/hash/line_hasher.hpp"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MF_HASH_SHA_NI 1
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace mf::hash {

#if defined(MF_HASH_SHA_NI)

namespace {

#define MF_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

alignas(16) constexpr std::uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

alignas(16) constexpr std::uint32_t kInitial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

// One message in progress: its state in the instructions' layout, its length so far, and the
// bytes of a block not yet whole (or the last one or two blocks with their padding).
struct Lane {
  __m128i abef, cdgh;
  std::uint64_t length = 0;
  std::size_t held = 0;
  alignas(16) unsigned char buf[128];
};

MF_SHA_TARGET void reset(Lane& lane) {
  const __m128i abcd = _mm_load_si128(reinterpret_cast<const __m128i*>(kInitial));
  const __m128i efgh = _mm_load_si128(reinterpret_cast<const __m128i*>(kInitial + 4));
  const __m128i badc = _mm_shuffle_epi32(abcd, 0xB1);
  const __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B);
  lane.abef = _mm_alignr_epi8(badc, hgfe, 8);
  lane.cdgh = _mm_blend_epi16(hgfe, badc, 0xF0);
  lane.length = 0;
  lane.held = 0;
}

MF_SHA_TARGET Digest digest_of(const Lane& lane) {
  const __m128i feba = _mm_shuffle_epi32(lane.abef, 0x1B);
  const __m128i dchg = _mm_shuffle_epi32(lane.cdgh, 0xB1);
  const __m128i dcba = _mm_blend_epi16(feba, dchg, 0xF0);
  const __m128i hgfe = _mm_alignr_epi8(dchg, feba, 8);
  // Each word big-endian: reverse the bytes of each 32-bit word.
  const __m128i swap = _mm_set_epi8(12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3);
  Digest d{};
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d.data()), _mm_shuffle_epi8(dcba, swap));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(d.data() + 16), _mm_shuffle_epi8(hgfe, swap));
  return d;
}

// One block into each of N lanes, the lanes' rounds interleaved.
template <int N>
MF_SHA_TARGET inline void compress(Lane* const (&lanes)[N],
                                   const unsigned char* const (&blocks)[N]) {
  const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i abef[N], cdgh[N], abef0[N], cdgh0[N], w[N][4];
  for (int l = 0; l < N; ++l) {
    abef[l] = abef0[l] = lanes[l]->abef;
    cdgh[l] = cdgh0[l] = lanes[l]->cdgh;
  }
#pragma GCC unroll 16
  for (int g = 0; g < 16; ++g) {
    const __m128i k = _mm_load_si128(reinterpret_cast<const __m128i*>(kRound + 4 * g));
    for (int l = 0; l < N; ++l) {
      __m128i x;
      if (g < 4) {
        x = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blocks[l] + 16 * g)),
                             swap);
      } else {
        // W[t] = W[t-16] + s0(W[t-15]) + W[t-7] + s1(W[t-2]), four words at a time.
        x = _mm_sha256msg1_epu32(w[l][g % 4], w[l][(g + 1) % 4]);
        x = _mm_add_epi32(x, _mm_alignr_epi8(w[l][(g + 3) % 4], w[l][(g + 2) % 4], 4));
        x = _mm_sha256msg2_epu32(x, w[l][(g + 3) % 4]);
      }
      w[l][g % 4] = x;
      const __m128i m = _mm_add_epi32(x, k);
      cdgh[l] = _mm_sha256rnds2_epu32(cdgh[l], abef[l], m);
      abef[l] = _mm_sha256rnds2_epu32(abef[l], cdgh[l], _mm_shuffle_epi32(m, 0x0E));
    }
  }
  for (int l = 0; l < N; ++l) {
    lanes[l]->abef = _mm_add_epi32(abef[l], abef0[l]);
    lanes[l]->cdgh = _mm_add_epi32(cdgh[l], cdgh0[l]);
  }
}

MF_SHA_TARGET void compress1(Lane& a, const unsigned char* block) {
  Lane* const lanes[1] = {&a};
  const unsigned char* const blocks[1] = {block};
  compress<1>(lanes, blocks);
}

MF_SHA_TARGET void compress2(Lane& a, const unsigned char* x, Lane& b, const unsigned char* y) {
  Lane* const lanes[2] = {&a, &b};
  const unsigned char* const blocks[2] = {x, y};
  compress<2>(lanes, blocks);
}

// Appends the padding to the lane's held bytes: one block, or two when the length does not fit
// after them. Returns how many blocks of buf to compress.
int pad(Lane& lane) {
  const std::size_t held = lane.held;
  const int blocks = held < 56 ? 1 : 2;
  lane.buf[held] = 0x80;
  std::memset(lane.buf + held + 1, 0, static_cast<std::size_t>(64 * blocks) - held - 1);
  std::uint64_t bits = lane.length * 8;
  for (int i = 0; i < 8; ++i) {
    lane.buf[64 * blocks - 1 - i] = static_cast<unsigned char>(bits);
    bits >>= 8;
  }
  return blocks;
}

// The lane's next 64-byte block from [p, limit): in place when the lane holds nothing and 64 bytes
// are there, else through the lane's buffer; null when the bytes up to limit do not fill it.
inline const unsigned char* take_block(Lane& lane, const unsigned char*& p,
                                       const unsigned char* limit) {
  const auto left = static_cast<std::size_t>(limit - p);
  if (lane.held == 0 && left >= 64) {
    p += 64;
    lane.length += 64;
    return p - 64;
  }
  const std::size_t take = std::min(left, 64 - lane.held);
  std::memcpy(lane.buf + lane.held, p, take);
  p += take;
  lane.held += take;
  lane.length += take;
  if (lane.held < 64) return nullptr;
  lane.held = 0;
  return lane.buf;
}

// The stream's blocks from the bytes fed since the last call; null when they are used up.
struct StreamBlocks {
  Lane& lane;
  const unsigned char* p;
  const unsigned char* end;

  const unsigned char* next() { return take_block(lane, p, end); }
};

// The blocks of each line in turn, each line's padding after its bytes; after the compression of
// a line's last block, done() appends its digest and starts the next line.
struct LineBlocks {
  Lane& lane;
  const unsigned char* p;
  const unsigned char* end;
  std::vector<Digest>& out;
  const unsigned char* newline = nullptr;  // the next '\n' in [p, end), or end
  int padding = 0;                         // padding blocks of the ended line not yet returned
  int returned = 0;
  bool last = false;  // the block just returned ends its line

  const unsigned char* find_newline() const {
    const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    return nl != nullptr ? static_cast<const unsigned char*>(nl) : end;
  }

  const unsigned char* next() {
    if (padding > 0) {
      const unsigned char* block = lane.buf + 64 * returned++;
      last = returned == padding;
      if (last) padding = 0;
      return block;
    }
    if (newline == nullptr || newline < p) newline = find_newline();
    if (const unsigned char* block = take_block(lane, p, newline)) return block;
    if (p == end) return nullptr;  // the line goes on in the next bytes
    ++p;                           // the '\n', which is not hashed
    padding = pad(lane);
    returned = 1;
    last = padding == 1;
    if (last) padding = 0;
    return lane.buf;
  }

  void done() {
    if (!last) return;
    last = false;
    out.push_back(digest_of(lane));
    reset(lane);
  }
};

MF_SHA_TARGET bool cpu_has_sha() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
  const bool ssse3 = (c & (1u << 9)) != 0, sse41 = (c & (1u << 19)) != 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) == 0) return false;
  return ssse3 && sse41 && (b & (1u << 29)) != 0;
}

}  // namespace

struct LineHasher::Fast {
  Lane stream, line;

  MF_SHA_TARGET Fast() {
    reset(stream);
    reset(line);
  }

  void update(std::string_view bytes, std::vector<Digest>& lines) {
    const auto* begin = reinterpret_cast<const unsigned char*>(bytes.data());
    StreamBlocks s{stream, begin, begin + bytes.size()};
    LineBlocks l{line, begin, begin + bytes.size(), lines};
    for (;;) {
      const unsigned char* a = s.next();
      const unsigned char* b = l.next();
      if (a != nullptr && b != nullptr) {
        compress2(stream, a, line, b);
      } else if (a != nullptr) {
        compress1(stream, a);
      } else if (b != nullptr) {
        compress1(line, b);
      } else {
        return;
      }
      if (b != nullptr) l.done();
    }
  }

  void update_stream(std::string_view bytes) {
    const auto* begin = reinterpret_cast<const unsigned char*>(bytes.data());
    StreamBlocks s{stream, begin, begin + bytes.size()};
    while (const unsigned char* a = s.next()) compress1(stream, a);
  }

  Digest finish() {
    const int blocks = pad(stream);
    for (int i = 0; i < blocks; ++i) compress1(stream, stream.buf + 64 * i);
    return digest_of(stream);
  }
};

bool LineHasher::sha_extensions() {
  static const bool has = cpu_has_sha();
  return has;
}

#else  // no SHA-extension path in this build

struct LineHasher::Fast {
  void update(std::string_view, std::vector<Digest>&) {}
  void update_stream(std::string_view) {}
  Digest finish() { return {}; }
};

bool LineHasher::sha_extensions() {
  return false;
}

#endif

LineHasher::LineHasher(bool use_sha_extensions) {
  if (use_sha_extensions && sha_extensions()) {
    fast_ = std::make_unique<Fast>();
  } else {
    stream_ = std::make_unique<Sha256>();
    line_ = std::make_unique<Sha256>();
  }
}

LineHasher::~LineHasher() = default;

void LineHasher::update(std::string_view bytes, std::vector<Digest>& lines) {
  if (fast_) return fast_->update(bytes, lines);
  stream_->update(bytes);
  while (!bytes.empty()) {
    const auto newline = bytes.find('\n');
    if (newline == std::string_view::npos) return line_->update(bytes);
    line_->update(bytes.substr(0, newline));
    lines.push_back(line_->finish_and_restart());
    bytes.remove_prefix(newline + 1);
  }
}

void LineHasher::update_stream(std::string_view bytes) {
  if (fast_) return fast_->update_stream(bytes);
  stream_->update(bytes);
}

Digest LineHasher::finish() {
  if (fast_) return fast_->finish();
  return stream_->finish();
}

}  // namespace mf::hash
