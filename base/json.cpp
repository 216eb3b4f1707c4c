// Strict parsing on nlohmann's SAX interface: nlohmann's lexer and parser check the grammar, this handler
// builds the document and adds what nlohmann allows (duplicate member names, unbounded nesting, a byte
// order mark); json_errors.cpp puts nlohmann's error reports into corun's messages.
#include "base/json.hpp"

#include "base/check.hpp"
#include "base/files.hpp"
#include "base/json_errors.hpp"

#include <cmath>
#include <iterator>
#include <memory>
#include <sstream>
#include <unordered_set>

namespace corun::json {

namespace {

// Our files nest 4 levels; 256 is far beyond any legitimate use. nlohmann's parser does not recurse, so
// this bounds memory and the work of hostile input rather than the stack.
constexpr size_t kMaxDepth = 256;
// Objects up to this size are checked for duplicate names by a scan, larger ones through a hash set.
constexpr size_t kScanNames = 16;

// A pointer iterator that publishes how far the parser has read: nlohmann's SAX events carry no positions,
// and a duplicate name or a too deep nesting is reported at the text that caused it.
struct TrackedIterator {
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  const char* p = nullptr;
  const char** consumed = nullptr;

  reference operator*() const { return *p; }
  TrackedIterator& operator++() {
    *consumed = ++p;
    return *this;
  }
  TrackedIterator operator++(int) {
    TrackedIterator old = *this;
    ++*this;
    return old;
  }
  bool operator==(const TrackedIterator& o) const { return p == o.p; }
  bool operator!=(const TrackedIterator& o) const { return p != o.p; }
};

using Members = Value::object_t::Container;

class Builder final : public nlohmann::json_sax<Value> {
 public:
  Builder(std::string_view text, const std::string& source) : text_(text), source_(source), consumed_(text.data()) {}

  void stream(std::string_view key, const ItemCallback& on_item) {
    stream_key_ = key;
    on_item_ = &on_item;
  }

  Value document() {
    // A UTF-8 byte order mark is not JSON (RFC 8259 section 8.1 lets parsers ignore it; we name it instead).
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") fail_at(text_, source_, 0, "a UTF-8 byte order mark is not allowed");
    // An empty file is the commonest bad input (a write that never happened): said in words, where it ends.
    if (text_.find_first_not_of(" \t\r\n") == std::string_view::npos)
      fail_at(text_, source_, text_.size(), "the text is empty");
    const TrackedIterator first{text_.data(), &consumed_};
    const TrackedIterator last{text_.data() + text_.size(), &consumed_};
    CORUN_CHECK(Value::sax_parse(first, last, this), Status::io_error, source_ << ": the JSON parser stopped");
    return std::move(root_);
  }

  bool null() override { return scalar(Value(nullptr)); }
  bool boolean(bool v) override { return scalar(Value(v)); }
  bool number_integer(number_integer_t v) override { return scalar(Value(v)); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(Value(v)); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(Value(v)); }
  bool string(string_t& v) override { return scalar(Value(std::move(v))); }
  bool binary(binary_t&) override { return false; }  // only the binary formats produce these

  bool start_object(std::size_t) override {
    open(Value::object());
    names_.emplace_back();
    return true;
  }

  bool key(string_t& k) override {
    Members& members = *stack_.back()->get_ptr<Value::object_t*>();
    if (members.size() < kScanNames) {
      for (const auto& m : members)
        if (m.first == k) duplicate(k);
    } else {
      std::unique_ptr<std::unordered_set<std::string>>& set = names_.back();
      if (!set) set = std::make_unique<std::unordered_set<std::string>>();
      if (set->empty())
        for (const auto& m : members) set->insert(m.first);
      if (!set->insert(k).second) duplicate(k);
    }
    last_key_ = k;
    members.emplace_back(std::move(k), nullptr);
    member_ = &members.back().second;
    return true;
  }

  bool end_object() override {
    stack_.pop_back();
    names_.pop_back();
    return completed();
  }

  bool start_array(std::size_t) override {
    const bool streamed =
        on_item_ != nullptr && stack_.size() == 1 && stack_[0]->is_object() && last_key_ == stream_key_;
    open(Value::array());
    if (streamed) streamed_ = stack_.back();
    return true;
  }

  bool end_array() override {
    if (stack_.back() == streamed_) streamed_ = nullptr;
    stack_.pop_back();
    return completed();
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    explain_parse_error(text_, source_, position, e.what());
  }

 private:
  // Where a new value goes: the document, the end of the open array, or the member whose name was read last.
  Value* place(Value v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Value& top = *stack_.back();
    if (top.is_array()) {
      top.push_back(std::move(v));
      return &top.back();
    }
    *member_ = std::move(v);
    return member_;
  }

  bool scalar(Value v) {
    place(std::move(v));
    return completed();
  }

  void open(Value container) {
    // consumed_ is just past the '[' or '{' that opened this level.
    if (stack_.size() >= kMaxDepth)
      fail_at(text_, source_, static_cast<size_t>(consumed_ - text_.data()) - 1,
              "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    stack_.push_back(place(std::move(container)));
  }

  // A value was finished: an element of the streamed array is handed over and dropped.
  bool completed() {
    if (streamed_ != nullptr && !stack_.empty() && stack_.back() == streamed_) {
      (*on_item_)(streamed_count_++, streamed_->back());
      streamed_->get_ptr<Value::array_t*>()->pop_back();
    }
    return true;
  }

  [[noreturn]] void duplicate(const std::string& k) {
    // Duplicate names make "which one wins" implementation-defined (RFC 8259 section 4): refuse them.
    fail_at(text_, source_, string_start(text_, static_cast<size_t>(consumed_ - text_.data()) - 1),
            "duplicate member name \"" + k + "\"");
  }

  std::string_view text_;
  const std::string& source_;
  const char* consumed_;
  Value root_;
  std::vector<Value*> stack_;                                            // the open arrays and objects, outermost first
  std::vector<std::unique_ptr<std::unordered_set<std::string>>> names_;  // per open object, once it is large
  Value* member_ = nullptr;                                              // the member whose name was read last
  std::string last_key_;
  std::string_view stream_key_;
  const ItemCallback* on_item_ = nullptr;
  Value* streamed_ = nullptr;
  size_t streamed_count_ = 0;
};

std::string with_article(const Value& v) {
  if (v.is_null()) return "null";
  return std::string(v.is_array() || v.is_object() ? "an " : "a ") + v.type_name();
}

// A prefix name ("'p.json': ") stands for the whole document in messages about it.
std::string shown(const std::string& name) {
  size_t end = name.size();
  while (end > 0 && (name[end - 1] == ' ' || name[end - 1] == ':')) --end;
  return name.substr(0, end);
}

[[noreturn]] void wrong_type(const Node& n, const char* want) {
  detail::fail(Status::io_error, shown(n.name()) + " must be " + want + ", not " + with_article(n.value()));
}

}  // namespace

Value parse(std::string_view text, const std::string& source) {
  return Builder(text, source).document();
}

Value parse_streaming(std::string_view text, const std::string& source, std::string_view key,
                      const ItemCallback& on_item) {
  Builder b(text, source);
  b.stream(key, on_item);
  return b.document();
}

Value parse_file(const std::string& path) {
  return parse(read_file(path), "'" + path + "'");
}

Value parse_file_streaming(const std::string& path, std::string_view key, const ItemCallback& on_item) {
  return parse_streaming(read_file(path), "'" + path + "'", key, on_item);
}

std::string dump(const Value& v, int indent) {
  return v.dump(indent, ' ', false, nlohmann::detail::error_handler_t::replace);
}

Value number(double v) {
  if (!std::isfinite(v)) return nullptr;
  constexpr double kExact = 9007199254740992.0;  // 2^53: every integer up to here is a double
  if (v == std::floor(v) && std::fabs(v) <= kExact && !(v == 0.0 && std::signbit(v))) return static_cast<int64_t>(v);
  return v;
}

bool Node::boolean() const {
  if (!v_->is_boolean()) wrong_type(*this, "a boolean");
  return v_->get<bool>();
}

double Node::number() const {
  if (!v_->is_number()) wrong_type(*this, "a number");
  return v_->get<double>();
}

long Node::integer(long lo, long hi) const {
  const double v = number();
  bool ok = false;
  if (v_->is_number_unsigned())
    ok = hi >= 0 && v_->get<uint64_t>() <= static_cast<uint64_t>(hi) &&
         (lo <= 0 || v_->get<uint64_t>() >= static_cast<uint64_t>(lo));
  else if (v_->is_number_integer())
    ok = v_->get<int64_t>() >= lo && v_->get<int64_t>() <= hi;
  else
    ok = v == std::floor(v) && v >= static_cast<double>(lo) && v <= static_cast<double>(hi);
  CORUN_CHECK(ok, Status::io_error, shown(name_) << " must be an integer in [" << lo << ", " << hi << "], not " << v);
  return v_->is_number_float() ? static_cast<long>(v) : v_->get<long>();
}

const std::string& Node::string() const {
  if (!v_->is_string()) wrong_type(*this, "a string");
  return *v_->get_ptr<const std::string*>();
}

std::vector<Node> Node::items() const {
  if (!v_->is_array()) wrong_type(*this, "an array");
  std::vector<Node> out;
  out.reserve(v_->size());
  for (size_t i = 0; i < v_->size(); ++i) out.emplace_back((*v_)[i], name_ + "[" + std::to_string(i) + "]");
  return out;
}

std::vector<std::pair<std::string, Node>> Node::members() const {
  if (!v_->is_object()) wrong_type(*this, "an object");
  std::vector<std::pair<std::string, Node>> out;
  out.reserve(v_->size());
  for (const auto& [k, v] : v_->items()) out.emplace_back(k, Node(v, member_name(k)));
  return out;
}

std::string Node::member_name(std::string_view key) const {
  return name_ + (name_.empty() || name_.back() == ' ' ? "" : ".") + std::string(key);
}

Node Node::at(std::string_view key) const {
  if (!v_->is_object()) wrong_type(*this, "an object");
  const std::optional<Node> m = find(key);
  CORUN_CHECK(m.has_value(), Status::io_error, shown(name_) << " has no '" << key << "'");
  return *m;
}

std::optional<Node> Node::find(std::string_view key) const {
  if (!v_->is_object()) return std::nullopt;
  for (const auto& m : *v_->get_ptr<const Value::object_t*>())
    if (m.first == key) return Node(m.second, member_name(key));
  return std::nullopt;
}

}  // namespace corun::json
