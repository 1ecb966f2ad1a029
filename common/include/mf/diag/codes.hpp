// Stable diagnostic codes shared by every tool. Each is listed with its meaning in
// docs/diagnostics.md; grep a code to find where it is raised.
#pragma once

namespace mf::diag::codes {

// Input admission and parsing (MF-S family, shared with the harness compiler).
inline constexpr const char* kTooLarge = "MF-S003";        // document over the size limit
inline constexpr const char* kNotUtf8 = "MF-S004";         // invalid UTF-8 (raw or via escapes)
inline constexpr const char* kDuplicateKey = "MF-S006";    // object key repeated
inline constexpr const char* kLimitExceeded = "MF-S010";   // depth, entry or number-lexeme limit
inline constexpr const char* kMalformed = "MF-S011";       // malformed JSON, non-finite number
inline constexpr const char* kNotObject = "MF-S012";       // top level is not an object
inline constexpr const char* kMissing = "MF-S013";         // input file missing or unreadable
inline constexpr const char* kNotRegularFile = "MF-S014";  // input is not a regular file
inline constexpr const char* kSchema = "MF-S020";          // value has the wrong type or range
inline constexpr const char* kBadPointer = "MF-S030";      // malformed or unresolvable JSON pointer
inline constexpr const char* kUsage = "MF-U001";           // command-line usage error

// Output publication (MF-O family).
inline constexpr const char* kBadOutputPath = "MF-O001";
inline constexpr const char* kWriteFailed = "MF-O003";
inline constexpr const char* kClobber = "MF-O004";  // existing output holds different bytes

// Internal (MF-I) and report truncation (MF-D).
inline constexpr const char* kInternal = "MF-I001";
inline constexpr const char* kTruncated = "MF-D001";

}  // namespace mf::diag::codes
