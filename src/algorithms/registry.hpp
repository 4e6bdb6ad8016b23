// The algorithm registry: every generator, registered once, with the facts a
// user (and the docs) need. Tests iterate over it; the planner chooses from it.
//
// An algorithm is named by a spec: "name" or "name[key=value,...]", e.g.
// "alpha_partition[alpha=0.58]".
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/cost_terms.hpp"
#include "model/machine_model.hpp"
#include "schedule/schedule.hpp"
#include "sim/rounds.hpp"

namespace hetcoll {

using Params = std::map<std::string, std::string>;

// The parameters an algorithm accepts, with their kind and legal values,
// declared once: overrides, --algorithm and generate() check against them
// before anything is built, so a bad value is one clear error at parse time.
enum class ParamKind {
  integer,  // a whole number in [lo, hi]
  real,     // a number in [lo, hi] (or (lo, hi) where open)
  bytes,    // a size with k/M/G suffixes in [lo, hi]
  mesh,     // a logical mesh DxDx..:STRATEGY; its fit to the group is checked when built
};
struct ParamSpec {
  std::string name;
  ParamKind kind = ParamKind::integer;
  double lo = 0, hi = 0;
  bool open = false;  // real: lo < v < hi instead of lo <= v <= hi
  std::string doc;
};

// A phase of a composite algorithm (hierarchical): which algorithm runs it,
// with its time on its own and its messages.
struct PhaseChoice {
  std::string spec;
  double time = 0;
  uint64_t messages = 0;
};
// Who picks a phase's algorithm: the planner (plan/phase_choice.hpp), given
// to generation, so that one decision point chooses every algorithm —
// composites never simulate on their own.
class PhaseChooser {
 public:
  virtual ~PhaseChooser() = default;
  // The algorithm for `sub` on the group's model `gm`, among the registry's
  // non-composite ones. Deterministic: a function of (sub, gm) alone.
  virtual PhaseChoice choose(const Collective& sub, const MachineModel& gm) const = 0;
};

struct GenContext {
  const Collective& coll;
  const MachineModel& model;
  const Params& params;
  int only_rank = -1;  // >= 0: build only this rank's program
  size_t op_limit = 0;  // > 0: throw TooLarge beyond this many ops
  const PhaseChooser* phases = nullptr;  // composites: who picks each phase's algorithm
};

using Generator = Schedule (*)(const GenContext&);

// Ranks past which a decision on a model with a network simulates less
// (plan/planner.hpp: kNetworkBudgetFactor) and prices more without
// simulating: estimates whose error grows with the ranks count as rough
// past it.
constexpr int kNetworkBudgetRanks = 256;

// The exact time on a Hockney model of the schedule that generate() builds
// for this call, when the algorithm can state it (typically: equal blocks);
// nullopt otherwise. Tests hold every closed form to the simulator.
using ClosedForm = std::optional<Terms> (*)(const GenContext&, const HockneyParams&);

// The schedule as rounds of rank arithmetic (sim/rounds.hpp), for pricing
// it on any model without building it: the same messages, bytes and
// combines, round by round, as generate() builds for this call. Empty: the
// call is not one the rounds describe (uneven blocks of alltoallv, say).
using RoundsOf = std::vector<Round> (*)(const GenContext&);

// The parameter settings the planner tries, as specs ("knomial_bcast[k=4]").
using Variants = std::vector<std::string> (*)(const Collective&, const MachineModel&);

struct Algorithm {
  Algorithm() = default;
  // What a generator file's `Algorithm x_algorithm()` states: the
  // collectives it implements and its code; the rest set after. Its name
  // and text are its row of algorithms/all.def.
  Algorithm(std::vector<CollOp> ops_, Generator generate_, ClosedForm closed_form_ = nullptr,
            RoundsOf rounds_ = nullptr)
      : ops(std::move(ops_)), generate(generate_), closed_form(closed_form_), rounds(rounds_) {}
  std::string name;
  std::vector<CollOp> ops;   // collectives it implements
  std::string description;   // one line: what it does
  std::string steps;         // number of communication steps
  std::string bytes;         // bytes on the wire per rank (m = message bytes)
  std::string cost;          // closed-form cost where the source gives one
  std::string source;        // paper and section
  std::vector<ParamSpec> params;    // accepted parameters
  bool rank_consistent = true;      // allreduce: identical result bits on every rank
  // Collectives for which a schedule built for MPI_IN_PLACE (the builder
  // orders accesses to the shared bytes) would deadlock or be wrong: an
  // in-place call copies the input aside and runs the ordinary schedule
  // (tests/algorithms/test_in_place.cpp holds this list to the validator).
  std::vector<CollOp> copy_in_place;
  // A rank's program needs only that rank's own counts (gatherv, scatterv,
  // alltoallv, where MPI gives no rank all of them).
  bool local_counts = false;
  // Composes other algorithms (hierarchical): its phases choose among the
  // non-composite ones, never among composites.
  bool composite = false;
  Generator generate = nullptr;
  ClosedForm closed_form = nullptr;
  // An approximate cost (e.g. uneven pieces taken as fractions) used only
  // to pick which of many variants to simulate.
  ClosedForm estimate = nullptr;
  // Regular schedules (rings, recursive doubling, pairwise, chains): their
  // rounds, priced by price_rounds on the model itself — topology, per-pair
  // costs and all — where a schedule is too large to simulate. Tests hold
  // the price to the simulator (tests/plan/test_rounds.cpp).
  RoundsOf rounds = nullptr;
  Variants variants = nullptr;
  // False when, on this model, the algorithm builds the same schedule as
  // another entry (the λ-tree when λ = 1 is the binomial tree): the planner
  // skips it. nullptr: always worth evaluating.
  bool (*distinct)(const Collective&, const MachineModel&) = nullptr;

  bool supports(CollOp op) const;
};

const std::vector<Algorithm>& registry();
// Throws InputError naming the valid algorithms (for `op` if given).
const Algorithm& find_algorithm(const std::string& name);
std::vector<const Algorithm*> algorithms_for(CollOp op);

struct AlgorithmSpec {
  std::string name;
  Params params;
  std::string str() const;  // canonical "name[k=v,...]"
};
AlgorithmSpec parse_algorithm_spec(const std::string& spec);

// The largest schedule (ops, all ranks) the planner builds to evaluate a
// candidate or to check an override: beyond it, the candidate is skipped
// and the override not followed.
constexpr size_t kMaxScheduleOps = 4000000;

// An algorithm with checked parameters: what a spec names once parsed.
struct AlgorithmChoice {
  const Algorithm* algorithm = nullptr;
  Params params;
  std::string spec() const;  // canonical "name[k=v,...]"
};
// Parses and checks a spec: the name is registered (for `op`, if given),
// every parameter is declared and its value legal. Throws InputError.
AlgorithmChoice choose_algorithm(const std::string& spec, std::optional<CollOp> op = std::nullopt);
// Throws InputError naming the parameter and what it accepts.
void check_params(const Algorithm& a, const Params& params);

// Throws InputError when `model` describes fewer ranks than `coll` has (a
// model of particular ranks or hosts): no algorithm can run the call on it.
void check_model_fits(const Collective& coll, const MachineModel& model);

// Builds the schedule of an algorithm for `coll` on `model`. Collectives
// that move no data (all counts zero, barrier excepted) get an empty
// schedule. op_limit > 0: throw TooLarge beyond that many ops. A composite
// algorithm needs `phases` (the planner's: plan/phase_choice.hpp; plan/build_schedule.hpp's
// build_schedule() passes it); without it, an InputError says so.
Schedule generate(const AlgorithmChoice& choice, const Collective& coll, const MachineModel& model, int only_rank = -1,
                  size_t op_limit = 0, const PhaseChooser* phases = nullptr);
Schedule generate(const std::string& spec, const Collective& coll, const MachineModel& model, int only_rank = -1,
                  size_t op_limit = 0, const PhaseChooser* phases = nullptr);

// A collective that moves no data (all counts zero; barrier excepted).
bool moves_no_data(const Collective& c);

// Parameter values for generators: generate() has checked them against the
// algorithm's ParamSpecs, so these only convert.
double param_real(const GenContext& ctx, const char* key, double fallback);
int param_int(const GenContext& ctx, const char* key, int fallback);
uint64_t param_bytes(const GenContext& ctx, const char* key, uint64_t fallback);

// The one rule for when closed forms apply: a Hockney model that counts no
// copy time and lets receives overlap local work (what the formulas assume).
// The model as Hockney parameters then, else nullopt.
std::optional<HockneyParams> closed_form_model(const MachineModel& model);
// The closed form of a checked choice for this call, if it has one there.
std::optional<Terms> closed_form(const AlgorithmChoice& choice, const Collective& coll, const MachineModel& model);
std::optional<Terms> closed_form(const std::string& spec, const Collective& coll, const MachineModel& model);

}  // namespace hetcoll
