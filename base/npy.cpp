// .npy reader/writer. The header is a Python dict literal; we parse only what NumPy writes for a plain
// array ('descr', 'fortran_order', 'shape') and reject everything else with a precise message.
#include <corun/npy.hpp>

#include "base/check.hpp"
#include "base/files.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace corun {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

[[noreturn]] void bad(const std::string& path, const std::string& why) {
  detail::fail(Status::io_error, "'" + path + "' is not a usable .npy file: " + why);
}

// Value of `key` in the header dict, as raw text up to the next top-level ',' or '}'.
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  const std::string quoted1 = "'" + key + "'";
  const std::string quoted2 = "\"" + key + "\"";
  size_t k = header.find(quoted1);
  size_t klen = quoted1.size();
  if (k == std::string::npos) {
    k = header.find(quoted2);
    klen = quoted2.size();
  }
  if (k == std::string::npos) bad(path, "header has no '" + key + "' entry");
  size_t p = header.find(':', k + klen);
  if (p == std::string::npos) bad(path, "malformed header near '" + key + "'");
  ++p;
  int depth = 0;
  size_t e = p;
  for (; e < header.size(); ++e) {
    const char c = header[e];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string v = header.substr(p, e - p);
  const auto first = v.find_first_not_of(" \t");
  const auto last = v.find_last_not_of(" \t");
  return first == std::string::npos ? "" : v.substr(first, last - first + 1);
}

}  // namespace

void save_npy(const std::string& path, const Shape& shape, const float* data) {
  CORUN_CHECK(shape.rank >= 1, Status::invalid_argument, "save_npy '" << path << "': empty shape");
  std::ostringstream dict;
  dict << "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  // NumPy's own spelling: "(5,)" for 1-D, "(2, 3)" otherwise.
  for (int i = 0; i < shape.rank; ++i) dict << shape[i] << (shape.rank == 1 ? "," : i + 1 < shape.rank ? ", " : "");
  dict << "), }";
  std::string header = dict.str();
  // Magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple of 64, '\n' last.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');

  const char version[2] = {1, 0};
  const uint16_t hlen = static_cast<uint16_t>(header.size());
  const char hl[2] = {static_cast<char>(hlen & 0xff), static_cast<char>(hlen >> 8)};
  write_file_atomically(path, {std::string_view(kMagic, 6), std::string_view(version, 2), std::string_view(hl, 2),
                               header,
                               std::string_view(reinterpret_cast<const char*>(data), static_cast<size_t>(shape.numel()) * sizeof(float))});
}

NpyArray load_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  CORUN_CHECK(in.good(), Status::io_error, "cannot open '" << path << "': " << std::strerror(errno));
  char magic[8] = {};
  in.read(magic, 8);
  if (in.gcount() != 8 || std::memcmp(magic, kMagic, 6) != 0) bad(path, "missing the \\x93NUMPY magic string");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t hlen = 0;
  if (major == 1) {
    unsigned char b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    if (in.gcount() != 2) bad(path, "truncated header");
    hlen = b[0] | (b[1] << 8);
  } else if (major == 2 || major == 3) {
    unsigned char b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    if (in.gcount() != 4) bad(path, "truncated header");
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    bad(path, "unsupported format version " + std::to_string(major));
  }
  if (hlen > (1u << 20)) bad(path, "header length " + std::to_string(hlen) + " is implausible");
  std::string header(hlen, '\0');
  in.read(header.data(), hlen);
  if (static_cast<uint32_t>(in.gcount()) != hlen) bad(path, "truncated header");

  std::string descr = dict_value(header, "descr", path);
  if (descr != "'<f4'" && descr != "\"<f4\"")
    bad(path, "dtype " + descr + " is not little-endian float32 ('<f4'); convert with a.astype('<f4')");
  if (dict_value(header, "fortran_order", path) != "False")
    bad(path, "Fortran order is not supported; save np.ascontiguousarray(a)");
  std::string shape_text = dict_value(header, "shape", path);
  if (shape_text.size() < 2 || shape_text.front() != '(' || shape_text.back() != ')') bad(path, "malformed shape " + shape_text);
  std::vector<int64_t> dims;
  std::stringstream ss(shape_text.substr(1, shape_text.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(" \t") == std::string::npos) continue;
    char* end = nullptr;
    const long long d = std::strtoll(item.c_str(), &end, 10);
    if (end == item.c_str() || d <= 0) bad(path, "bad extent '" + item + "' in shape " + shape_text);
    dims.push_back(d);
  }
  if (dims.empty()) dims.push_back(1);  // a NumPy scalar: one element
  if (dims.size() > static_cast<size_t>(kMaxDims))
    bad(path, "shape " + shape_text + " has more than " + std::to_string(kMaxDims) + " dimensions");

  NpyArray a;
  a.shape = Shape::of(dims.data(), static_cast<int>(dims.size()));
  a.data.resize(static_cast<size_t>(a.shape.numel()));
  const auto bytes = static_cast<std::streamsize>(a.data.size() * sizeof(float));
  in.read(reinterpret_cast<char*>(a.data.data()), bytes);
  if (in.gcount() != bytes)
    bad(path, "truncated data: expected " + std::to_string(bytes) + " bytes for shape " + a.shape.str() + ", found " +
                  std::to_string(in.gcount()));
  in.peek();
  if (!in.eof()) bad(path, "trailing bytes after the data of shape " + a.shape.str());
  return a;
}

}  // namespace corun
