#include "interpose/watchdog.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "interpose/runtime_config.hpp"
#include "util/error.hpp"

namespace hetcoll::mpi {

namespace {
using Clock = std::chrono::steady_clock;

struct Slot {
  // Written by the owning thread.
  std::atomic<uint64_t> serial{0};
  std::atomic<bool> busy{false};
  std::atomic<const char*> what{""};
  std::atomic<bool> native{false};
  char where[128] = {0};
  WaitLog log;
  // The watchdog's own bookkeeping.
  uint64_t seen_serial = 0;
  Clock::time_point seen_since;
  bool reported = false;
};

struct Slots {
  std::mutex mu;
  std::vector<Slot*> all;  // slots live forever: a thread's slot outlives it
};
Slots& slots() {
  static Slots* s = new Slots;
  return *s;
}

std::string describe_waits(const Slot& s) {
  constexpr size_t kShown = 8;
  std::vector<WaitLog::Entry> v = s.log.outstanding(kShown + 1);
  if (v.empty()) return "it has no message outstanding (it is between steps)";
  std::string out = "it waits";
  for (size_t i = 0; i < v.size() && i < kShown; ++i) {
    const auto& e = v[i];
    out += cat(i ? ", " : " ", e.recv ? "to receive from rank " : "to send to rank ", e.peer);
    if (e.world_peer >= 0 && e.world_peer != e.peer) out += cat(" (world rank ", e.world_peer, ")");
  }
  if (v.size() > kShown) out += ", and more";
  return out;
}

void watch(double timeout) {
  const auto limit = std::chrono::duration<double>(timeout);
  const auto tick = std::chrono::duration<double>(std::min(1.0, std::max(0.02, timeout / 4)));
  for (;;) {
    std::this_thread::sleep_for(tick);
    std::vector<Slot*> all;
    {
      std::lock_guard<std::mutex> lock(slots().mu);
      all = slots().all;
    }
    const Clock::time_point now = Clock::now();
    for (Slot* s : all) {
      // busy first: seeing it set (released by begin) makes the serial read
      // after it at least that call's.
      if (!s->busy.load(std::memory_order_acquire)) continue;
      const uint64_t serial = s->serial.load(std::memory_order_acquire);
      if (serial != s->seen_serial) {
        s->seen_serial = serial;
        s->seen_since = now;
        s->reported = false;
        continue;
      }
      if (s->reported || now - s->seen_since < limit) continue;
      char where[sizeof s->where];
      std::memcpy(where, s->where, sizeof where);
      where[sizeof where - 1] = 0;
      const char* what = s->what.load(std::memory_order_relaxed);
      const bool native = s->native.load(std::memory_order_relaxed);
      std::string waits = native ? std::string() : describe_waits(*s);
      // Still the same call? (Otherwise what was read may be the next one's.)
      if (s->serial.load(std::memory_order_acquire) != serial || !s->busy.load(std::memory_order_acquire)) continue;
      s->reported = true;
      const double waited = std::chrono::duration<double>(now - s->seen_since).count();
      say(cat(what, native ? " (handed to the native MPI)" : "", " on ", where, " has waited ", int(waited + 0.5),
              " s", native ? "" : ": " + waits,
              ". A collective stops like this when its ranks pass different counts, roots or operations, or when a "
              "rank has not made the call (HETCOLL_HANG_TIMEOUT=",
              timeout, " s sets when this is reported)"));
    }
  }
}

Slot& my_slot() {
  thread_local Slot* slot = [] {
    auto* s = new Slot;  // lives forever: the watchdog may be reading it
    std::lock_guard<std::mutex> lock(slots().mu);
    slots().all.push_back(s);
    return s;
  }();
  return *slot;
}
}  // namespace

WaitLog* CallWatch::begin(const char* what, const std::string& where, bool native) {
  const double timeout = config().hang_timeout;
  if (timeout <= 0) return nullptr;
  static std::once_flag started;
  std::call_once(started, [timeout] { std::thread(watch, timeout).detach(); });
  Slot& s = my_slot();
  s.serial.store(s.serial.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  s.what.store(what, std::memory_order_relaxed);
  s.native.store(native, std::memory_order_relaxed);
  const size_t n = std::min(where.size(), sizeof s.where - 1);
  std::memcpy(s.where, where.data(), n);
  s.where[n] = 0;
  s.busy.store(true, std::memory_order_release);
  return &s.log;
}

void CallWatch::end() {
  if (config().hang_timeout <= 0) return;
  my_slot().busy.store(false, std::memory_order_release);
}

}  // namespace hetcoll::mpi
