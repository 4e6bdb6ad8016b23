// Planning work, counted: steps of simulation (an event handled, a flow or
// link gone over when the network's links are shared again) and ops built
// into schedules, each op kStepsPerOp steps — about what each costs here
// (some 20 ns a step). The budgets that bound a decision are in these
// steps, not in time, so that every rank and every machine decides alike;
// the meter lets a test hold a whole decision (its phases included) to a
// bound that does not depend on the machine's speed.
#pragma once
#include <cstdint>

namespace hetcoll {

constexpr uint64_t kStepsPerOp = 16;

// Steps done on this thread so far (read it before and after).
inline thread_local uint64_t t_work_steps = 0;

}  // namespace hetcoll
