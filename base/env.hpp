// base/env.hpp — strict parsing of corun's environment variables (one place, one style).
//
// A variable that is set but empty counts as unset. A malformed value is a corun::Error
// (Status::invalid_config) naming the variable, the bad value and what is accepted: in a batch job a
// silently ignored setting wastes the allocation.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace corun::env {

/// The value of `name`, or nothing when unset or empty.
std::optional<std::string> get(const char* name);

/// An integer in [min, max]; trailing junk, overflow or out-of-range values are errors.
std::optional<long> get_int(const char* name, long min, long max);

/// One of `choices` (exact match); anything else is an error listing the choices.
std::optional<std::string> get_choice(const char* name, const std::vector<std::string>& choices);

/// Strict boolean: exactly "0" or "1".
std::optional<bool> get_bool(const char* name);

}  // namespace corun::env
