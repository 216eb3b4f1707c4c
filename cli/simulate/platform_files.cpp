#include "cli/simulate/platform_files.hpp"

#include "base/check.hpp"
#include "base/files.hpp"

#include <filesystem>

namespace corun::cli::sim {

void write_platform_files(const std::string& perf_model_dir, const std::string& key, int cores) {
  const std::filesystem::path bus = std::filesystem::path(perf_model_dir) / "bus";
  std::error_code ec;
  std::filesystem::create_directories(bus, ec);
  CORUN_CHECK(!ec, Status::io_error, "cannot create '" << bus.string() << "': " << ec.message());
  // The layout StarPU itself writes (src/core/perfmodel/perfmodel_bus.c, write_bus_platform_file_content):
  // a task's simulated time is its model's µs times the host speed in flops, so the speed value is arbitrary.
  std::string xml =
      "<?xml version='1.0'?>\n"
      "<!DOCTYPE platform SYSTEM 'http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd'>\n"
      " <platform version=\"4\">\n"
      " <config id=\"General\">\n"
      "   <prop id=\"network/TCP-gamma\" value=\"-1\"></prop>\n"
      "   <prop id=\"network/latency-factor\" value=\"1\"></prop>\n"
      "   <prop id=\"network/bandwidth-factor\" value=\"1\"></prop>\n"
      "   <prop id=\"network/crosstraffic\" value=\"0\"></prop>\n"
      "   <prop id=\"network/weight-S\" value=\"0.0\"></prop>\n"
      " </config>\n"
      " <AS  id=\"AS0\"  routing=\"Full\">\n"
      "   <host id=\"MAIN\" speed=\"1f\"/>\n";
  for (int c = 0; c < cores; ++c) xml += "   <host id=\"CPU" + std::to_string(c) + "\" speed=\"2000000000f\"/>\n";
  xml +=
      "\n   <host id=\"RAM\" speed=\"1f\"/>\n\n"
      "   <link id=\"Host\" bandwidth=\"0.000000Bps\" latency=\"0.000000s\"/>\n\n"
      " </AS>\n"
      " </platform>\n";
  write_file_atomically((bus / (key + ".platform.v4.xml")).string(), xml);
  // One memory node (RAM): a 1x1 matrix; StarPU fills the rest of its STARPU_MAXNODES square with NaN.
  write_file_atomically((bus / (key + ".latency")).string(), "# to 0\t\t\n0.000000e+00\t\n");
  write_file_atomically((bus / (key + ".bandwidth")).string(), "# to 0\t\t\n0.000000e+00\t\n");
}

}  // namespace corun::cli::sim
