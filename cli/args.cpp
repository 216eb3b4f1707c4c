#include "cli/args.hpp"

#include "base/parse.hpp"
#include "sched/registry.hpp"

#include <cstdio>
#include <sstream>

namespace corun::cli {

Args::Args(int argc, char** argv, int first, const std::vector<FlagSpec>& specs,
           std::vector<std::string>* positionals) {
  for (int a = first; a < argc; ++a) {
    std::string arg = argv[a];
    if (positionals != nullptr && !arg.empty() && arg[0] != '-') {
      positionals->push_back(arg);
      continue;
    }
    std::string value;
    bool inline_value = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      inline_value = true;
    }
    const FlagSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.name == arg) spec = &s;
    if (spec == nullptr) throw UsageError("unknown argument '" + arg + "'", "-");  // no line of its own
    if (spec->takes_value && !inline_value) {
      if (a + 1 >= argc) throw UsageError(arg + " needs a value");
      value = argv[++a];
    } else if (!spec->takes_value && inline_value) {
      throw UsageError(arg + " takes no value");
    }
    if (values_.count(arg)) throw UsageError(arg + " given twice");
    values_[arg] = value;
  }
}

std::string Args::str(const std::string& flag, const std::string& fallback) const {
  auto it = values_.find(flag);
  return it == values_.end() ? fallback : it->second;
}

std::string Args::given(std::initializer_list<const char*> flags) const {
  std::string given;
  for (const char* flag : flags)
    if (has(flag)) given += (given.empty() ? "" : " ") + std::string(flag) + " " + str(flag, "");
  return given;
}

long Args::count_from(const std::string& flag, long fallback, long lowest, const std::string& needs) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return fallback;
  const auto v = parse::integer(it->second);
  if (!v || *v < lowest || *v > kMaxCount) throw UsageError(flag + " needs " + needs + ", got '" + it->second + "'");
  return *v;
}

long Args::positive(const std::string& flag, long fallback) const {
  return count_from(flag, fallback, 1, "a positive integer (1 to " + std::to_string(kMaxCount) + ")");
}

long Args::non_negative(const std::string& flag, long fallback) const {
  return count_from(flag, fallback, 0, "an integer from 0 to " + std::to_string(kMaxCount));
}

double Args::positive_real(const std::string& flag, double fallback) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return fallback;
  const auto v = parse::real(it->second);
  if (!v || !(*v > 0.0) || *v > 1e9)
    throw UsageError(flag + " needs a positive number (at most 1e9), got '" + it->second + "'");
  return *v;
}

bool policy_help_requested(const Config& config) {
  if (config.policy != "help") return false;
  std::fputs(sched::policy_help().c_str(), stdout);
  return true;
}

std::string describe(const std::vector<FlagSpec>& specs) {
  std::ostringstream os;
  for (const auto& s : specs) {
    std::string left = s.name + (s.takes_value ? " V" : "");
    os << "  " << left << std::string(left.size() < 18 ? 18 - left.size() : 1, ' ') << s.help << "\n";
  }
  return os.str();
}

int usage_error(const std::string& command, const UsageError& error, const std::vector<FlagSpec>& specs,
                const std::string& usage_text) {
  std::string flag = error.flag;
  if (flag.empty()) {  // "--iters needs a value", "--trace=x takes no value": the message's first word
    const std::string message = error.what();
    const std::string word = message.substr(0, message.find_first_of(" =,:;"));
    if (word.rfind("-", 0) == 0) flag = word;
  }
  std::string line = usage_text.substr(0, usage_text.find('\n')) + "\n";
  for (const auto& s : specs)
    if (s.name == flag) line = describe({s});
  std::fputs(line.c_str(), stderr);
  std::fprintf(stderr, "see `corun %s --help` for every option\ncorun %s: %s\n", command.c_str(),
               command.c_str(), error.what());
  return 2;
}

}  // namespace corun::cli
