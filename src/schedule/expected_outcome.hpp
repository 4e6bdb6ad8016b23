// What each collective promises, byte by byte, in rank r's `out` buffer
// (MPI-3 semantics; InterCom Table 1). Used by the validator.
#pragma once
#include <vector>

#include "schedule/collective.hpp"

namespace hetcoll {

struct Expect {
  enum Kind { Data, Untouched, Any } kind = Data;
  uint64_t off = 0, len = 0;  // bytes of `out`
  int lo = 0, hi = 0;         // Data: the combination of ranks lo..hi-1, each once
  uint64_t origin = 0;        // Data: offset of off in the contributors' input
};

// Covers [0, out_bytes(r)) in order; bytes outside the result are Untouched.
std::vector<Expect> expected_outcome(const Collective& c, int r);

}  // namespace hetcoll
