// Schedule-to-schedule passes: the same collective, executed better. Each
// pass keeps what every rank ends with (the validator checks the result like
// any generated schedule) and only removes waiting.
#pragma once
#include "schedule/schedule.hpp"

namespace hetcoll {

// Input forwarding. Many algorithms first copy a rank's own contribution
// from `in` into `out` (or tmp) and then send it from there, so the send
// waits for the copy — and, on shared memory, a send out of a buffer that is
// receiving at the same time runs at half speed (measured with Open MPI's
// vader transport: 2x for 256 KiB). When the collective is not in place,
// `in` is never written, so such a send can read the same bytes from `in`
// directly: its dependency on the copy goes, and so do the write-after-read
// dependencies that later writers of the copied region had on the send
// (they inherit the send's other dependencies, so no other order is lost).
//
// A send is forwarded when a copy from `in` it depends on covers the bytes
// it sends and no op between them in program order writes those bytes.
// In-place schedules are returned unchanged.
// `forwarded` (if given) receives the number of sends rewritten.
Schedule forward_input_copies(const Schedule& s, size_t* forwarded = nullptr);

// Receiving into the accumulator. A reduction usually starts as
//   copy W = in;  recv T from child;  reduce W ⊕= T
// which moves the input once more than needed. Since every reduction hetcoll
// runs is commutative bit for bit (exec/reduce_kernels), the same result
// comes from
//   recv W from child;  reduce W ⊕= in
// (the validator treats a⊕b and b⊕a as the same value). Applies when the
// schedule is not in place, the reduction is the first op to touch W after
// a copy of the input covering it, the receive is T's last writer, T is
// scratch (tmp) and nothing but the reduction reads what the receive
// brought. The copy stays
// (the executor drops copies whose bytes are all overwritten).
Schedule receive_into_accumulators(const Schedule& s, size_t* rewritten = nullptr);

// What the MPI layer runs: forward_input_copies, then
// receive_into_accumulators.
struct PassStats {
  size_t forwarded = 0, received_in_place = 0;
};
Schedule optimize_for_execution(const Schedule& s, PassStats* stats = nullptr);

}  // namespace hetcoll
