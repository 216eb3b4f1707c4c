// base/parse.hpp — strict text-to-number conversion shared by the environment and CLI parsers.
//
// strtol/strtod alone accept leading blanks, a '+' sign, and stop at trailing junk; corun accepts only the
// whole text as a number, so "12x", " 12" and "+12" are all rejected.
#pragma once

#include <optional>
#include <string>

namespace corun::parse {

/// A base-10 integer: optional '-' then digits, nothing else, within long's range.
std::optional<long> integer(const std::string& text);

/// A decimal real: optional '-', then a digit or '.', consumed entirely, finite.
std::optional<double> real(const std::string& text);

}  // namespace corun::parse
