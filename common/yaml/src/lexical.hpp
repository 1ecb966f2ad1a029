// The YAML 1.2 rules yaml-cpp's scanner does not enforce, and the scalars it misreads, done by the
// front end itself over the raw text (reader.cpp drives both):
//   - prepass(): one linear pass before yaml-cpp sees the text. It normalises what yaml-cpp
//     misreads without changing any offset (a lone CR line break becomes LF; tabs on a line of
//     only white space become spaces outside block scalars) and refuses what yaml-cpp wrongly
//     accepts: characters YAML does not allow raw, a comment not separated from the token before
//     it, an unterminated quoted scalar, an empty flow entry, a block sequence entry inside a flow
//     collection, a block scalar header with anything but a comment after it.
//   - decode_quoted() / decode_block(): the value of a quoted or block scalar, read from the text
//     at the offset yaml-cpp reports for it, with the folding, chomping and indentation rules of
//     YAML 1.2 (chapters 7 and 8), replacing yaml-cpp's value.
//   - check_flow_indentation(): continuation lines of a flow collection in block context must be
//     indented more than the block collection that holds it.
// Every function is iterative, linear in the text it reads and allocates at most the value.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mf::yaml::detail {

struct LexError {
  std::size_t offset;  // into the text
  const char* code;    // a diag::codes constant
  std::string message;
};

// The first character YAML 1.2 does not allow in a stream (c-printable, §5.1): invalid UTF-8
// (MF-S004); C0 controls other than tab, LF, CR, DEL, C1 controls other than NEL, U+FFFE, U+FFFF
// (MF-S011).
std::optional<LexError> check_characters(std::string_view text);

// Normalises `text` in place (same length, so every offset still points at the same character)
// and refuses what the lexical rules above forbid, and a quoted scalar that never closes.
std::optional<LexError> prepass(std::string& text);

// A quoted scalar starting at `pos` (its quote). `min_indent` is the number of spaces every
// continuation line must start with (the enclosing block collection's column plus one, or zero).
struct Decoded {
  std::string value;
  std::optional<LexError> error;
};
Decoded decode_quoted(std::string_view text, std::size_t pos, int min_indent);

// A block scalar whose indicator is at `pos`; `parent_indent` is the column of the block
// collection holding it, or -1 at the top level.
Decoded decode_block(std::string_view text, std::size_t pos, int parent_indent);

// A flow collection opening at `pos`: every line it continues on must start with at least
// `min_indent` spaces.
std::optional<LexError> check_flow_indentation(std::string_view text, std::size_t pos,
                                               int min_indent);

// The column (in bytes from the line start) of `pos`.
int column_of(std::string_view text, std::size_t pos);

}  // namespace mf::yaml::detail
