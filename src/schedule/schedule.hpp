// The schedule IR: for each rank of a group, an ordered list of operations on
// slices of that rank's buffers, with explicit dependencies.
//
//   send  peer  slice            the k-th send from i to j matches the k-th
//   recv  peer  slice            recv at j from i (sizes must agree)
//   reduce dst ⊕= src            both local slices, same length
//   copy   dst  = src
//
// Buffers are logical: `in` (the caller's send buffer, read-only), `out` (the
// receive buffer) and `tmp` (scratch owned by the executor). An op may start
// when every op it depends on has completed; there is no other ordering, so a
// schedule says exactly what may overlap. The same object is validated,
// simulated, selected and executed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "schedule/collective.hpp"

namespace hetcoll {

enum class Buf : uint8_t { in = 0, out = 1, tmp = 2 };
constexpr int kNumBufs = 3;
const char* buf_name(Buf b);
Buf buf_from_name(const std::string& name);

struct Slice {
  Buf buf = Buf::out;
  uint64_t off = 0;
  uint64_t len = 0;
  uint64_t end() const { return off + len; }
  bool overlaps(const Slice& o) const { return buf == o.buf && off < o.end() && o.off < end() && len && o.len; }
  Slice sub(uint64_t rel_off, uint64_t n) const { return {buf, off + rel_off, n}; }
  std::string str() const;
};

enum class OpKind : uint8_t { send = 0, recv = 1, reduce = 2, copy = 3 };
const char* op_kind_name(OpKind k);

struct Op {
  OpKind kind = OpKind::send;
  Buf buf = Buf::out;      // send: source; recv, reduce, copy: destination
  Buf src_buf = Buf::out;  // reduce, copy: source
  // send: one at a time — it leaves only once the rank's earlier sends are
  // done, however many sends the model lets fly (a tree's children in turn:
  // across a shared uplink, the first child then has it alone). The
  // simulator and the executor both keep it.
  bool serial = false;
  int32_t peer = -1;       // send: destination rank; recv: source rank
  uint64_t off = 0, src_off = 0, len = 0;
  uint32_t dep_begin = 0, dep_count = 0;

  Slice slice() const { return {buf, off, len}; }
  Slice src() const { return {src_buf, src_off, len}; }
  bool is_comm() const { return kind == OpKind::send || kind == OpKind::recv; }
};

class Schedule {
 public:
  Collective coll;
  std::string algorithm;

  int nranks() const { return coll.nranks; }
  size_t num_ops(int r) const { return size_t(rank_begin_[size_t(r) + 1] - rank_begin_[size_t(r)]); }
  size_t total_ops() const { return ops_.size(); }
  const Op& op(int r, size_t i) const { return ops_[rank_begin_[size_t(r)] + i]; }
  // Global op id: ops of rank r are [first_op(r), first_op(r+1)).
  uint64_t first_op(int r) const { return rank_begin_[size_t(r)]; }
  const Op& op_at(uint64_t gid) const { return ops_[gid]; }
  // Dependencies of op i on rank r: local indices of earlier ops on r.
  const uint32_t* deps_begin(int r, size_t i) const { return deps_.data() + op(r, i).dep_begin; }
  const uint32_t* deps_end(int r, size_t i) const { return deps_begin(r, i) + op(r, i).dep_count; }
  const uint32_t* deps_of(const Op& o) const { return deps_.data() + o.dep_begin; }

  uint64_t buffer_bytes(int r, Buf b) const;
  uint64_t tmp_bytes(int r) const { return tmp_bytes_[size_t(r)]; }

  // Statistics used by tie-breaking and reports.
  uint64_t message_count() const;
  uint64_t bytes_sent() const;

 private:
  friend class Builder;
  friend Schedule schedule_from_parts(Collective, std::string, std::vector<std::vector<Op>>,
                                      std::vector<std::vector<std::vector<uint32_t>>>, std::vector<uint64_t>);
  std::vector<uint64_t> rank_begin_{0, 0};
  std::vector<Op> ops_;
  std::vector<uint32_t> deps_;
  std::vector<uint64_t> tmp_bytes_;
};

// Assembles a schedule from per-rank op lists and per-op dependency lists
// (used by the text and JSON readers). Dependency fields of the ops are
// ignored and rebuilt.
Schedule schedule_from_parts(Collective coll, std::string algorithm, std::vector<std::vector<Op>> ops,
                             std::vector<std::vector<std::vector<uint32_t>>> deps, std::vector<uint64_t> tmp);

// For every op, the ops (global ids) that list it as a dependency.
struct Dependents {
  std::vector<uint64_t> begin;  // size total_ops() + 1
  std::vector<uint64_t> list;
};
Dependents build_dependents(const Schedule& s);

// Text form: one line per op, per rank; JSON form. Both round-trip exactly.
std::string to_text(const Schedule& s);
Schedule from_text(const std::string& text);
std::string to_json(const Schedule& s, int indent = -1);
Schedule from_json(const std::string& text);

}  // namespace hetcoll
