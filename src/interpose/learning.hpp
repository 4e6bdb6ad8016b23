// The call path's step "choose what runs" under HETCOLL_LEARN (docs/learning.md):
// between deciding (compile.hpp) and starting, a blocking call of a site —
// the communicator's calls of one representative call (collective, size
// class, root, element) — runs what the site's rule (plan/learning.hpp)
// names: the planner's decision, the native MPI or one of the model's next
// candidates, and is timed; every so many calls the ranks exchange their
// sums (MPI_Allreduce, MPI_MAX, on the private duplicate), and the rule
// moves on agreed data only: every rank runs the same candidate at every
// call.
//
// Non-blocking and persistent calls are not timed (the application's work
// between start and completion is in their time): they run the best the
// blocking calls of their site have measured so far, the decision before
// that. A persistent call keeps what it was initialized with.
#pragma once
#include <memory>

#include "interpose/call.hpp"
#include "interpose/comm_state.hpp"

namespace hetcoll::mpi {

// The program this call runs: `decided` (the planner's), or a learned
// candidate's (a Compiled with `native` for the native MPI). A blocking call
// is timed from here to after_blocking_call(). Under the state's lock.
std::shared_ptr<const Compiled> learned_for(CommState& st, const std::shared_ptr<const Compiled>& decided,
                                            const Collective& coll, Form form, const char* name);

// Around every blocking collective the MPI wrappers make (pmpi_collectives.cpp),
// native or not: only inside one is a blocking call learned (the C API's
// hetcoll_* calls are not: they never hand a call to the native MPI). Its
// end records the call's time on this rank when learned_for timed it, and
// makes the site's exchange when the rule asks for one. An exchange that
// fails is said once and ends learning on the communicator.
class LearningScope {
 public:
  LearningScope() noexcept;
  ~LearningScope();
  LearningScope(const LearningScope&) = delete;
  LearningScope& operator=(const LearningScope&) = delete;
};

// HETCOLL_LEARN_SAVE, at MPI_Finalize (before PMPI_Finalize): on world
// rank 0, the profile the job planned on with what MPI_COMM_WORLD's sites
// settled on merged in as measured decisions for the job's layout
// (model/tuned_decisions.hpp), written to the file the setting names. Every
// rank's sites hold the same agreed sums, so rank 0 alone writes, without
// a message. What it cannot write (no profile, a profile changed on disk,
// ranks on hosts the profile lacks, a file it cannot replace) it says, once.
void save_learned() noexcept;

}  // namespace hetcoll::mpi
