// Text and numbers as the HTML report shows them. escape() is the one way document text reaches
// the page, in element content and in quoted attribute values alike.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace kg::results::html {

// & < > " ' as character references; a byte that is not part of valid UTF-8 as the four
// characters \xNN (as results.json writes them); C0 controls other than tab and newline, DEL, C1
// controls and the bidirectional marks and overrides as \xNN or \u{NNNN}, so that no text can
// open an element or reorder what the reader sees.
std::string escape(const std::string& text);

// A number with `significant` digits ("1.23", "4.5e-07"); "—" for NaN and infinities.
std::string number(double v, int significant = 3);
// A fraction as a percentage with one decimal ("66.7%").
std::string percent(double fraction);
// A speedup as "1.23x"; "—" for none.
std::string speedup(const nlohmann::json& value);
// A JSON value as text (not yet escaped): strings as they are, null as "—", numbers formatted,
// arrays of strings joined with ", ", anything else dumped.
std::string plain(const nlohmann::json& value);
// A member of an object as plain() text, "" when the object lacks it.
std::string field(const nlohmann::json& object, const char* key);
// A member of an object that should be an array; an empty array when it is absent or not one.
const nlohmann::json& array_member(const nlohmann::json& object, const char* key);

}  // namespace kg::results::html
