#include "sched/profiler/profile_file.hpp"

#include "base/check.hpp"
#include "base/parse.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace corun::sched {

namespace {
constexpr const char* kHeader = "# corun profile v1";

std::string config_line(const ProfiledConfig& c) {
  std::ostringstream os;
  os << "config=" << c.layout.str() << " median_ms=" << c.median_ms << " min_ms=" << c.min_ms << " runs=" << c.runs;
  return os.str();
}
}  // namespace

void write_profile(const std::string& path, const Profile& p) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    CORUN_CHECK(out.good(), Status::io_error, "cannot write the profile '" << tmp << "': " << std::strerror(errno));
    out << kHeader << "\n"
        << "machine_key=" << p.machine_key << "\ncpu=" << p.cpu << "\nworkers=" << p.workers << "\nmodel=" << p.model
        << "\nsize=" << p.size << "\nlayout=" << p.layout.str() << "\n";
    for (const auto& c : p.tried) out << config_line(c) << "\n";
    out.flush();
    CORUN_CHECK(out.good(), Status::io_error, "cannot write the profile '" << tmp << "': " << std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    detail::fail(Status::io_error, "cannot write the profile '" + path + "': " + std::strerror(err));
  }
}

Profile read_profile(const std::string& path) {
  std::ifstream in(path);
  CORUN_CHECK(in.good(), Status::io_error,
              "cannot read the profile '" << path << "' (CORUN_PROFILE): " << std::strerror(errno)
                                          << "; create one with `corun profile --model M --size S -o FILE`");
  Profile p;
  std::string line;
  int n = 0;
  bool have_layout = false;
  auto bad = [&](const std::string& why) {
    detail::fail(Status::invalid_config, "profile '" + path + "' line " + std::to_string(n) + ": " + why +
                                             "; regenerate it with `corun profile`");
  };
  while (std::getline(in, line)) {
    ++n;
    if (n == 1) {
      if (line != kHeader) bad("not a corun profile (expected '" + std::string(kHeader) + "')");
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) bad("expected key=value, got '" + line + "'");
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "machine_key") {
      p.machine_key = value;
    } else if (key == "cpu") {
      p.cpu = value;
    } else if (key == "workers") {
      const auto v = parse::integer(value);
      if (!v || *v < 1) bad("workers must be a positive integer, got '" + value + "'");
      p.workers = static_cast<int>(*v);
    } else if (key == "model") {
      p.model = value;
    } else if (key == "size") {
      p.size = value;
    } else if (key == "layout") {
      p.layout = parse_layout(value, "profile '" + path + "' layout");
      have_layout = true;
    } else if (key == "config") {
      std::istringstream fields(value);
      std::string layout, median, min, runs;
      fields >> layout >> median >> min >> runs;
      ProfiledConfig c;
      c.layout = parse_layout(layout, "profile '" + path + "' config");
      auto num = [&](const std::string& field, const char* name) {
        const std::string prefix = std::string(name) + "=";
        if (field.rfind(prefix, 0) != 0) bad("config needs " + prefix + "..., got '" + field + "'");
        const auto v = parse::real(field.substr(prefix.size()));
        if (!v) bad(std::string(name) + " is not a number: '" + field + "'");
        return *v;
      };
      c.median_ms = num(median, "median_ms");
      c.min_ms = num(min, "min_ms");
      c.runs = static_cast<int>(num(runs, "runs"));
      p.tried.push_back(c);
    } else {
      bad("unknown key '" + key + "'");
    }
  }
  if (n == 0) bad("empty file");
  if (!have_layout) bad("no layout= line");
  return p;
}

}  // namespace corun::sched
