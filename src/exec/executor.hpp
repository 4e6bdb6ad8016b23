// The executor: runs one rank's program of a schedule over a Transport.
//
// An op is posted as soon as every op it depends on has completed, in
// program order among those ready at once — the rule the simulator
// predicts with. Receives without dependencies are posted first thing, so
// messages find their buffers. Copies and reductions run at once; sends and
// receives become transport requests. The k-th message between two ranks in
// one direction carries tag k (mod the tag limit): posting out of order
// cannot mismatch messages, and the transport's in-order matching keeps
// consecutive collectives apart.
#pragma once
#include <cstdint>

#include "exec/reduce_kernels.hpp"
#include "exec/transport.hpp"
#include "schedule/schedule.hpp"

namespace hetcoll {

// Memory for the logical buffers of the executing rank.
struct Bindings {
  const void* in = nullptr;
  void* out = nullptr;
  void* tmp = nullptr;  // at least tmp_bytes(rank) bytes
};

// Runs rank `rank`'s ops of `s` (the schedule may hold only that rank's
// program). `reduce` combines `s.coll.elem_size`-byte elements; it may be
// null when the schedule has no reductions. Throws ScheduleError on a
// reduction without a kernel.
void execute(const Schedule& s, int rank, const Bindings& b, ReduceFn reduce, Transport& t);

}  // namespace hetcoll
