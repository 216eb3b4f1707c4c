// tests/fuzz/mutator.hpp — a deterministic mutation engine for the reader fuzzer (test_fuzz_readers.cpp).
//
//   Mutator m(seeds, 21);                 // the seed inputs and the RNG seed
//   std::string input = m.next();         // a mutated seed: 1 to 4 stacked mutations
//
// The same seeds and RNG seed give the same sequence of inputs on every machine (std::mt19937_64 is fully
// specified; the distributions here are written out by hand because the standard's are not), so input k of
// a failing run can be regenerated. Mutations: bit flips, bytes set to structure characters, truncations,
// insertions of random bytes or of tokens that readers get wrong (huge, negative, non-finite numbers,
// escapes), replacement of a number by such a token, deletion and duplication of a range, and splices of
// two seeds. libFuzzer is not needed: the readers are small and the grammar-shaped tokens reach deep.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace corun::fuzz {

class Mutator {
 public:
  Mutator(std::vector<std::string> seeds, uint64_t rng_seed) : seeds_(std::move(seeds)), rng_(rng_seed) {}

  /// The next input: a seed (chosen at random) with 1 to 4 mutations; 1 in 16 is the seed unchanged, so
  /// the valid path keeps being exercised.
  std::string next() {
    std::string s = seeds_[below(seeds_.size())];
    if (below(16) == 0) return s;
    const size_t n = 1 + below(4);
    for (size_t i = 0; i < n; ++i) mutate(s);
    return s;
  }

  /// A number in [0, n) (n > 0), without std::uniform_int_distribution's implementation-defined mapping.
  size_t below(size_t n) { return static_cast<size_t>(rng_() % n); }

 private:
  void mutate(std::string& s) {
    static constexpr char kBytes[] = "\0\xff\x7f\x80\"'{}[](),:.-+eE0123456789 \n\t\\";
    switch (below(10)) {
      case 0:  // flip one bit
        if (!s.empty()) s[below(s.size())] ^= static_cast<char>(1u << below(8));
        break;
      case 1:  // one byte set to a structure character, a digit or an extreme value
        if (!s.empty()) s[below(s.size())] = kBytes[below(sizeof(kBytes) - 1)];
        break;
      case 2:  // truncate
        s.resize(below(s.size() + 1));
        break;
      case 3: {  // insert 1 to 8 random bytes
        const size_t at = below(s.size() + 1), n = 1 + below(8);
        std::string bytes;
        for (size_t i = 0; i < n; ++i) bytes += static_cast<char>(below(256));
        s.insert(at, bytes);
        break;
      }
      case 4:  // insert a token
        s.insert(below(s.size() + 1), token());
        break;
      case 5:  // replace a number (a run of digits) by a token
        replace_number(s);
        break;
      case 6: {  // delete a range
        if (s.empty()) break;
        const size_t at = below(s.size());
        s.erase(at, 1 + below(std::min<size_t>(s.size() - at, 32)));
        break;
      }
      case 7: {  // duplicate a range in place
        if (s.empty()) break;
        const size_t at = below(s.size());
        const std::string part = s.substr(at, 1 + below(std::min<size_t>(s.size() - at, 64)));
        s.insert(below(s.size() + 1), part);
        break;
      }
      case 8: {  // splice: a prefix of this input and a suffix of another seed
        const std::string& other = seeds_[below(seeds_.size())];
        s = s.substr(0, below(s.size() + 1)) + other.substr(below(other.size() + 1));
        break;
      }
      default:  // a little-endian length field (npy header length) or any 2 bytes set to an extreme value
        if (s.size() >= 2) {
          const size_t at = below(s.size() - 1);
          const uint16_t v = below(2) ? 0xffff : static_cast<uint16_t>(below(65536));
          s[at] = static_cast<char>(v & 0xff);
          s[at + 1] = static_cast<char>(v >> 8);
        }
        break;
    }
  }

  void replace_number(std::string& s) {
    if (s.empty()) return;
    size_t at = s.find_first_of("0123456789", below(s.size()));
    if (at == std::string::npos) at = s.find_first_of("0123456789");
    if (at == std::string::npos) return;
    const size_t end = s.find_first_not_of("0123456789.eE+-", at);
    s.replace(at, (end == std::string::npos ? s.size() : end) - at, token());
  }

  std::string token() {
    static const std::vector<std::string> kTokens = {"0",
                                                     "-1",
                                                     "-0",
                                                     "1",
                                                     "2",
                                                     "3",
                                                     "255",
                                                     "65536",
                                                     "16777216",
                                                     "100000000",
                                                     "268435456",
                                                     "1073741823",
                                                     "1099511627776",
                                                     "2147483647",
                                                     "2147483648",
                                                     "4294967296",
                                                     "-2147483649",
                                                     "9223372036854775807",
                                                     "9223372036854775808",
                                                     "-9223372036854775809",
                                                     "18446744073709551616",
                                                     "99999999999999999999999999",
                                                     "1e308",
                                                     "1e309",
                                                     "-1e999",
                                                     "1e-400",
                                                     "4.5",
                                                     "1.",
                                                     ".5",
                                                     "01",
                                                     "+1",
                                                     "0x10",
                                                     "NaN",
                                                     "nan",
                                                     "inf",
                                                     "-Infinity",
                                                     "null",
                                                     "true",
                                                     "\"\"",
                                                     "\"\\u0000\"",
                                                     "\"\\ud800\"",
                                                     "\"\\uZZZZ\"",
                                                     "\\",
                                                     "\"",
                                                     "'",
                                                     "[",
                                                     "]",
                                                     "{",
                                                     "}",
                                                     "(",
                                                     ")",
                                                     ",",
                                                     ":",
                                                     "[[[[[[[[",
                                                     "{\"a\":",
                                                     "}}}}",
                                                     "\xef\xbb\xbf",
                                                     "\xc3\x28",
                                                     "\xf4\x90\x80\x80",
                                                     "\r\n",
                                                     "\n\n",
                                                     "\t",
                                                     "    ",
                                                     "#",
                                                     "=",
                                                     "/",
                                                     "../",
                                                     "'<f4'",
                                                     "'<f8'",
                                                     "'>f4'",
                                                     "'|u1'",
                                                     "True",
                                                     "False",
                                                     "(1,)",
                                                     "()",
                                                     "(0,)",
                                                     "(2, 3, 4, 5, 6)",
                                                     "'descr'",
                                                     "'shape'",
                                                     "'fortran_order'",
                                                     "\"format\"",
                                                     "\"version\"",
                                                     "\"blocks\"",
                                                     "\"tried\"",
                                                     "\"params\"",
                                                     "\"losses\""};
    return kTokens[below(kTokens.size())];
  }

  std::vector<std::string> seeds_;
  std::mt19937_64 rng_;
};

}  // namespace corun::fuzz
