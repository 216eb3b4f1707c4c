// `corun plot-trace` end to end: SVG and PNG from a synthetic trace, many tasks, usage errors (exit 2),
// bad files and a missing rsvg-convert (exit 1).
#include "trace/trace.hpp"

#include "common/corun_process_test.hpp"
#include "common/synthetic_trace.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using corun::testing::CommandResult;
using corun::testing::read_file;
using corun::testing::shell_quote;

using corun::testing::contains;

size_t count(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

bool have_rsvg_convert() {
  return std::system("command -v rsvg-convert >/dev/null 2>&1") == 0;
}

// corun plot-trace starts no StarPU: the environment is the test's own (PATH without rsvg-convert).
class PlotTrace : public corun::testing::CorunProcessTest {
 protected:
  PlotTrace() : CorunProcessTest("plot", corun::testing::corun_test_env({}, "")) {}

  // A trace like an LSTM training step on 2 workers, with team tasks and a marked critical path.
  std::string synthetic(const std::string& name, int layers = 2, int seq = 8, int workers = 2, int iterations = 1) {
    corun::testing::SyntheticTraceConfig cfg;
    cfg.layers = layers;
    cfg.seq = seq;
    cfg.workers = workers;
    cfg.iterations = iterations;
    const auto t = corun::testing::synthetic_lstm_trace(cfg);
    corun::write_chrome_trace(path(name), t.meta, t.tasks);
    return path(name);
  }

  // Only the files a test made on purpose: no temporaries left behind.
  std::vector<std::string> files() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir_))  // .starpu-home: the StarPU home of each run (cli_run.hpp)
      if (e.path().filename() != ".starpu-home") v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }
};

TEST_F(PlotTrace, Svg) {
  const std::string trace = synthetic("t.json");
  const CommandResult r = corun("plot-trace t.json -o t.svg");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(r.out, "wrote t.svg");
  const std::string svg = read_file(path("t.svg"));
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_HAS(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1600\"");
  EXPECT_HAS(svg, "</svg>");
  // Title with policy, layout, makespan, lower bound and their ratio; rows; axis; legend.
  for (const char* part :
       {"policy cpf", "layout 2x1", "2 workers", "makespan ", "lower bound ", "makespan / bound = ", "critical path ",
        "worker 0", "worker 1", "% busy", "time (ms)", "matmul: ", "sigmoid: ", "critical path: ", "t.json"})
    EXPECT_HAS(svg, part);
  EXPECT_GT(count(svg, "<rect"), 100u);
  EXPECT_EQ(files(), (std::vector<std::string>{"t.json", "t.svg"}));
}

TEST_F(PlotTrace, Png) {
  if (!have_rsvg_convert()) GTEST_SKIP() << "rsvg-convert is not installed (scripts/setup.sh installs librsvg2-bin)";
  synthetic("t.json");
  const CommandResult r = corun("plot-trace t.json -o t.png --width 900");
  ASSERT_EQ(r.code, 0) << r;
  const std::string png = read_file(path("t.png"));
  ASSERT_GT(png.size(), 24u);
  EXPECT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.substr(12, 4), "IHDR");
  auto be32 = [&](size_t at) {
    return (static_cast<unsigned>(static_cast<unsigned char>(png[at])) << 24) |
           (static_cast<unsigned>(static_cast<unsigned char>(png[at + 1])) << 16) |
           (static_cast<unsigned>(static_cast<unsigned char>(png[at + 2])) << 8) |
           static_cast<unsigned>(static_cast<unsigned char>(png[at + 3]));
  };
  EXPECT_EQ(be32(16), 900u);  // --width
  EXPECT_GT(be32(20), 200u);  // title, two rows, axis, legend
  EXPECT_EQ(files(), (std::vector<std::string>{"t.json", "t.png"}));
  // Upper-case extensions work too.
  const CommandResult u = corun("plot-trace t.json -o T.PNG");
  EXPECT_EQ(u.code, 0) << u;
}

// Tens of thousands of tasks: sub-pixel boxes are merged, so the SVG stays proportional to the width.
TEST_F(PlotTrace, ManyTasks) {
  synthetic("big.json", 4, 40, 2, 8);  // about 33,000 tasks
  const CommandResult r = corun("plot-trace big.json -o big.svg --width 1200");
  ASSERT_EQ(r.code, 0) << r;
  const std::string svg = read_file(path("big.svg"));
  EXPECT_HAS(svg, "8 iterations");
  EXPECT_HAS(svg, "iter 7");
  EXPECT_LT(count(svg, "<rect"), 2u * 2 * 1200) << "boxes were not merged";
  // One iteration on its own.
  const CommandResult one = corun("plot-trace big.json -o one.svg --iteration 3");
  ASSERT_EQ(one.code, 0) << one;
  EXPECT_HAS(read_file(path("one.svg")), "iteration 3");
  const CommandResult none = corun("plot-trace big.json -o none.svg --iteration 8");
  EXPECT_EQ(none.code, 1) << none;
  EXPECT_HAS(none.err, "has no tasks of iteration 8 (iterations 0..7)");
}

TEST_F(PlotTrace, ManyWorkersAndEmptyTrace) {
  synthetic("w16.json", 2, 6, 16);
  const CommandResult r = corun("plot-trace w16.json -o w16.svg");
  ASSERT_EQ(r.code, 0) << r;
  EXPECT_HAS(read_file(path("w16.svg")), "worker 15");
  corun::TraceMeta m;
  m.policy = "lws";
  m.workers = 2;
  corun::write_chrome_trace(path("empty.json"), m, {});
  const CommandResult e = corun("plot-trace empty.json -o empty.svg");
  ASSERT_EQ(e.code, 0) << e;
  EXPECT_HAS(read_file(path("empty.svg")), "0 tasks");
}

TEST_F(PlotTrace, MissingRsvgConvert) {
  synthetic("t.json");
  fs::create_directories(path("emptybin"));
  const CommandResult r = corun("plot-trace t.json -o t.png", "PATH=" + shell_quote(path("emptybin")));
  EXPECT_EQ(r.code, 1) << r;
  EXPECT_HAS(r.err, "cannot write 't.png'");
  EXPECT_HAS(r.err, "rsvg-convert");
  EXPECT_HAS(r.err, "librsvg2-bin");
  EXPECT_HAS(r.err, "scripts/setup.sh");
  EXPECT_HAS(r.err, "-o t.svg");
  EXPECT_FALSE(fs::exists(path("t.png")));
  // SVG needs nothing else.
  const CommandResult s = corun("plot-trace t.json -o t.svg", "PATH=" + shell_quote(path("emptybin")));
  EXPECT_EQ(s.code, 0) << s;
}

TEST_F(PlotTrace, UsageErrors) {
  synthetic("t.json");
  struct Case {
    const char* args;
    const char* message;
  };
  for (const Case& c :
       {Case{"plot-trace", "the trace FILE is required"}, Case{"plot-trace -o x.svg", "the trace FILE is required"},
        Case{"plot-trace t.json", "-o OUT.png or -o OUT.svg is required"},
        Case{"plot-trace t.json u.json -o x.svg", "one trace FILE only, got 't.json' and 'u.json'"},
        Case{"plot-trace t.json -o x.jpg", "-o must name a .png or .svg file, got 'x.jpg'"},
        Case{"plot-trace t.json -o", "-o needs a value"}, Case{"plot-trace t.json -o x.svg -o y.svg", "-o given twice"},
        Case{"plot-trace t.json -o x.svg --width 0", "--width needs a positive integer (1 to 1000000000), got '0'"},
        Case{"plot-trace t.json -o x.svg --width abc", "--width needs a positive integer"},
        Case{"plot-trace t.json -o x.svg --width 100", "--width must be between 400 and 20000"},
        Case{"plot-trace t.json -o x.svg --width 99999", "--width must be between 400 and 20000"},
        Case{"plot-trace t.json -o x.svg --iteration -1", "--iteration needs a non-negative integer"},
        Case{"plot-trace t.json -o x.svg --iteration 1.5", "--iteration needs a non-negative integer"},
        Case{"plot-trace t.json -o x.svg --bogus", "unknown argument '--bogus'"},
        Case{"plot-trace t.json -o x.svg --help=1", "--help takes no value"}}) {
    SCOPED_TRACE(c.args);
    const CommandResult r = corun(c.args);
    EXPECT_EQ(r.code, 2) << r;
    EXPECT_HAS(r.err, c.message);
    EXPECT_HAS(r.err, "see `corun plot-trace --help`");
    EXPECT_FALSE(fs::exists(path("x.svg")));
  }
}

TEST_F(PlotTrace, Help) {
  const CommandResult r = corun("plot-trace --help");
  EXPECT_EQ(r.code, 0) << r;
  for (const char* part : {"usage: corun plot-trace", "-o", "--width", "--iteration"}) EXPECT_HAS(r.out, part);
  const CommandResult top = corun("--help");
  EXPECT_EQ(top.code, 0) << top;
  EXPECT_HAS(top.out, "plot-trace");
}

TEST_F(PlotTrace, BadFilesExitOne) {
  const CommandResult missing = corun("plot-trace nope.json -o x.svg");
  EXPECT_EQ(missing.code, 1) << missing;
  EXPECT_HAS(missing.err, "cannot read 'nope.json'");

  { std::ofstream(path("garbage.json")) << "{\"traceEvents\": [1, 2,"; }
  const CommandResult garbage = corun("plot-trace garbage.json -o x.svg");
  EXPECT_EQ(garbage.code, 1) << garbage;
  EXPECT_HAS(garbage.err, "'garbage.json': invalid JSON at line 1");

  { std::ofstream(path("chrome.json")) << R"({"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":1,"pid":1,"tid":1}]})"; }
  const CommandResult foreign = corun("plot-trace chrome.json -o x.svg");
  EXPECT_EQ(foreign.code, 1) << foreign;
  EXPECT_HAS(foreign.err, "'chrome.json' is a Chrome trace but not one corun wrote");
  EXPECT_FALSE(fs::exists(path("x.svg")));

  synthetic("t.json");
  const CommandResult unwritable = corun("plot-trace t.json -o no/such/dir/x.svg");
  EXPECT_EQ(unwritable.code, 1) << unwritable;
  EXPECT_HAS(unwritable.err, "no/such/dir/x.svg");
}

// Issue 52 item 7: ts or dur of 1e308 are JSON numbers but add up to inf, drawn as "inf% busy"; a negative
// time draws before the run. Each is refused naming the event and the field, and nothing is drawn.
TEST_F(PlotTrace, ImpossibleTimesAreRefused) {
  const std::string good = read_file(synthetic("t.json"));
  // The file with the value of the first `"key":` replaced by `value`.
  auto with = [&](const std::string& key, const std::string& value) {
    std::string text = good;
    const size_t at = text.find("\"" + key + "\":");
    EXPECT_NE(at, std::string::npos) << key;
    const size_t start = at + key.size() + 3, end = text.find_first_of(",}", start);
    text.replace(start, end - start, value);
    std::ofstream(path("bad.json")) << text;
  };
  struct Case {
    const char* key;
    const char* value;
    const char* says;
  };
  for (const Case& c : {Case{"ts", "1e308", ".ts is 1e+308"}, Case{"dur", "1e308", ".dur is 1e+308"},
                        Case{"ts", "-5", ".ts is -5"}, Case{"dur", "-1", ".dur is -1"},
                        Case{"makespan_us", "1e308", "otherData.makespan_us is 1e+308"}}) {
    SCOPED_TRACE(std::string(c.key) + "=" + c.value);
    with(c.key, c.value);
    const CommandResult r = corun("plot-trace bad.json -o x.svg");
    EXPECT_EQ(r.code, 1) << r;
    EXPECT_HAS(r.err, c.says);
    EXPECT_HAS(r.err, "microseconds from 0 to 1e15");
    EXPECT_FALSE(contains(r.err + r.out, "inf")) << r;
    EXPECT_FALSE(fs::exists(path("x.svg")));
  }
}

}  // namespace
