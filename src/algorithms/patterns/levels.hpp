// The levels of a group on a machine with structure (ranks on
// hosts, hosts in subnets; model/topology.hpp), and phases — a collective
// on one level's groups, its algorithm chosen by the model — composed into
// one schedule.
//
// ECO §4-5: an operation runs among subnets (one representative each,
// rooted at the originator's subnet), then inside each subnet; hetcoll adds
// the level inside each host (shared memory). The algorithm of each phase
// is the fastest non-composite one for that phase's group on the group's
// model, by the planner (GenContext::phases, plan/phase_choice.hpp): not a
// fixed degree or pattern.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "algorithms/registry.hpp"
#include "schedule/builder.hpp"

namespace hetcoll {

struct Levels {
  // Each group lists schedule ranks, its leader first, the others in rank
  // order — or, where the topology has the probe's ring, subnets' hosts and
  // the top along the ring from the root's host. hosts: every host's ranks;
  // subnets: every subnet's host leaders; top: the subnet leaders. The root
  // (rank 0 for rootless operations) leads its host, its subnet and the top.
  std::vector<std::vector<int>> hosts, subnets;
  std::vector<int> top;
  // With `alike`: per host (subnet) group, the index of the first host
  // (subnet) group whose ranks see the same costs (cost_fingerprint): its
  // phases' algorithms decide theirs, so identical groups are planned once,
  // and every rank, whichever groups it is in, picks the same decider.
  std::vector<size_t> host_like, subnet_like;
  bool trivial() const;  // one level has all the ranks: nothing to compose
  // The group that decides g's algorithm: its like when g is one of hosts
  // or subnets and the likes were computed, else g.
  const std::vector<int>& like(const std::vector<int>& g) const;
};

// From the model's topology (no topology: every rank its own host, one
// subnet); `alike` also finds which groups are alike (host_like, subnet_like).
Levels levels_of(const MachineModel& m, int nranks, int root, bool alike = false);

// A digest of what a group's ranks cost on m, in group order: per rank its
// reduce and copy times, per ordered pair the message costs at a few sizes
// and the route's links (renumbered, with bandwidths). Equal for groups
// alike in every respect the simulator uses.
uint64_t cost_fingerprint(const MachineModel& m, const std::vector<int>& group);
// For each group, the index of the first group of its size and fingerprint
// (groups of one rank run nothing: each its own): Levels' host_like and
// subnet_like.
std::vector<size_t> alike_groups(const MachineModel& m, const std::vector<std::vector<int>>& groups);

// The ranks in level order: the top's subnets in turn, each subnet's hosts
// in turn, each host's ranks (leaders first). Blocks laid out this way are
// contiguous per subnet and per host; the root comes first.
std::vector<int> level_order(const Levels& L);

// `gen`'s schedule for the call with the ranks renumbered in level order
// (rank k of the generated schedule is level_order[k]), for vector
// collectives whose buffers are alike on every rank (bcast, allreduce): the
// params' levels=1, which this removes, named in the schedule.
Schedule in_level_order(const GenContext& ctx, Generator gen);

// The phase's choice (ctx.phases: the planner's) for `sub` on group
// `decider` of ctx.model, with its time on its own and its messages.
PhaseChoice phase_choice(const GenContext& ctx, const std::vector<int>& decider, const Collective& sub);

// Runs `sub` on the ranks of `group` (sub-rank k is group[k]) with the
// algorithm ctx.phases picks on the group's view of ctx.model, appending
// its ops to b; `map` places the sub-collective's in/out slices of sub-rank
// k in the parent's buffers (tmp slices get fresh scratch). Returns the
// chosen algorithm. A group of one rank runs nothing; a rank building only
// its own program (ctx.only_rank) skips the groups it is not in (every
// member of a group decides that group's algorithm alike).
using PhaseMap = std::function<Slice(int sub_rank, const Slice&)>;
// `decider`: the group whose view of the machine picks the algorithm
// (Levels::like; default: the group itself).
std::string run_phase(Builder& b, const GenContext& ctx, const std::vector<int>& group, const Collective& sub,
                      const PhaseMap& map, const std::vector<int>* decider = nullptr);

}  // namespace hetcoll
