// Base64 (RFC 4648): the store's export lines (standard alphabet, padded, strict) and signed
// envelopes (DSSE allows either alphabet, padded or not).
#pragma once

#include <string>
#include <string_view>

namespace mf::hash {

// Standard alphabet, padded; appended to `out`.
void base64_append(std::string_view in, std::string& out);
std::string base64_encode(std::string_view in);
// Strict: standard alphabet, whole quads, padding only at the end, unused bits zero (one encoding
// per byte string). False on anything else.
bool base64_decode(std::string_view in, std::string& out);
// Either alphabet (`-_` or `+/`), padding optional; otherwise as base64_decode.
bool base64_decode_lenient(std::string_view text, std::string& out);

}  // namespace mf::hash
