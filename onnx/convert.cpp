// The services converters use (onnx/convert.hpp): operands, attributes, results and the error messages
// that name the node, its op_type, the opset and what is supported.
#include "onnx/convert.hpp"

#include "base/check.hpp"
#include "base/files.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>

namespace corun::onnx_import {

int64_t Constant::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t Constant::as_int(size_t i) const {
  const double v = values.at(i);
  constexpr double kMax = 9.2e18;  // below INT64_MAX: the cast is defined; "to the end" stays "to the end"
  if (v >= kMax) return std::numeric_limits<int64_t>::max();
  if (v <= -kMax) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);
}

std::vector<int64_t> Constant::ints() const {
  std::vector<int64_t> out;
  for (size_t i = 0; i < values.size(); ++i) out.push_back(as_int(i));
  return out;
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < dims.size(); ++i) os << (i ? ", " : "") << dims[i];
  os << "]";
  return os.str();
}

namespace {

template <typename T>
void append_raw(const std::string& raw, std::vector<double>& out, const std::string& name) {
  CORUN_CHECK(raw.size() % sizeof(T) == 0, Status::io_error,
              "ONNX tensor '" << name << "': " << raw.size() << " bytes of raw data is not a whole number of elements");
  for (size_t off = 0; off < raw.size(); off += sizeof(T)) {
    T v;
    std::memcpy(&v, raw.data() + off, sizeof(T));
    out.push_back(static_cast<double>(v));
  }
}

// An external-data offset or length: decimal digits only (std::stoll took "12abc" as 12 and threw a
// std::invalid_argument, not a corun::Error, on "abc"), at most 18 of them, so the sum of two never overflows.
long long external_number(const onnx::TensorProto& t, const std::string& key, const std::string& text) {
  const bool digits = !text.empty() && text.size() <= 18 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  CORUN_CHECK(digits, Status::io_error,
              "ONNX tensor '" << t.name() << "': its external data " << key << " '" << text
                              << "' is not a non-negative whole number of bytes (a damaged or hand-edited file)");
  return std::stoll(text);
}

// Where an external-data location may point: a regular file inside the model's folder, as ONNX's own checker
// requires (onnx/checker.cc, resolve_external_data_location). A location was joined to the folder as it was,
// so "../secret.bin", "/etc/passwd" or a symbolic link out of the folder were read and used as weights.
std::string resolve_external_location(const onnx::TensorProto& t, const std::string& base_dir,
                                      const std::string& location) {
  namespace fs = std::filesystem;
  const auto refuse = [&](const std::string& why) {
    throw Error(Status::io_error, "corun: ONNX tensor '" + t.name() + "': its external data location '" + location +
                                      "' " + why + "; external data must be a file in the model's folder ('" +
                                      base_dir + "'), named relative to it (re-export the model, or move the data "
                                      "file next to the .onnx file and name it there)");
  };
  CORUN_CHECK(!base_dir.empty(), Status::io_error,
              "ONNX tensor '" << t.name() << "' (a Constant node's value) is stored as external data, at '"
                              << location
                              << "'; only initializers may be (re-export with the constant inside the model)");
  if (location.find('\0') != std::string::npos) refuse("holds a NUL character");
  const fs::path loc(location);
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory()) refuse("is an absolute path");
  // As ONNX's checker: '..' is refused once the path is normalised ("sub/../w.bin" is "w.bin", inside).
  const fs::path normal = loc.lexically_normal();
  if (!normal.empty() && *normal.begin() == "..") refuse("leaves the model's folder through '..'");
  const fs::path joined = fs::path(base_dir) / loc;
  std::error_code ec;
  const fs::path real = fs::canonical(joined, ec);
  if (ec) return joined.string();  // missing: read_file names it and says where the data belongs
  const fs::path folder = fs::canonical(base_dir, ec);
  const fs::path inside = ec ? fs::path("..") : real.lexically_relative(folder);
  if (inside.empty() || *inside.begin() == "..")
    refuse("is a symbolic link (or passes through one) to '" + real.string() + "', outside the model's folder");
  if (!fs::is_regular_file(real, ec)) refuse("is not a regular file");
  return joined.string();
}

}  // namespace

std::string external_bytes(const onnx::TensorProto& t, const std::string& base_dir) {
  std::string location;
  long long offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    else if (kv.key() == "offset") offset = external_number(t, "offset", kv.value());
    else if (kv.key() == "length") length = external_number(t, "length", kv.value());
  }
  CORUN_CHECK(!location.empty(), Status::io_error,
              "ONNX tensor '" << t.name() << "' is stored as external data without a location");
  const std::string path = resolve_external_location(t, base_dir, location);
  std::string bytes;
  try {
    bytes = read_file(path);
  } catch (const Error& e) {
    throw Error(Status::io_error, "corun: ONNX tensor '" + t.name() + "': its external data file '" + path +
                                      "' cannot be read (" + e.what() +
                                      "); keep the data file next to the .onnx file, or re-export with the "
                                      "weights inside the model");
  }
  const auto size = static_cast<long long>(bytes.size());
  CORUN_CHECK(offset <= size, Status::io_error,
              "ONNX tensor '" << t.name() << "': external data offset " << offset << " is past the end of '" << path
                              << "' (" << size << " bytes; location '" << location << "')");
  const long long len = length < 0 ? size - offset : length;
  CORUN_CHECK(offset + len <= size, Status::io_error,
              "ONNX tensor '" << t.name() << "': external data at offset " << offset << ", length " << len
                              << " runs past the end of '" << path << "' (" << size << " bytes; location '"
                              << location << "'): a truncated data file or a damaged model");
  return bytes.substr(static_cast<size_t>(offset), static_cast<size_t>(len));
}

Constant read_tensor(const onnx::TensorProto& t, const std::string& base_dir) {
  Constant c;
  int64_t count = 1;  // checked before any size is computed from the extents, which could wrap around
  for (int64_t d : t.dims()) {
    CORUN_CHECK(d >= 0, Status::io_error, "ONNX tensor '" << t.name() << "' has a negative extent " << d);
    c.dims.push_back(d);
    CORUN_CHECK(!__builtin_mul_overflow(count, d, &count) && count <= (int64_t{1} << 60), Status::io_error,
                "ONNX tensor '" << t.name() << "' has extents " << dims_text(c.dims)
                                << (t.dims_size() > static_cast<int>(c.dims.size()) ? "..." : "")
                                << " whose element count exceeds 2^60: no file holds it (a damaged file)");
  }
  const std::string raw = t.data_location() == onnx::TensorProto::EXTERNAL ? external_bytes(t, base_dir) : t.raw_data();
  using TP = onnx::TensorProto;
  switch (t.data_type()) {
    case TP::FLOAT:
      if (!raw.empty()) append_raw<float>(raw, c.values, t.name());
      for (float v : t.float_data()) c.values.push_back(v);
      break;
    case TP::DOUBLE:
      if (!raw.empty()) append_raw<double>(raw, c.values, t.name());
      for (double v : t.double_data()) c.values.push_back(v);
      break;
    case TP::INT64:
      c.integer = true;
      if (!raw.empty()) append_raw<int64_t>(raw, c.values, t.name());
      for (int64_t v : t.int64_data()) c.values.push_back(static_cast<double>(v));
      break;
    case TP::INT32:
      c.integer = true;
      if (!raw.empty()) append_raw<int32_t>(raw, c.values, t.name());
      for (int32_t v : t.int32_data()) c.values.push_back(v);
      break;
    case TP::BOOL:
    case TP::UINT8:
    case TP::INT8:
      c.integer = true;
      if (!raw.empty()) append_raw<uint8_t>(raw, c.values, t.name());
      for (int32_t v : t.int32_data()) c.values.push_back(v);
      break;
    default:
      throw Error(Status::invalid_argument, "corun: ONNX tensor '" + t.name() + "' has element type " +
                                                TP::DataType_Name(t.data_type()) +
                                                "; supported: FLOAT, DOUBLE, INT64, INT32, INT8, UINT8, BOOL");
  }
  CORUN_CHECK(static_cast<int64_t>(c.values.size()) == c.numel(), Status::io_error,
              "ONNX tensor '" << t.name() << "' of shape " << dims_text(c.dims) << " holds " << c.values.size()
                              << " values instead of " << c.numel() << " (a truncated or damaged file)");
  return c;
}

void Converter::begin(const onnx::NodeProto& node, const OpRow* row) {
  node_ = &node;
  row_ = row;
}

std::string Converter::value_name(int k) const {
  const std::string& out = node_->output(k);
  return onnx_value_name(out.empty() ? node_->name() : out);
}

int Converter::num_inputs() const {
  int n = node_->input_size();
  while (n > 0 && node_->input(n - 1).empty()) --n;
  return n;
}

bool Converter::has_input(int i) const { return i < node_->input_size() && !node_->input(i).empty(); }

const Entry& Converter::entry(int i) const {
  if (!has_input(i)) unsupported("input " + std::to_string(i) + " is missing");
  const auto it = env_.find(node_->input(i));
  if (it == env_.end())
    unsupported("input '" + node_->input(i) + "' is produced by no earlier node, initializer or graph input "
                "(the nodes must be in topological order)");
  return it->second;
}

Tensor Converter::tensor(int i) {
  const Entry& e0 = entry(i);
  if (e0.tensor.valid()) return e0.tensor;
  Entry& e = env_[node_->input(i)];
  const Constant& c = e.constant;
  if (c.dims.empty() || c.dims.size() > static_cast<size_t>(kMaxDims))
    unsupported("input '" + node_->input(i) + "' is a constant of rank " + std::to_string(c.dims.size()) +
                " used as a tensor operand; corun tensors have 1 to 4 dimensions");
  const Shape shape = Shape::of(c.dims.data(), static_cast<int>(c.dims.size()));
  // A float initializer is a trainable parameter under its ONNX name; a Constant node's value and an
  // integer initializer (indices: never trained) are fixed ones.
  e.tensor = e.is_initializer && !c.integer ? graph_.param(onnx_value_name(node_->input(i)), shape)
                              : graph_.constant(onnx_value_name(node_->input(i)), shape);
  float* dst = graph_.data(e.tensor);
  for (size_t k = 0; k < c.values.size(); ++k) dst[k] = static_cast<float>(c.values[k]);
  return e.tensor;
}

Tensor Converter::operand(int i) {
  const Entry& e = entry(i);
  if (e.tensor.valid() || !e.has_constant || !e.constant.dims.empty()) return tensor(i);
  Entry& scalar = env_[node_->input(i)];
  scalar.constant.dims = {1};  // a scalar broadcasts as a [1] does; every corun tensor has rank 1 or more
  const Tensor t = tensor(i);
  scalar.constant.dims.clear();  // still a scalar for later nodes (a Gather index drops its axis)
  return t;
}

Tensor Converter::state_tensor(int i) {
  const Entry& e0 = entry(i);
  if (e0.tensor.valid()) {
    if (graph_.kind(e0.tensor) == ValueKind::state) return e0.tensor;
    unsupported("input '" + node_->input(i) + "' must be an initializer (running statistics); it is computed, or " +
                "used as a trainable parameter by an earlier node");
  }
  if (!e0.has_constant) unsupported("input '" + node_->input(i) + "' must be an initializer (running statistics)");
  Entry& e = env_[node_->input(i)];
  const Constant& c = e.constant;
  if (c.dims.size() != 1)
    unsupported("input '" + node_->input(i) + "' has shape " + dims_text(c.dims) + "; it must be 1-D");
  e.tensor = graph_.state(onnx_value_name(node_->input(i)), Shape{c.dims[0]});
  float* dst = graph_.data(e.tensor);
  for (size_t k = 0; k < c.values.size(); ++k) dst[k] = static_cast<float>(c.values[k]);
  return e.tensor;
}

Tensor Converter::filled(const Shape& shape, float fill, const std::string& suffix) {
  return graph_.constant(value_name() + "." + suffix, shape, fill);
}

const Constant* Converter::constant(int i) const {
  const Entry& e = entry(i);
  return e.has_constant ? &e.constant : nullptr;
}

const Constant& Converter::require_constant(int i, const char* what) const {
  const Constant* c = constant(i);
  if (!c)
    unsupported(std::string("its ") + what + " (input '" + node_->input(i) +
                "') is computed at run time; only constant " + what + " (initializers, Constant nodes and folded "
                "Shape arithmetic) are supported");
  return *c;
}

bool Converter::foldable(int i) const {
  const Entry& e = entry(i);
  return e.has_constant && !e.tensor.valid() && !(e.is_initializer && !e.constant.integer);
}

std::vector<int64_t> Converter::input_dims(int i) const {
  const Entry& e = entry(i);
  if (e.tensor.valid()) {
    const Shape s = e.tensor.shape();
    return std::vector<int64_t>(s.dims.begin(), s.dims.begin() + s.rank);
  }
  return e.constant.dims;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, const char* name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

bool Converter::has_attr(const char* name) const { return find_attr(*node_, name) != nullptr; }

int64_t Converter::attr_int(const char* name, int64_t fallback) const {
  const auto* a = find_attr(*node_, name);
  return a ? a->i() : fallback;
}

float Converter::attr_float(const char* name, float fallback) const {
  const auto* a = find_attr(*node_, name);
  return a ? a->f() : fallback;
}

std::string Converter::attr_string(const char* name, const std::string& fallback) const {
  const auto* a = find_attr(*node_, name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> Converter::attr_ints(const char* name) const {
  const auto* a = find_attr(*node_, name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

const onnx::TensorProto* Converter::attr_tensor(const char* name) const {
  const auto* a = find_attr(*node_, name);
  return a && a->has_t() ? &a->t() : nullptr;
}

void Converter::only_attrs(std::initializer_list<const char*> known) const {
  for (const auto& a : node_->attribute()) {
    bool ok = false;
    for (const char* k : known) ok = ok || a.name() == k;
    if (!ok) unsupported("attribute '" + a.name() + "' is not supported");
  }
}

void Converter::set_output(int k, Tensor t) {
  if (k >= node_->output_size() || node_->output(k).empty()) return;  // an optional output nobody reads
  env_[node_->output(k)].tensor = t;
}

void Converter::set_output(int k, Constant c) {
  if (k >= node_->output_size() || node_->output(k).empty()) return;
  Entry& e = env_[node_->output(k)];
  e.has_constant = true;
  e.constant = std::move(c);
}

void Converter::alias_output(int k, int input) {
  const Entry e = entry(input);
  if (k >= node_->output_size() || node_->output(k).empty()) return;
  Entry& out = env_[node_->output(k)];
  out = e;
  out.is_initializer = false;  // materialised under the input's own name, if ever
  if (e.is_initializer && !e.constant.integer && !e.tensor.valid()) {
    // Both names must reach one parameter: make it now, under the initializer's name.
    out.tensor = tensor(input);
  }
}

void Converter::untied_output(int k, int input) {
  const Entry e = entry(input);
  if (!e.is_initializer || e.constant.integer) return alias_output(k, input);
  if (k >= node_->output_size() || node_->output(k).empty()) return;
  // torch.onnx.export writes equal initializers (zero biases, the default BatchNorm statistics) once, behind
  // one Identity node per duplicate named after the PyTorch parameter it stands for. Each such name is a
  // parameter (or BatchNorm statistic) of its own, made under that name from the same values when first
  // used: PyTorch trains each one separately. Tied, corun trained one parameter where PyTorch trains several,
  // and a statistic behind an Identity met the parameter its values had been merged with.
  Entry& out = env_[node_->output(k)];
  out.tensor = Tensor{};
  out.has_constant = true;
  out.constant = e.constant;
  out.is_initializer = true;
}

void Converter::unsupported(const std::string& what) const {
  std::ostringstream os;
  os << "corun: ONNX node '" << (node_->name().empty() ? node_->output_size() ? node_->output(0) : "?" : node_->name())
     << "' (op_type " << node_->op_type() << ", opset " << opset_ << "): " << what;
  if (row_) os << "; supported: " << row_->supported;
  throw Error(Status::invalid_argument, os.str());
}

void Converter::unsupported_attr(const char* attr, const std::string& value) const {
  unsupported("attribute " + std::string(attr) + "=" + value + " is not supported");
}

int normalize_axis(const Converter& c, int64_t axis, int rank, const char* what) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    c.unsupported(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(a);
}

}  // namespace corun::onnx_import
