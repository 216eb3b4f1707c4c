// Buffers whose contents change only when the engine writes them (Engine::write), never by a task: the
// inputs and parameters of an inference graph (no backward) that no node writes. A training graph registers
// nothing: its parameters change every step, also through the engine's own tasks (run_replicated's update,
// the cross-rank reduction). A kernel may then keep a
// derived form of such a buffer across calls, e.g. the oneDNN convolutions' filters reordered into the
// blocked layout their primitive chose: at batch 1 those reorders were 60% of a ResNet-18 inference
// (6 of 10 ms at 64 px, ONEDNN_VERBOSE), every call reordering the same unchanged weights.
//
// Two convolutions of the same shape share one primitive (the thread's cache is keyed by shape), so the
// derived forms are kept here, per buffer, rather than in the primitive's entry.
//
// The engine registers such a buffer's host pointer when it binds the graph (only on its home node in main
// RAM, where the kernels see that pointer), stamps it anew on every Engine::write, and unregisters it when it
// unbinds the graph or a node that writes it appears. A kernel asks for the stamp of the pointer it was given
// and redoes its derived form when the stamp differs from the one it derived it at. A pointer not registered
// (a value some task writes, a NUMA replica's copy, the inline runner's buffers) has no stamp: no caching.
// Each registration gets a new id, so a freed and reused address never matches an old stamp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace corun::codelets {

struct BufferStamp {
  uint64_t id = 0;       ///< 0: not registered
  uint64_t version = 0;  ///< bumped by every write through the engine
  bool valid() const { return id != 0; }
  bool operator==(const BufferStamp& o) const { return id == o.id && version == o.version; }
  bool operator!=(const BufferStamp& o) const { return !(*this == o); }
};

/// Registers `data` as written only through the engine (a new id; an address registered already gets a new id).
void register_stable_buffer(const float* data);
/// Forgets `data` (no-op if it is not registered).
void unregister_stable_buffer(const float* data);
/// A write through the engine changed `data`'s contents (no-op if it is not registered).
void stamp_stable_buffer(const float* data);
/// The current stamp of `data`; invalid (id 0) when it is not registered.
BufferStamp stable_buffer_stamp(const float* data);

/// The object derived from `data` under `key` (e.g. its filters reordered for one primitive), shared by every
/// thread: made by `make` on first use and again after a write stamped `data` anew; nullptr (and `make` not
/// called) when `data` is not registered. `make` runs under the registry's lock, so one thread makes it while
/// the others wait; a registration, a write or an unregistration drops the buffer's derived objects (a
/// caller's shared_ptr keeps its own alive).
std::shared_ptr<void> stable_buffer_derived(const float* data, const std::string& key,
                                            const std::function<std::shared_ptr<void>()>& make);

}  // namespace corun::codelets
