#include "cli/simulate/history_file.hpp"

#include "base/check.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace corun::cli::sim {

namespace {

constexpr int kFormatVersion = 45;  // _STARPU_PERFMODEL_VERSION of 1.3.10
constexpr unsigned kCpuDevice = 0;  // STARPU_CPU_WORKER in the file's device-type field

// The file's values with its '#' comment lines dropped, read one whitespace-separated token at a time.
class Tokens {
 public:
  Tokens(const std::string& path, std::istream& in) : path_(path) {
    std::string line;
    while (std::getline(in, line)) {
      if (!line.empty() && line[0] == '#') continue;
      text_ << line << '\n';
    }
  }
  double number(const char* what) {
    std::string t;
    CORUN_CHECK(static_cast<bool>(text_ >> t), Status::io_error,
                "performance model '" << path_ << "' ends early: expected " << what);
    if (t == "nan" || t == "-nan") return std::nan("");
    char* end = nullptr;
    const double v = std::strtod(t.c_str(), &end);
    CORUN_CHECK(end != t.c_str() && *end == '\0', Status::io_error,
                "performance model '" << path_ << "': expected " << what << ", found '" << t << "'");
    return v;
  }
  long integer(const char* what, long lo, long hi) {
    const double v = number(what);
    CORUN_CHECK(v == std::floor(v) && v >= lo && v <= hi, Status::io_error,
                "performance model '" << path_ << "': " << what << " must be an integer in [" << lo << ", " << hi
                                      << "], not " << v);
    return static_cast<long>(v);
  }
  std::string word(const char* what) {
    std::string t;
    CORUN_CHECK(static_cast<bool>(text_ >> t), Status::io_error,
                "performance model '" << path_ << "' ends early: expected " << what);
    return t;
  }

 private:
  std::string path_;
  std::stringstream text_;
};

}  // namespace

HistoryModel read_history_file(const std::string& path) {
  std::ifstream in(path);
  CORUN_CHECK(in.good(), Status::io_error, "cannot read performance model '" << path << "'");
  Tokens t(path, in);
  CORUN_CHECK(t.integer("the format version", 0, 1000) == kFormatVersion, Status::io_error,
              "performance model '" << path << "' is not format version " << kFormatVersion << " (StarPU 1.3)");
  HistoryModel model;
  const long ncombs = t.integer("the number of combinations", 0, 1 << 16);
  for (long c = 0; c < ncombs; ++c) {
    const long ndevices = t.integer("the number of device types", 1, 64);
    int width = 0;
    bool cpu = true;
    for (long d = 0; d < ndevices; ++d) {
      cpu = cpu && t.integer("a device type", 0, 16) == kCpuDevice;
      t.integer("a device id", 0, 1 << 20);
      width = static_cast<int>(t.integer("a number of cores", 0, 1 << 20));
    }
    CORUN_CHECK(cpu && ndevices == 1, Status::io_error,
                "performance model '" << path << "' has a non-CPU or multi-device combination; corun writes CPU only");
    const long nimpls = t.integer("the number of implementations", 1, 64);
    for (long impl = 0; impl < nimpls; ++impl) {
      const long nentries = t.integer("the number of entries", 0, 1 << 24);
      for (int i = 0; i < 9; ++i) t.number("the linear regression");
      for (int i = 0; i < 3; ++i) t.number("the non-linear regression");
      CORUN_CHECK(t.integer("the multiple-regression flag", 0, 1 << 20) == 0, Status::io_error,
                  "performance model '" << path << "' is a multiple-regression model; corun's are history models");
      for (long e = 0; e < nentries; ++e) {
        HistoryEntry h;
        const std::string hash = t.word("a footprint");
        char* end = nullptr;
        h.footprint = static_cast<uint32_t>(std::strtoul(hash.c_str(), &end, 16));
        CORUN_CHECK(end != hash.c_str() && *end == '\0', Status::io_error,
                    "performance model '" << path << "': footprint '" << hash << "' is not hexadecimal");
        h.size = static_cast<unsigned long>(t.number("a data size"));
        h.flops = t.number("flops");
        h.mean_us = t.number("a mean");
        h.deviation_us = t.number("a deviation");
        t.number("a sum");
        t.number("a sum of squares");
        h.nsample = static_cast<unsigned>(t.integer("a sample count", 0, 1L << 31));
        if (impl == 0) model.by_width[width].push_back(h);
      }
    }
  }
  return model;
}

namespace {

void append(std::string& out, const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  out += buf;
}

}  // namespace

std::string history_file_text(const HistoryModel& model) {
  std::string out;
  append(out, "##################\n# Performance Model Version\n%d\n\n", kFormatVersion);
  append(out, "####################\n# COMBs\n# number of combinations\n%d\n", static_cast<int>(model.by_width.size()));
  int comb = 0;
  for (const auto& [width, entries] : model.by_width) {
    append(out, "####################\n# COMB_%d\n# number of types devices\n1\n", comb);
    append(out, "####################\n# DEV_0\n# device type (CPU - 0, CUDA - 1, OPENCL - 2, MIC - 3, MPI_MS - 5)\n%u\n",
           kCpuDevice);
    append(out, "####################\n# DEV_0\n# device id \n0\n");
    append(out, "####################\n# DEV_0\n# number of cores \n%d\n", width);
    append(out, "##########\n# number of implementations\n1\n");
    append(out, "#####\n# Model for cpu0_impl0 (Comb%d)\n# number of entries\n%u\n", comb,
           static_cast<unsigned>(entries.size()));
    out += "# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx\n";
    out += "0.000000e+00   \t0.000000e+00   \t0.000000e+00   \t0.000000e+00   \tnan            \tnan            \t0\t0              \t0              \n";
    out += "# a\t\tb\t\tc\nnan            \tnan            \tnan            \n";
    out += "# not multiple-regression-base\n0\n";
    out += "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n";
    for (const HistoryEntry& e : entries) {
      // StarPU keeps sum and sum2 for its running mean and deviation: consistent with mean and deviation.
      const double n = e.nsample;
      const double sum = e.mean_us * n;
      const double sum2 = n * (e.deviation_us * e.deviation_us + e.mean_us * e.mean_us);
      append(out, "%08x\t%-15lu\t%-15e\t%-15e\t%-15e\t%-15e\t%-15e\t%u\n", e.footprint, e.size, e.flops, e.mean_us,
             e.deviation_us, sum, sum2, e.nsample);
    }
    out += "\n";
    ++comb;
  }
  return out;
}

}  // namespace corun::cli::sim
