#include "cli/simulate/machine_file.hpp"

#include "base/check.hpp"
#include "base/json.hpp"

namespace corun::cli::sim {

Machine read_machine(const std::string& path) {
  const json::Value doc = json::parse_file(path);
  const json::Node root(doc, "machine file '" + path + "':");
  CORUN_CHECK(root.at("format").string() == "corun-machine", Status::invalid_argument,
              "machine file '" + path + "': format must be \"corun-machine\" (see machines/*.json)");
  CORUN_CHECK(root.at("version").integer(1, 1000) == 1, Status::invalid_argument,
              "machine file '" + path + "': version must be 1");
  Machine m;
  m.path = path;
  m.name = root.at("name").string();
  CORUN_CHECK(!m.name.empty() && m.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos,
              Status::invalid_argument,
              "machine file '" + path + "': name '" + m.name +
                  "' must be lower-case letters, digits and '-' (it names StarPU's model files)");
  if (auto d = root.find("description")) m.description = d->string();
  // 255 = 128 cores + 127 power-of-two teams: the worker ids of the simgrid build (maxcpus 256).
  m.cores = static_cast<int>(root.at("cores").integer(1, 128));
  m.numa_domains = static_cast<int>(root.at("numa_domains").integer(1, 16));
  CORUN_CHECK(m.cores % m.numa_domains == 0, Status::invalid_argument,
              "machine file '" + path + "': cores (" + std::to_string(m.cores) +
                  ") must be a multiple of numa_domains (" + std::to_string(m.numa_domains) + ")");
  m.domain_bandwidth_gbs = root.at("domain_bandwidth_gbs").number();
  CORUN_CHECK(m.domain_bandwidth_gbs > 0, Status::invalid_argument,
              "machine file '" + path + "': domain_bandwidth_gbs must be > 0 (GB/s of one NUMA domain)");
  m.team_sync_us = root.at("team_sync_us").number();
  CORUN_CHECK(m.team_sync_us >= 0, Status::invalid_argument,
              "machine file '" + path + "': team_sync_us must be >= 0 (µs per doubling of a team)");
  return m;
}

}  // namespace corun::cli::sim
