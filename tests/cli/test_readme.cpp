// The README's quick start, run as written and checked against the output the README shows. The commands
// come from README.md itself (the ```sh block under "## Quick start"), `scripts/train.sh`'s defaults from
// the script itself, and the expected lines from the ``` block after "Output of `scripts/train.sh`", so
// editing any of the three without the others fails here. The run is shortened by a flag (--iters 3), the
// lines are compared by shape (the same keys in the same order, the same table columns, numbers where the
// README has numbers), never by timings.
#include "common/corun_process_test.hpp"

#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#ifndef CORUN_SOURCE_DIR
#error "CORUN_SOURCE_DIR must be defined to the repository root"
#endif

namespace corun::testing {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  const auto b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// The lines of the first fenced block that opens after the first line starting with `after`.
std::vector<std::string> fenced_block(const std::vector<std::string>& readme, const std::string& after) {
  size_t i = 0;
  while (i < readme.size() && readme[i].rfind(after, 0) != 0) ++i;
  while (i < readme.size() && readme[i].rfind("```", 0) != 0) ++i;
  std::vector<std::string> block;
  for (++i; i < readme.size() && readme[i].rfind("```", 0) != 0; ++i) block.push_back(readme[i]);
  return block;
}

// `defaults+=(--model lstm)` lines of scripts/train.sh, in order: what it adds when a flag is absent.
std::vector<std::pair<std::string, std::string>> train_sh_defaults() {
  std::vector<std::pair<std::string, std::string>> defaults;
  const std::regex add(R"(defaults\+=\((--[a-z-]+) ([^)\s]+)\))");
  for (const std::string& line : lines_of(read_file(std::string(CORUN_SOURCE_DIR) + "/scripts/train.sh"))) {
    std::smatch m;
    if (std::regex_search(line, m, add)) defaults.emplace_back(m[1], m[2]);
  }
  return defaults;
}

// The `corun train` arguments scripts/train.sh runs for `args`: each default whose flag is absent, then args.
std::string train_sh_arguments(const std::string& args) {
  std::string full;
  for (const auto& [flag, value] : train_sh_defaults())
    if ((" " + args + " ").find(" " + flag + " ") == std::string::npos) full += flag + " " + value + " ";
  return full + args;
}

bool is_number(const std::string& s) { return std::regex_match(s, std::regex(R"(-?[0-9]+(\.[0-9]+)?)")); }

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::istringstream in(row.substr(1));
  for (std::string c; std::getline(in, c, '|');) out.push_back(trim(c));
  return out;
}

// What a line must keep whatever the machine and the timings: a table row's cell count and which cells are
// numbers (other cells verbatim), a key=value line's text up to its first key and its keys in order, any
// other line's text with every number replaced by '#'.
std::string shape(const std::string& raw) {
  const std::string line = trim(raw);
  if (line.rfind("|", 0) == 0) {
    std::string s = "table:";
    for (const std::string& c : cells(line)) s += (is_number(c) ? std::string("#") : c) + "|";
    return s;
  }
  const std::regex key(R"(([A-Za-z_]+)=)");
  auto it = std::sregex_iterator(line.begin(), line.end(), key);
  if (it != std::sregex_iterator()) {
    std::string s = "keys:" + line.substr(0, static_cast<size_t>(it->position(0))) + ":";
    for (; it != std::sregex_iterator(); ++it) s += (*it)[1].str() + " ";
    return s;
  }
  return "text:" + std::regex_replace(line, std::regex(R"([0-9]+(\.[0-9]+)?)"), "#");
}

// Whether a printed line has the shape of a README line. Where the README elides part of a key=value line
// with "...", the printed line may have more keys there (its keys then only need to include the README's
// in order).
bool matches(const std::string& got, const std::string& want) {
  const std::string g = shape(got), w = shape(want);
  if (g == w) return true;
  if (want.find("...") == std::string::npos || w.rfind("keys:", 0) != 0 || g.rfind("keys:", 0) != 0) return false;
  const auto split = [](const std::string& s, std::string& head) {
    const size_t colon = s.find(':', 5);
    head = s.substr(0, colon);
    std::vector<std::string> keys;
    std::istringstream in(s.substr(colon + 1));
    for (std::string k; in >> k;) keys.push_back(k);
    return keys;
  };
  std::string gh, wh;
  const std::vector<std::string> gk = split(g, gh), wk = split(w, wh);
  if (gh != wh) return false;
  size_t at = 0;
  for (const std::string& k : gk)
    if (at < wk.size() && k == wk[at]) ++at;
  return at == wk.size();
}

// The run keeps the caller's CORUN_QUIET: the README shows the configuration line and the progress output.
class Readme : public CorunProcessTest {
 protected:
  Readme() : CorunProcessTest("readme", corun_test_env({}, "")) {}
  std::vector<std::string> readme_ = lines_of(read_file(std::string(CORUN_SOURCE_DIR) + "/README.md"));
};

TEST_F(Readme, QuickStartCommandsAreTheOnesThisTestRuns) {
  const std::vector<std::string> block = fenced_block(readme_, "## Quick start");
  ASSERT_FALSE(block.empty()) << "README.md has no ```sh block under '## Quick start'";
  int train = 0;
  for (const std::string& line : block) {
    const std::string command = trim(line.substr(0, line.find('#')));
    if (command.empty()) continue;
    // scripts/test.sh is the suite this test belongs to; scripts/train.sh is run by the test below. Any
    // other command is new: teach this test to run it.
    EXPECT_TRUE(command.rfind("scripts/train.sh", 0) == 0 || command == "scripts/test.sh")
        << "README quick start command this test does not know: " << command;
    train += command.rfind("scripts/train.sh", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(train, 1);
  const auto defaults = train_sh_defaults();
  ASSERT_FALSE(defaults.empty()) << "no defaults+=(...) lines found in scripts/train.sh";
  EXPECT_EQ(defaults[0].first, "--model");
}

TEST_F(Readme, TrainShPrintsTheLinesTheReadmeShows) {
  std::string args;
  for (const std::string& line : fenced_block(readme_, "## Quick start")) {
    const std::string command = trim(line.substr(0, line.find('#')));
    if (command.rfind("scripts/train.sh", 0) == 0) args = trim(command.substr(std::string("scripts/train.sh").size()));
  }
  // Shortened: three iterations instead of the script's twenty (a flag given wins over its default).
  const std::string corun_args = "train " + train_sh_arguments(args + " --iters 3");
  const CommandResult r = corun(corun_args);
  ASSERT_EQ(r.code, 0) << r;

  const std::vector<std::string> expected = fenced_block(readme_, "Output of `scripts/train.sh`");
  ASSERT_GE(expected.size(), 4u) << "README.md shows no output block after 'Output of `scripts/train.sh`'";
  std::vector<std::string> printed = lines_of(r.err);
  for (const std::string& l : lines_of(r.out)) printed.push_back(l);
  for (const std::string& want : expected) {
    if (trim(want).empty()) continue;
    bool found = false;
    for (const std::string& got : printed) found = found || matches(got, want);
    EXPECT_TRUE(found) << "README.md shows a line the run printed nothing like:\n  " << want
                       << "\nits shape: " << shape(want) << "\n"
                       << r;
  }
  // The title line shows the defaults themselves, which depend on nothing but the code: verbatim.
  for (const std::string& want : expected)
    if (want.find(" train: ") != std::string::npos) EXPECT_TRUE(contains(r.out, want + "\n")) << want << "\n" << r;
  // The data row ran the shortened count.
  for (const std::string& got : printed)
    if (shape(got).rfind("table:#|", 0) == 0) EXPECT_EQ(cells(trim(got))[0], "3") << got;
}

TEST(ReadmeShape, ComparesKeysColumnsAndNumbersNotValues) {
  EXPECT_EQ(shape("corun: policy=lws (from default) workers=2 core=Haswell"),
            shape("corun: policy=eager (from CORUN_SCHED) workers=8 core=SkylakeX"));
  EXPECT_NE(shape("corun: policy=lws workers=2 core=Haswell"), shape("corun: policy=lws workers=2"));
  EXPECT_EQ(shape("| 20 | 37.83 | lws | 0.1778 |"), shape("| 3 | 41.5 | lws | 2.2 |"));
  EXPECT_NE(shape("| 20 | 37.83 | lws |"), shape("| 20 | 37.83 | eager |"));
  EXPECT_NE(shape("| a | b |"), shape("| a | b | c |"));
  EXPECT_EQ(shape("(timing excludes the first 1 iteration)"), shape("(timing excludes the first 2 iteration)"));
  EXPECT_TRUE(matches("corun: policy=lws blas=OpenBLAS 0.3 X MAX_THREADS=64 core=Zen kernels=fast",
                      "corun: policy=lws blas=OpenBLAS ... core=Haswell kernels=fast"));
  EXPECT_FALSE(matches("corun: policy=lws blas=OpenBLAS 0.3 X MAX_THREADS=64 kernels=fast",
                       "corun: policy=lws blas=OpenBLAS ... core=Haswell kernels=fast"));
  EXPECT_FALSE(matches("corun: policy=lws blas=OpenBLAS 0.3 MAX_THREADS=64 core=Zen kernels=fast",
                       "corun: policy=lws blas=OpenBLAS 0.3 core=Haswell kernels=fast"));
  EXPECT_EQ(train_sh_arguments("--iters 3").find("--iters 20"), std::string::npos);
  EXPECT_NE(train_sh_arguments("--iters 3").find("--model lstm"), std::string::npos);
}

}  // namespace
}  // namespace corun::testing
