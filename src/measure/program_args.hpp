// Arguments of the measuring MPI programs (hetcoll-tune, hetcoll-bench):
// sizes with a k/M suffix and comma-separated lists, checked once here.
// Every rank parses its own copy; a bad argument ends the job on every rank
// alike (fail: rank 0 says why).
#pragma once
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace hetcoll::program {

inline const char*& name() {
  static const char* n = "hetcoll";
  return n;
}

[[noreturn]] inline void fail(const std::string& msg) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) std::fprintf(stderr, "%s: %s\n", name(), msg.c_str());
  MPI_Finalize();
  std::exit(2);
}

// "64k", "1M", "4096" (bytes, B optional) → bytes, whole doubles (a
// multiple of 8), within [8 B, max]; `what` names the argument in the error.
inline uint64_t parse_size(const std::string& v, const std::string& what, uint64_t max = uint64_t(256) << 20) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  const std::string u = end ? end : "";
  const double f = u.empty() || u == "B" ? 1 : (u == "k" || u == "K") ? 1024 : (u == "m" || u == "M") ? 1048576 : -1;
  if (end == v.c_str() || f < 0 || !(x * f >= 8) || x * f > double(max))
    fail(what + " '" + v + "': a size from 8 B to " + std::to_string(max >> 20) + "M (e.g. 64k, 1M)");
  return uint64_t(x * f) / 8 * 8;
}

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
