#include "interpose/tls.hpp"
#include "interpose/watchdog.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "interpose/runtime.hpp"
#include "util/error.hpp"

namespace hetcoll::mpi {

namespace {
using Clock = std::chrono::steady_clock;

}  // namespace

struct WatchSlot {
  // Written by the owning thread.
  std::atomic<uint64_t> serial{0};
  std::atomic<bool> busy{false};
  std::atomic<const char*> what{""};
  std::atomic<bool> native{false};
  std::atomic<const std::string*> where{nullptr};
  WaitLog log;
  std::atomic<const WaitLog*> shown{nullptr};  // another log to describe (a non-blocking collective's)
  // The watchdog's own bookkeeping.
  uint64_t seen_serial = 0;
  Clock::time_point seen_since;
  bool reported = false;
};

namespace {
using Slot = WatchSlot;

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
  const WaitLog* shown = s.shown.load(std::memory_order_acquire);
  std::vector<WaitLog::Entry> v = (shown ? *shown : s.log).outstanding(kShown + 1);
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
      std::string where, waits;
      const char* what;
      bool native;
      {
        // Still the same call, and nobody frees its description meanwhile.
        std::lock_guard<std::mutex> lock(watch_lock());
        if (!s->busy.load(std::memory_order_acquire) || s->serial.load(std::memory_order_acquire) != serial) continue;
        const std::string* w = s->where.load(std::memory_order_acquire);
        where = w ? *w : std::string("its communicator");
        what = s->what.load(std::memory_order_relaxed);
        native = s->native.load(std::memory_order_relaxed);
        if (!native) waits = describe_waits(*s);
      }
      s->reported = true;
      const double waited = std::chrono::duration<double>(now - s->seen_since).count();
      say(cat(what, native ? " (handed to the native MPI)" : "", " on ", where, " has waited ", int(waited + 0.5),
              " s", native ? "" : ": " + waits,
              ". Either it is stuck — its ranks passed different counts, roots or operations, or a rank has not "
              "made the call — or it is slow: a large call over a slow network, or a forced setting of very many "
              "pieces, still moving (HETCOLL_HANG_TIMEOUT=",
              timeout, " s sets when this is reported)"));
    }
  }
}

Slot& my_slot() {
  HETCOLL_TLS Slot* slot = [] {
    auto* s = new Slot;  // lives forever: the watchdog may be reading it
    std::lock_guard<std::mutex> lock(slots().mu);
    slots().all.push_back(s);
    return s;
  }();
  return *slot;
}

}  // namespace

// Hang reports on (HETCOLL_HANG_TIMEOUT > 0)? Read once.
bool hang_reports_on() {
#ifdef HETCOLL_SMPI
  // Simulated time is not wall time, and SimGrid reports a stalled
  // simulation itself (testbed/smpi/run fails on it): no watchdog thread.
  return false;
#endif
  static const bool on = runtime().settings.hang_timeout > 0;
  return on;
}

namespace {
void start_watchdog() {
  static std::atomic<bool> started{false};
  if (started.load(std::memory_order_acquire)) return;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  if (!started.load(std::memory_order_relaxed)) {
    std::thread(watch, runtime().settings.hang_timeout).detach();
    started.store(true, std::memory_order_release);
  }
}
}  // namespace

std::mutex& watch_lock() {
  static std::mutex* m = new std::mutex;  // lives until exit: the watchdog may hold it
  return *m;
}

WatchedCall::WatchedCall(const char* what, const std::string* where, bool native) {
  if (!hang_reports_on()) return;
  start_watchdog();
  Slot& s = my_slot();
  slot_ = &s;
  s.serial.store(s.serial.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  s.what.store(what, std::memory_order_relaxed);
  s.native.store(native, std::memory_order_relaxed);
  s.where.store(where, std::memory_order_relaxed);
  s.shown.store(nullptr, std::memory_order_relaxed);
  s.busy.store(true, std::memory_order_release);
  log = &s.log;
}

void WatchedCall::rename(const std::string* where) {
  if (slot_) slot_->where.store(where, std::memory_order_release);
}

void WatchedCall::show(const char* what, const std::string* where, const WaitLog* shown) {
  if (!slot_) return;
  // No lock: whoever frees what the old values point to takes watch_lock()
  // to do it (comm_state.cpp, Pending's destructor), after this.
  slot_->what.store(what, std::memory_order_relaxed);
  slot_->where.store(where, std::memory_order_release);
  slot_->shown.store(shown, std::memory_order_release);
}

WatchedCall::~WatchedCall() {
  if (!slot_) return;
  slot_->shown.store(nullptr, std::memory_order_relaxed);
  slot_->busy.store(false, std::memory_order_release);
}

}  // namespace hetcoll::mpi
