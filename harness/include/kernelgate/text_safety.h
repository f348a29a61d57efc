// Text from a submission (folder and file names, compiler output, a kernel's messages and stderr)
// is arbitrary bytes. Everything kernelgate writes or prints passes one of these functions, so no
// byte sequence can break a JSON document, a trace line or drive the operator's terminal. They are
// modes of one escaper (text_safety.cc): each writes what it escapes as \xNN (or, for the trace
// format, Python's own short escapes).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kg::text {

// Valid UTF-8 is kept as it is; each byte that is not part of a valid sequence (a stray
// continuation byte, a truncated, overlong or surrogate sequence, a code point above U+10FFFF)
// becomes the four characters \xNN. `changed` (optional) is set when any byte was escaped.
std::string utf8_escaped(std::string_view bytes, bool* changed = nullptr);

enum class Newlines { Keep, Escape };

// utf8_escaped, and also every control character written as \xNN: C0 other than tab (and other
// than newline with Newlines::Keep), DEL, C1 (U+0080-U+009F) and the bidirectional overrides and
// isolates (U+202A-U+202E, U+2066-U+2069), each escaped byte by byte. The result holds no escape
// sequence, carriage return or backspace a terminal would act on.
std::string terminal_safe(std::string_view bytes, Newlines newlines = Newlines::Escape, bool* changed = nullptr);

// A Python string literal in single quotes (the trace format's): backslash, quote, newline,
// carriage return and tab as \\ \' \n \r \t, the other ASCII control characters (C0, DEL) as
// \xNN, every other byte as it is.
std::string python_quoted(std::string_view bytes);

// A piece of source text shown in a message: in single quotes, its first `max_bytes` bytes with
// the ASCII control characters (C0, DEL) as \xNN, then "..." when the text is longer.
std::string quoted_excerpt(std::string_view text, std::size_t max_bytes);

// What the \xNN escapes mean, for the notes that say a text was changed.
inline constexpr const char* kEscapeNote = "bytes that are not valid UTF-8 are written as \\xNN (four characters)";

}  // namespace kg::text
