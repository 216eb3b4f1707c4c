// Syntax errors are nlohmann's own words ("syntax error while parsing value - invalid literal; last read: '[tru';
// expected ..."), after corun's "<source>: invalid JSON at line L, column C: ". corun's own checks (duplicate
// member names, nesting depth, an empty text, a byte order mark) say theirs the same way (base/json.cpp).
#include "base/json_errors.hpp"

#include "base/check.hpp"

#include <algorithm>
#include <sstream>

namespace corun::json {

void fail_at(std::string_view text, const std::string& source, size_t at, const std::string& why) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++col;  // count characters, not UTF-8 continuation bytes
    }
  }
  std::ostringstream os;
  os << source << ": invalid JSON at line " << line << ", column " << col << ": " << why;
  detail::fail(Status::io_error, os.str());
}

size_t string_start(std::string_view text, size_t end) {
  for (size_t i = std::min(end, text.size()); i-- > 0;) {
    if (text[i] != '"') continue;
    size_t backslashes = 0;
    while (backslashes < i && text[i - 1 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return i;
  }
  return 0;
}

void explain_parse_error(std::string_view text, const std::string& source, size_t position,
                         const std::string& message) {
  // nlohmann's message starts "[json.exception.parse_error.101] parse error at line 1, column 4: ": corun says
  // where itself, from `position` (the bytes read, the offending one included), so only the words after it stay.
  std::string why = message;
  if (why.rfind("[json.exception.", 0) == 0) why.erase(0, why.find("] ") + 2);
  if (const size_t colon = why.find(": "); why.rfind("parse error", 0) == 0 && colon != std::string::npos)
    why.erase(0, colon + 2);
  fail_at(text, source, std::min(position > 0 ? position - 1 : 0, text.size()), why);
}

}  // namespace corun::json
