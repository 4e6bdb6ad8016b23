// A monotone priority queue (radix heap) for simulated time: keys never go
// below the last key popped, which holds for a discrete-event simulator with
// non-negative durations. Items with equal keys come out together in
// unspecified order; the simulator treats one instant as a whole, so that
// order does not matter. Amortised O(log range) with sequential memory
// access, much faster than a binary heap for millions of events.
#pragma once
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace hetcoll {

class RadixHeap {
 public:
  // Non-negative doubles order like their bit patterns as unsigned integers.
  static uint64_t key_of(double t) {
    t += 0.0;  // -0.0 → +0.0
    uint64_t k;
    std::memcpy(&k, &t, sizeof k);
    return k;
  }
  static double time_of(uint64_t k) {
    double t;
    std::memcpy(&t, &k, sizeof t);
    return t;
  }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  void push(double t, uint64_t value) {
    uint64_t k = key_of(t);
    buckets_[bucket(k)].emplace_back(k, value);
    ++size_;
  }

  // Are there items at the time of the last pop? (Pushing at that time is
  // allowed; peeking further ahead is not offered, because it would move the
  // floor past the current time.)
  bool has_now() const { return !buckets_[0].empty(); }

  // Pops one item with the smallest key.
  std::pair<double, uint64_t> pop() {
    settle();
    auto item = buckets_[0].back();
    buckets_[0].pop_back();
    --size_;
    return {time_of(item.first), item.second};
  }

 private:
  size_t bucket(uint64_t k) const { return k == last_ ? 0 : size_t(64 - __builtin_clzll(k ^ last_)); }

  void settle() {
    if (!buckets_[0].empty()) return;
    size_t i = 1;
    while (buckets_[i].empty()) ++i;
    uint64_t lo = buckets_[i][0].first;
    for (auto& it : buckets_[i]) lo = it.first < lo ? it.first : lo;
    last_ = lo;
    for (auto& it : buckets_[i]) buckets_[bucket(it.first)].push_back(it);
    buckets_[i].clear();
  }

  std::vector<std::pair<uint64_t, uint64_t>> buckets_[65];
  uint64_t last_ = 0;
  size_t size_ = 0;
};

}  // namespace hetcoll
