// tests/fuzz/test_fuzz_readers.cpp — the mutation fuzzer over every file reader of corun (issue 21 item 8):
// .npy, JSON (whole and streamed), profiles, frozen schedules, serving plans and training checkpoints
// (manifest and parameter files). Each reader gets thousands of inputs mutated from the seeds committed
// under tests/fuzz/seeds/ (written by make_seeds.py) within a few seconds; the criterion is in
// fuzz_harness.hpp. Label unit: scripts/test.sh also runs it under AddressSanitizer + UBSan.
// A failure prints the input index; the inputs are deterministic (the RNG seed is FuzzOptions::rng_seed).
#include "fuzz/fuzz_harness.hpp"

#include "common/temp_dir_test.hpp"

#include "base/json.hpp"
#include "cli/checkpoint.hpp"
#include "sched/corun/schedule_file.hpp"
#include "sched/profiler/profile_file.hpp"
#include "serve/kernels/plan_file.hpp"

#include <corun/graph.hpp>
#include <corun/npy.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <stdexcept>

#ifndef CORUN_FUZZ_SEEDS
#error "CORUN_FUZZ_SEEDS must be defined to tests/fuzz/seeds"
#endif

namespace corun::fuzz {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) throw std::runtime_error("fuzz: cannot write " + path);
}

// The seed files of one corpus (tests/fuzz/seeds/<corpus>/), in name order, optionally only those ending in
// `suffix`.
std::vector<std::string> seeds(const std::string& corpus, const std::string& suffix = "") {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(std::string(CORUN_FUZZ_SEEDS) + "/" + corpus)) {
    const std::string n = e.path().string();
    if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      names.push_back(n);
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> data;
  for (const std::string& n : names) data.push_back(read_bytes(n));
  return data;
}

// An accepted input whose result breaks the reader's own promises.
[[noreturn]] void broken(const std::string& what) {
  throw std::logic_error("accepted, but " + what);
}

class Fuzz : public testing::TempDirTest {
 protected:
  Fuzz() : TempDirTest("fuzz") {}

  void expect_clean(const FuzzReport& r) {
    std::cout << r << "\n";
    RecordProperty("inputs", static_cast<int>(r.inputs));
    EXPECT_TRUE(r.failures.empty()) << r;
    EXPECT_GE(r.inputs, FuzzOptions{}.min_inputs) << r;
    // The seeds are valid and the mutations are mostly not: both paths must have been taken.
    EXPECT_GT(r.accepted, 0u) << r;
    EXPECT_GT(r.rejected, r.inputs / 4) << r;
  }
};

TEST_F(Fuzz, NpyReader) {
  const std::string file = path("input.npy");
  expect_clean(fuzz_reader(
      seeds("npy"), {},
      [&](const std::string& input) {
        write_bytes(file, input);
        const NpyArray a = load_npy(file);
        if (static_cast<int64_t>(a.data.size()) != a.shape.numel())
          broken(std::to_string(a.data.size()) + " values for shape " + a.shape.str());
      },
      file, file));
}

// parse_file and parse_file_streaming must agree on what is valid JSON.
TEST_F(Fuzz, JsonReader) {
  const std::string file = path("input.json");
  expect_clean(fuzz_reader(
      seeds("json"), {.rng_seed = 22},
      [&](const std::string& input) {
        write_bytes(file, input);
        bool streamed_ok = true;
        size_t items = 0;
        try {
          json::parse_file_streaming(file, "traceEvents", [&](size_t, const json::Value&) { ++items; });
        } catch (const Error&) {
          streamed_ok = false;
        }
        try {
          json::parse_file(file);
        } catch (const Error&) {
          if (streamed_ok) broken("by parse_file_streaming only; parse_file rejects it");
          throw;
        }
        if (!streamed_ok) broken("by parse_file only; parse_file_streaming rejects it");
      },
      file, file));
}

TEST_F(Fuzz, ProfileReader) {
  const std::string file = path("input.profile");
  expect_clean(fuzz_reader(
      seeds("profile"), {.rng_seed = 23},
      [&](const std::string& input) {
        write_bytes(file, input);
        const sched::Profile p = sched::read_profile(file);
        if (p.workers < 0) broken("workers " + std::to_string(p.workers));
      },
      file, file));
}

TEST_F(Fuzz, ScheduleReader) {
  const std::string file = path("input.schedule");
  expect_clean(fuzz_reader(
      seeds("schedule"), {.rng_seed = 24},
      [&](const std::string& input) {
        write_bytes(file, input);
        sched::check_schedule(file);
        const auto s = sched::read_schedule(file);
        if (!s) broken("as no schedule at all, though the file exists");
        if (s->first.size() != s->width.size()) broken("with a block count that differs between first and width");
        for (size_t i = 0; i < s->first.size(); ++i)
          if (s->first[i] < 0 || s->width[i] < 1 || s->first[i] + s->width[i] > s->cores)
            broken("with block " + std::to_string(i) + " outside the cores");
      },
      file, file));
}

TEST_F(Fuzz, ServingPlanReader) {
  const std::string file = path("input.plan");
  expect_clean(fuzz_reader(
      seeds("plan"), {.rng_seed = 25},
      [&](const std::string& input) {
        write_bytes(file, input);
        const auto p = serve::load_plan(file, "fuzz lstm key", serve::Cell::lstm);
        if (p && (p->workers < 1 || p->xi < 1 || p->xj < 1 || p->direction_groups < 1 || p->hoisted_gates > 15))
          broken("with a field out of its range");
      },
      file, file));
}

// The checkpoint of a graph with parameters w [2, 3] and b [3] (tests/fuzz/seeds/checkpoint/), one of its
// files replaced by each input.
class FuzzCheckpoint : public Fuzz {
 protected:
  void SetUp() override {
    Fuzz::SetUp();
    ckpt_ = path("ck/ckpt-000000002");
    fs::create_directories(ckpt_);
    for (const char* name : {"manifest.json", "w.npy", "b.npy"})
      fs::copy_file(std::string(CORUN_FUZZ_SEEDS) + "/checkpoint/" + name, ckpt_ + "/" + name);
    g_.param("w", {2, 3});
    g_.param("b", {3});
  }

  // Replaces `file` of the checkpoint by each input and loads the checkpoint.
  void fuzz_file(const std::string& file, std::vector<std::string> corpus, uint64_t rng_seed) {
    cli::Checkpoints checkpoints(path("ck"));
    const cli::RunIdentity identity = {{"model", "fuzz"}, {"seed", "7"}};
    const std::string target = ckpt_ + "/" + file;
    expect_clean(fuzz_reader(
        corpus, {.rng_seed = rng_seed},
        [&](const std::string& input) {
          write_bytes(target, input);
          const auto s = checkpoints.load_newest(g_, identity);
          if (!s) broken("as no checkpoint at all");
          if (s->iteration != 2 || s->losses.size() != 2 || s->ms.size() != 2) broken("with another iteration");
        },
        path("ck"), target));
  }

  Graph g_;
  std::string ckpt_;
};

TEST_F(FuzzCheckpoint, Manifest) {
  fuzz_file("manifest.json", seeds("checkpoint", ".json"), 26);
}

// A parameter file mutated from either parameter's seed (so wrong shapes come up as well as damaged data).
TEST_F(FuzzCheckpoint, ParameterFile) {
  fuzz_file("w.npy", seeds("checkpoint", ".npy"), 27);
}

}  // namespace
}  // namespace corun::fuzz
