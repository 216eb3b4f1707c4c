// base/json_errors.hpp — the error messages of base/json.hpp's strict parser (internal to base/json.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace corun::json {

/// Throws corun::Error(io_error) "<source>: invalid JSON at line L, column C: <why>" for the byte offset `at`
/// of `text` (columns count characters, not UTF-8 bytes).
[[noreturn]] void fail_at(std::string_view text, const std::string& source, size_t at, const std::string& why);

/// Throws corun::Error(io_error) for an error nlohmann's parser reported (its exception's message, and
/// `position`: the bytes it read): "<source>: invalid JSON at line L, column C: " and nlohmann's own words.
[[noreturn]] void explain_parse_error(std::string_view text, const std::string& source, size_t position,
                                      const std::string& message);

/// The offset of the '"' that opens the string whose text ends just before `end` (its closing quote, or
/// the end of the text for an unterminated string).
size_t string_start(std::string_view text, size_t end);

}  // namespace corun::json
