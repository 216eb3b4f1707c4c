// stable_buffers.hpp has the why.
#include "codelets/stable_buffers.hpp"

#include <mutex>
#include <unordered_map>

namespace corun::codelets {
namespace {

struct Entry {
  BufferStamp stamp;
  std::unordered_map<std::string, std::shared_ptr<void>> derived;  // valid at `stamp`
};

struct Registry {
  std::mutex mutex;
  std::unordered_map<const float*, Entry> buffers;
  uint64_t next_id = 1;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void register_stable_buffer(const float* data) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  Entry& e = r.buffers[data];
  e.stamp = BufferStamp{r.next_id++, 0};
  e.derived.clear();
}

void unregister_stable_buffer(const float* data) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.buffers.erase(data);
}

void stamp_stable_buffer(const float* data) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.buffers.find(data);
  if (it == r.buffers.end()) return;
  ++it->second.stamp.version;
  it->second.derived.clear();
}

BufferStamp stable_buffer_stamp(const float* data) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.buffers.find(data);
  return it == r.buffers.end() ? BufferStamp{} : it->second.stamp;
}

std::shared_ptr<void> stable_buffer_derived(const float* data, const std::string& key,
                                            const std::function<std::shared_ptr<void>()>& make) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.buffers.find(data);
  if (it == r.buffers.end()) return nullptr;
  std::shared_ptr<void>& d = it->second.derived[key];
  if (!d) d = make();
  return d;
}

}  // namespace corun::codelets
