// hetcoll-probe's progress on stderr (rank 0), and the seconds each phase
// took (the profile's phases).
#pragma once
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "measure/probe/exchange.hpp"

namespace hetcoll::probe {

// Rank 0's progress line on stderr: a bar on a terminal, a line per phase otherwise.
class Progress {
 public:
  explicit Progress(bool on) : on_(on && g_rank == 0), tty_(isatty(2)) {}
  void phase(const std::string& name, double from, double to) {
    const double now = elapsed();
    if (!name_.empty() && name_ != name) {  // the phase just ended
      if (!times.empty() && times.back().first == name_) times.back().second += now - since_;
      else times.emplace_back(name_, now - since_);
    }
    if (name_ != name) since_ = now;
    name_ = name, from_ = from, to_ = to;
    if (on_ && !tty_ && !name.empty()) std::fprintf(stderr, "hetcoll-probe: %-9s (%.1f s)\n", name.c_str(), elapsed());
    update(0);
  }
  void update(double f) {
    if (!on_ || !tty_) return;
    double t = from_ + (to_ - from_) * std::clamp(f, 0.0, 1.0);
    int filled = int(t * 30 + 0.5);
    std::fprintf(stderr, "\rprobe [%s%s] %3d%% %-9s %6.1f s", std::string(size_t(filled), '#').c_str(),
                 std::string(size_t(30 - filled), '.').c_str(), int(t * 100 + 0.5), name_.c_str(), elapsed());
    std::fflush(stderr);
  }
  void done() {
    phase("", 1, 1);
    if (on_ && tty_) std::fprintf(stderr, "\n");
  }
  std::vector<std::pair<std::string, double>> times;  // seconds per phase, in order

 private:
  bool on_, tty_;
  std::string name_;
  double from_ = 0, to_ = 1, since_ = 0;
};

}  // namespace hetcoll::probe
