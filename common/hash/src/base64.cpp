// Base64 of base64.hpp, written by hand: one encoding per byte string on the way in, and an
// appending encoder the store's export streams through.
#include "mf/hash/base64.hpp"

#include <cstdint>

namespace mf::hash {

namespace {
constexpr char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

void base64_append(std::string_view in, std::string& out) {
  std::size_t i = 0;
  out.reserve(out.size() + (in.size() + 2) / 3 * 4);
  for (; i + 3 <= in.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t(std::uint8_t(in[i])) << 16) |
                            (std::uint32_t(std::uint8_t(in[i + 1])) << 8) | std::uint8_t(in[i + 2]);
    out += kB64[(v >> 18) & 63];
    out += kB64[(v >> 12) & 63];
    out += kB64[(v >> 6) & 63];
    out += kB64[v & 63];
  }
  const std::size_t rest = in.size() - i;
  if (rest == 0) return;
  std::uint32_t v = std::uint32_t(std::uint8_t(in[i])) << 16;
  if (rest == 2) v |= std::uint32_t(std::uint8_t(in[i + 1])) << 8;
  out += kB64[(v >> 18) & 63];
  out += kB64[(v >> 12) & 63];
  out += rest == 2 ? kB64[(v >> 6) & 63] : '=';
  out += '=';
}

namespace {

int value_of(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

// Strict: whole quads, padding only at the end, unused bits zero (one encoding per byte string).
bool base64_decode(std::string_view in, std::string& out) {
  if (in.size() % 4 != 0) return false;
  out.clear();
  out.reserve(in.size() / 4 * 3);
  for (std::size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int pad = 0;
    if (last && in[i + 3] == '=') pad = in[i + 2] == '=' ? 2 : 1;
    std::uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const int d = k >= 4 - pad ? 0 : value_of(in[i + k]);
      if (d < 0) return false;
      v = (v << 6) | std::uint32_t(d);
    }
    out += char((v >> 16) & 0xff);
    if (pad < 2) out += char((v >> 8) & 0xff);
    if (pad < 1) out += char(v & 0xff);
    if ((pad == 2 && (v & 0xffff) != 0) || (pad == 1 && (v & 0xff) != 0)) return false;
  }
  return true;
}

std::string base64_encode(std::string_view in) {
  std::string out;
  base64_append(in, out);
  return out;
}

bool base64_decode_lenient(std::string_view text, std::string& out) {
  std::string standard(text);
  for (char& c : standard) {
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  if (standard.find('=') == std::string::npos) standard.append((4 - standard.size() % 4) % 4, '=');
  return base64_decode(standard, out);
}

}  // namespace mf::hash
