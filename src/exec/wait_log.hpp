// What a thread's collective is waiting for, readable by another thread (the
// watchdog that reports hangs) without locks and without slowing the
// collective: a transport records each message it posts under its request
// number and clears the entry when the message completes. The reader may
// see a moment's inconsistency — it only reads when nothing has moved for
// many seconds — but never freed memory: grown arrays are kept until the
// log dies, and logs live as long as their thread's slot (forever).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace hetcoll {

class WaitLog {
 public:
  struct Entry {
    bool recv;
    int peer;        // rank in the communicator
    int world_peer;  // rank in MPI_COMM_WORLD (-1: unknown)
  };

  // Before a collective: no message outstanding.
  void clear() { n_.store(0, std::memory_order_relaxed); }

  void posted(size_t request, bool recv, int peer, int world_peer) {
    if (request >= cap_) grow(request + 1);
    items_.load(std::memory_order_relaxed)[request].store(encode(recv, peer, world_peer), std::memory_order_relaxed);
    if (request + 1 > n_.load(std::memory_order_relaxed)) n_.store(request + 1, std::memory_order_release);
  }
  void completed(size_t request) {
    if (request < cap_) items_.load(std::memory_order_relaxed)[request].store(0, std::memory_order_relaxed);
  }

  // From another thread: the messages still outstanding (at most `max`).
  std::vector<Entry> outstanding(size_t max) const {
    std::vector<Entry> v;
    // The capacity first: the array read after it is at least that large.
    size_t n = n_.load(std::memory_order_acquire);
    size_t cap = cap_seen_.load(std::memory_order_acquire);
    std::atomic<uint64_t>* items = items_.load(std::memory_order_acquire);
    for (size_t i = 0; i < n && i < cap && v.size() < max; ++i) {
      uint64_t x = items[i].load(std::memory_order_relaxed);
      if (x) v.push_back({bool((x >> 62) & 1), int(uint32_t(x)), int((x >> 32) & 0x3fffffff) - 1});
    }
    return v;
  }

 private:
  static uint64_t encode(bool recv, int peer, int world_peer) {
    return (uint64_t(1) << 63) | (uint64_t(recv) << 62) | (uint64_t(uint32_t(world_peer + 1) & 0x3fffffff) << 32) |
           uint64_t(uint32_t(peer));
  }
  void grow(size_t need) {
    size_t cap = cap_ ? cap_ : 64;
    while (cap < need) cap *= 2;
    std::unique_ptr<std::atomic<uint64_t>[]> next(new std::atomic<uint64_t>[cap]);
    std::atomic<uint64_t>* old = items_.load(std::memory_order_relaxed);
    for (size_t i = 0; i < cap; ++i)
      next[i].store(i < cap_ ? old[i].load(std::memory_order_relaxed) : 0, std::memory_order_relaxed);
    items_.store(next.get(), std::memory_order_release);
    cap_seen_.store(cap, std::memory_order_release);
    arrays_.push_back(std::move(next));  // the old ones stay: a reader may hold them
    cap_ = cap;
  }

  std::atomic<std::atomic<uint64_t>*> items_{nullptr};
  std::atomic<size_t> n_{0}, cap_seen_{0};
  size_t cap_ = 0;  // the writer's view
  std::vector<std::unique_ptr<std::atomic<uint64_t>[]>> arrays_;
};

}  // namespace hetcoll
