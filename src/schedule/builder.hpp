// Builder: how generators write schedules.
//
// Ops are appended per rank in program order. Dependencies are explicit
// (`after`) and, unless turned off, also inferred from data hazards in
// program order: an op that reads a region depends on its last writer; an op
// that writes depends on the last writer and on every reader since. So a
// generator states only the order in which it touches data, and composition
// (append, sub-groups) is ordered exactly as far as the data requires.
//
// Generators that produce millions of ops with trivial dependencies (the
// λ-tree) turn inference off and pass `after` themselves; the validator
// checks both kinds the same way (races, cycles, data flow).
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "schedule/schedule.hpp"

namespace hetcoll {

class Builder {
 public:
  Builder(const Collective& coll, std::string algorithm, bool infer_deps = true);
  ~Builder();
  Builder(Builder&&) noexcept;
  Builder& operator=(Builder&&) noexcept;

  const Collective& coll() const { return coll_; }
  int nranks() const { return coll_.nranks; }

  // Restrict emission to one rank (runtime: a rank builds only its own
  // program). Generators may skip work for ranks where wants() is false; ops
  // for other ranks are dropped.
  void only_rank(int r) { only_ = r; }
  // Throw TooLarge once more than `max_ops` ops are added (0: no limit).
  void limit(size_t max_ops) { limit_ = max_ops; }
  bool wants(int r) const { return only_ < 0 || only_ == r; }

  // Sends added while this is on (send, or append's) are serial (Op::serial:
  // one at a time).
  void serial_sends(bool on) { serial_ = on; }

  using After = std::initializer_list<uint32_t>;
  uint32_t send(int rank, int to, Slice src, After after = {});
  uint32_t recv(int rank, int from, Slice dst, After after = {});
  uint32_t reduce(int rank, Slice dst, Slice src, After after = {});
  uint32_t copy(int rank, Slice dst, Slice src, After after = {});
  // General form: `after` points to n_after local op indices.
  uint32_t add(int rank, Op op, const uint32_t* after, size_t n_after);

  // The ops that last wrote any byte of `s` on `rank` (with inference on;
  // empty otherwise). A stage posts its receives after these, so that a
  // message of the next stage cannot take the receive port from the one
  // that brings this rank's data.
  std::vector<uint32_t> last_writers(int rank, Slice s) const;
  // A receive that may not be posted before the ops in `after`.
  uint32_t recv_after(int rank, int from, Slice dst, const std::vector<uint32_t>& after);

  // Scratch space: returns the offset of `bytes` fresh bytes of rank's tmp.
  uint64_t alloc_tmp(int rank, uint64_t bytes);
  void reserve(size_t ops, size_t deps) {
    ops_.reserve(ops);
    op_rank_.reserve(ops);
    deps_.reserve(deps);
  }
  uint64_t tmp_bytes(int rank) const { return tmp_[size_t(rank)]; }
  uint32_t ops_on(int rank) const { return count_[size_t(rank)]; }

  // Sequential composition: replays `sub` (built for a group of
  // rank_map.size() ranks) with sub-rank k acting as rank rank_map[k] and
  // every slice passed through `map`. The default map keeps in/out offsets
  // and places the sub-schedule's tmp in fresh tmp space of each rank.
  using SliceMap = std::function<Slice(int sub_rank, const Slice&)>;
  void append(const Schedule& sub, const std::vector<int>& rank_map, SliceMap map = nullptr);

  Schedule finish();

 private:
  struct Hazards;
  Collective coll_;
  std::string algorithm_;
  int only_ = -1;
  size_t limit_ = 0;
  bool serial_ = false;
  std::vector<Op> ops_;          // emission order
  std::vector<int32_t> op_rank_;  // rank of each emitted op
  std::vector<uint32_t> deps_;   // emission order
  std::vector<uint32_t> count_;  // ops per rank so far
  std::vector<uint64_t> tmp_;
  std::unique_ptr<Hazards> hazards_;
  std::vector<uint32_t> scratch_;  // dependency list of the op being added
};

}  // namespace hetcoll
