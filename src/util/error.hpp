// Errors raised by the core. Every message is one readable line: the CLI
// prints it and exits 2, the bindings turn it into ValueError, the PMPI layer
// falls back to the native collective.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

namespace hetcoll {

// Bad input from a user: a malformed model spec, an unknown algorithm, a
// schedule file that does not parse.
class InputError : public std::invalid_argument {
 public:
  explicit InputError(const std::string& what) : std::invalid_argument(what) {}
};

// A schedule that is not correct (unmatched messages, deadlock, wrong data).
class ScheduleError : public std::runtime_error {
 public:
  explicit ScheduleError(const std::string& what) : std::runtime_error(what) {}
};

// A schedule would exceed the op budget a caller set (the planner, so that
// it never simulates an absurdly large candidate).
class TooLarge : public std::runtime_error {
 public:
  explicit TooLarge(const std::string& what) : std::runtime_error(what) {}
};

template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

}  // namespace hetcoll
