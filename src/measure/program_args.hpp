// Arguments of the measuring MPI programs (hetcoll-tune, hetcoll-bench,
// hetcoll-probe): sizes with a k/M suffix and comma-separated lists,
// checked once here.
// Every rank parses its own copy; a bad argument ends the job on every rank
// alike (fail: rank 0 says why).
#pragma once
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "model/units.hpp"
#include "util/error.hpp"

namespace hetcoll::program {

inline const char*& name() {
  static const char* n = "hetcoll";
  return n;
}

// Ends the program with exit code 2 and one line. Before MPI_Init (a
// --check run) it needs no MPI.
[[noreturn]] inline void fail(const std::string& msg) {
  int initialized = 0, rank = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::fprintf(stderr, "%s: %s\n", name(), msg.c_str());
  if (initialized) MPI_Finalize();
  std::exit(2);
}

// Ends the program with exit code 0 (after --help), with or without MPI.
[[noreturn]] inline void done() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Finalize();
  std::exit(0);
}

// --check among the arguments: the program checks them — and the files it
// would read and write — without MPI, then exits (0, or 2 with one line).
// The command line runs it before it launches anything, so that a bad
// argument is one line, not an mpirun abort after minutes of measuring.
inline bool checking(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--check") return true;
  return false;
}

// That `path` can be written (an existing regular file that is writable,
// or a new name in an existing writable directory), without touching it.
inline void check_writable(const std::string& path, const std::string& what) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(what + " '" + path + "' is a directory: name a file");
    if (::access(path.c_str(), W_OK) != 0) fail(what + " '" + path + "' is not writable");
    return;
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) fail(what + " '" + path + "': no directory '" + dir + "'");
  if (::access(dir.c_str(), W_OK) != 0) fail(what + " '" + path + "': the directory '" + dir + "' is not writable");
}

// A size in the one grammar (model/units.hpp), whole doubles (a multiple
// of 8), within [8 B, max]: refused, not rounded; `what` names the argument.
inline uint64_t parse_size(const std::string& v, const std::string& what, uint64_t max = uint64_t(256) << 20,
                           uint64_t min = 8) {
  try {
    return parse_size_in(v, what, min, max, 8);  // whole doubles: the programs time vectors of MPI_DOUBLE
  } catch (const InputError& e) {
    fail(e.what());
  }
}

// A whole number in [lo, hi], all of `v` (no "5x"): else fail naming `what`.
inline int parse_int(const std::string& v, const std::string& what, int lo, int hi) {
  char* end = nullptr;
  errno = 0;
  const long x = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || errno || x < lo || x > hi)
    fail(what + " '" + v + "': a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
  return int(x);
}

// A number in [lo, hi], all of `v`: else fail with `range` (e.g. "0.1 to 10000").
inline double parse_real(const std::string& v, const std::string& what, double lo, double hi, const std::string& range) {
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end || errno || !(x >= lo && x <= hi)) fail(what + " '" + v + "': a number from " + range);
  return x;
}

// MPI started, this process's rank and the job's size in MPI_COMM_WORLD.
inline void start_mpi(int* argc, char*** argv, int& rank, int& size) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
}

// The arguments after the program's name, one flag at a time, its value on
// request (a flag without one is refused, naming it).
class ArgWalk {
 public:
  ArgWalk(int argc, char** argv) : argc_(argc), argv_(argv) {}
  bool next() {
    if (++i_ >= argc_) return false;
    arg = argv_[i_];
    return true;
  }
  std::string value() {
    if (i_ + 1 >= argc_) fail(arg + " needs a value");
    return argv_[++i_];
  }
  std::string arg;

 private:
  int argc_;
  char** argv_;
  int i_ = 0;
};

// Comma-separated items; commas inside [...] belong to the item (an
// algorithm spec's parameters: "hub_allreduce[hub=0,seg=128k],ring_allreduce").
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> v;
  std::string x;
  int depth = 0;
  for (char ch : s) {
    if (ch == '[') ++depth;
    if (ch == ']' && depth > 0) --depth;
    if (ch == ',' && depth == 0) {
      if (!x.empty()) v.push_back(x);
      x.clear();
    } else {
      x += ch;
    }
  }
  if (!x.empty()) v.push_back(x);
  return v;
}

}  // namespace hetcoll::program
