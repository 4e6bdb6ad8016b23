// The validator must catch every kind of broken schedule, and accept correct
// ones. Each broken schedule below is small and wrong in exactly one way.
#include <gtest/gtest.h>

#include "schedule/builder.hpp"
#include "schedule/validator.hpp"

using namespace hetcoll;

namespace {
bool mentions(const ValidationReport& r, const std::string& what) {
  for (auto& e : r.errors)
    if (e.find(what) != std::string::npos) return true;
  return false;
}
std::string dump(const ValidationReport& r) { return r.summary(); }

// A correct 4-rank binomial broadcast of 100 bytes from `root`.
Schedule binomial4(int root) {
  Builder b(Collective::make(CollOp::bcast, 4, 100, root), "hand");
  auto R = [&](int v) { return (v + root) % 4; };
  Slice d{Buf::out, 0, 100};
  b.send(R(0), R(2), d);
  b.send(R(0), R(1), d);
  b.recv(R(2), R(0), d);
  b.send(R(2), R(3), d);
  b.recv(R(1), R(0), d);
  b.recv(R(3), R(2), d);
  return b.finish();
}
}  // namespace

TEST(Validator, AcceptsACorrectBroadcastFromEveryRoot) {
  for (int root = 0; root < 4; ++root) {
    auto rep = validate(binomial4(root));
    EXPECT_TRUE(rep.ok) << dump(rep);
    EXPECT_EQ(rep.messages, 3u);
    EXPECT_EQ(rep.bytes, 300u);
  }
}

TEST(Validator, BuilderInfersTheReceiveBeforeTheForward) {
  Schedule s = binomial4(0);
  // rank 2: recv (op 0) then send (op 1) must depend on it.
  ASSERT_EQ(s.num_ops(2), 2u);
  ASSERT_EQ(s.op(2, 1).dep_count, 1u);
  EXPECT_EQ(*s.deps_begin(2, 1), 0u);
  // the root's two sends only read: no dependency between them.
  EXPECT_EQ(s.op(0, 1).dep_count, 0u);
}

TEST(Validator, MissingReceiverIsUnmatched) {
  Builder b(Collective::make(CollOp::bcast, 3, 8), "x");
  b.send(0, 1, {Buf::out, 0, 8});
  b.send(0, 2, {Buf::out, 0, 8});
  b.recv(1, 0, {Buf::out, 0, 8});
  auto rep = validate(b.finish());
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(mentions(rep, "no matching receive")) << dump(rep);
}

TEST(Validator, SizeMismatch) {
  Builder b(Collective::make(CollOp::bcast, 2, 8), "x");
  b.send(0, 1, {Buf::out, 0, 8});
  b.recv(1, 0, {Buf::out, 0, 4});
  auto rep = validate(b.finish());
  EXPECT_TRUE(mentions(rep, "receives 4")) << dump(rep);
}

TEST(Validator, ExchangeInPlaceDeadlocksUnderRendezvous) {
  // Both ranks send out[] and then receive into the same out[]: the receive
  // must wait for the local send to finish, which waits for the peer's
  // receive to be posted — a cycle for large (rendezvous) messages.
  Builder b(Collective::make(CollOp::allreduce, 2, 8), "x");
  for (int r = 0; r < 2; ++r) {
    b.copy(r, {Buf::out, 0, 8}, {Buf::in, 0, 8});
    b.send(r, 1 - r, {Buf::out, 0, 8});
    b.recv(r, 1 - r, {Buf::out, 0, 8});
  }
  auto rep = validate(b.finish());
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(mentions(rep, "deadlock")) << dump(rep);
}

TEST(Validator, SendsInProgramOrderCanDeadlock) {
  // Rank 0 sends to 1, then to 2. Rank 1 takes rank 0's message only after
  // rank 2's, which rank 2 forwards from rank 0's second send: with sends
  // leaving one at a time in program order (the send port) and rendezvous,
  // rank 0's first send never completes. Reversing rank 0's sends fixes it.
  for (bool reversed : {false, true}) {
    Builder b(Collective::make(CollOp::bcast, 3, 8), "x");
    uint32_t t = uint32_t(b.alloc_tmp(1, 8));
    if (reversed) b.send(0, 2, {Buf::out, 0, 8});
    b.send(0, 1, {Buf::out, 0, 8});
    if (!reversed) b.send(0, 2, {Buf::out, 0, 8});
    uint32_t first = b.recv(1, 2, {Buf::tmp, t, 8});
    b.recv(1, 0, {Buf::out, 0, 8}, {first});
    b.recv(2, 0, {Buf::out, 0, 8});
    b.send(2, 1, {Buf::out, 0, 8});
    auto rep = validate(b.finish());
    EXPECT_EQ(rep.ok, reversed) << dump(rep);
    if (!reversed) {
      EXPECT_TRUE(mentions(rep, "deadlock")) << dump(rep);
    }
  }
}

TEST(Validator, ForwardBeforeReceiveIsARace) {
  Builder b(Collective::make(CollOp::bcast, 3, 8), "x", false);  // no inference
  b.send(0, 1, {Buf::out, 0, 8});
  b.recv(1, 0, {Buf::out, 0, 8});
  b.send(1, 2, {Buf::out, 0, 8});  // forgot "after 0"
  b.recv(2, 1, {Buf::out, 0, 8});
  auto rep = validate(b.finish());
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(mentions(rep, "no dependency")) << dump(rep);
}

// Races are found through partial overlaps and only where no chain of
// dependencies orders the ops; a chain orders them (transitively).
TEST(Validator, RacesFollowTheDependencyChains) {
  // Rank 0 receives 8 bytes in two halves into tmp, then forwards all 8.
  auto schedule = [](bool second_half_waited_for) {
    Builder b(Collective::make(CollOp::bcast, 2, 8), "x", false);
    b.alloc_tmp(1, 8);
    b.send(0, 1, {Buf::out, 0, 4});
    b.send(0, 1, {Buf::out, 4, 4});
    uint32_t r0 = b.recv(1, 0, {Buf::tmp, 0, 4});
    uint32_t r1 = b.recv(1, 0, {Buf::tmp, 4, 4}, {r0});
    // The copy reads both halves; it waits for r1 (which waits for r0) or only for r0.
    if (second_half_waited_for) b.copy(1, {Buf::out, 0, 8}, {Buf::tmp, 0, 8}, {r1});
    else b.copy(1, {Buf::out, 0, 8}, {Buf::tmp, 0, 8}, {r0});
    return b.finish();
  };
  auto ok = validate(schedule(true));
  EXPECT_TRUE(ok.ok) << dump(ok);
  auto bad = validate(schedule(false));
  EXPECT_FALSE(bad.ok);
  EXPECT_TRUE(mentions(bad, "ops 1 and 2 touch the same bytes")) << dump(bad);
}

// Memory linear in the ops: a root with 300 000 sends validates (a k×k
// closure of its ops would need 11 GB).
TEST(Validator, LargeRanksValidateInLinearMemory) {
  const int p = 300001;
  Builder b(Collective::make(CollOp::bcast, p, 8), "star", false);
  Slice d{Buf::out, 0, 8};
  for (int r = 1; r < p; ++r) b.send(0, r, d);
  for (int r = 1; r < p; ++r) b.recv(r, 0, d);
  auto rep = validate(b.finish());
  EXPECT_TRUE(rep.ok) << dump(rep);
  EXPECT_EQ(rep.messages, uint64_t(p - 1));
}

TEST(Validator, DoubleCountedContributionIsWrongData) {
  // allreduce on 2 ranks where rank 0 adds rank 1's value twice.
  Builder b(Collective::make(CollOp::allreduce, 2, 2, 0, 4), "x");
  Slice out{Buf::out, 0, 8}, in{Buf::in, 0, 8}, t0{Buf::tmp, 0, 8};
  b.alloc_tmp(0, 8);
  b.alloc_tmp(1, 8);
  b.copy(0, out, in);
  b.copy(1, out, in);
  b.send(1, 0, in);
  b.recv(0, 1, t0);
  b.reduce(0, out, t0);
  b.reduce(0, out, t0);
  b.send(0, 1, out);
  b.recv(1, 0, out);
  auto rep = validate(b.finish());
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(mentions(rep, "contributions {0,1,1}")) << dump(rep);
}

TEST(Validator, MisalignedReductionIsCaught) {
  Builder b(Collective::make(CollOp::allreduce, 2, 2, 0, 4), "x");
  b.alloc_tmp(0, 8);
  b.copy(0, {Buf::out, 0, 8}, {Buf::in, 0, 8});
  b.send(1, 0, {Buf::in, 0, 8});
  b.recv(0, 1, {Buf::tmp, 0, 8});
  b.reduce(0, {Buf::out, 0, 4}, {Buf::tmp, 4, 4});  // element 0 ⊕= element 1
  auto rep = validate(b.finish());
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(mentions(rep, "input offset")) << dump(rep);
}

TEST(Validator, PartialElementReduction) {
  Builder b(Collective::make(CollOp::allreduce, 2, 2, 0, 4), "x");
  b.alloc_tmp(0, 8);
  b.reduce(0, {Buf::out, 0, 6}, {Buf::tmp, 0, 6});
  auto rep = validate(b.finish());
  EXPECT_TRUE(mentions(rep, "whole 4-byte elements")) << dump(rep);
}

TEST(Validator, StructuralErrors) {
  {
    Builder b(Collective::make(CollOp::bcast, 2, 8), "x");
    b.send(0, 0, {Buf::out, 0, 8});
    EXPECT_TRUE(mentions(validate(b.finish()), "sends to itself"));
  }
  {
    Builder b(Collective::make(CollOp::bcast, 2, 8), "x");
    b.send(0, 1, {Buf::out, 4, 8});
    b.recv(1, 0, {Buf::out, 4, 8});
    EXPECT_TRUE(mentions(validate(b.finish()), "exceeds out"));
  }
  {
    Builder b(Collective::make(CollOp::allreduce, 2, 8), "x");
    b.copy(0, {Buf::in, 0, 8}, {Buf::out, 0, 8});
    EXPECT_TRUE(mentions(validate(b.finish()), "read-only send buffer"));
  }
}

TEST(Validator, ClobberingBytesOutsideTheResult) {
  // gatherv with a gap: the root must not write the gap.
  Collective c = Collective::make_v(CollOp::gatherv, {1, 1}, 0);
  c.displs = {0, 2};  // out[1] is a gap
  Builder b(c, "x");
  b.copy(0, {Buf::out, 0, 1}, {Buf::in, 0, 1});
  b.send(1, 0, {Buf::in, 0, 1});
  b.alloc_tmp(0, 2);
  b.recv(0, 1, {Buf::tmp, 0, 1});
  b.copy(0, {Buf::out, 1, 2}, {Buf::tmp, 0, 2});  // copies garbage over the gap too
  auto rep = validate(b.finish());
  EXPECT_FALSE(rep.ok);
  EXPECT_TRUE(mentions(rep, "original bytes")) << dump(rep);
}

TEST(Validator, BarrierNeedsEveryoneToHearFromEveryone) {
  Collective c = Collective::make(CollOp::barrier, 3, 0);
  {
    Builder b(c, "ok");  // dissemination: 0→1→2→0 twice around
    for (int round = 0; round < 2; ++round)
      for (int r = 0; r < 3; ++r) {
        if (round) b.send(r, (r + 1) % 3, {Buf::tmp, 0, 0}, {1});
        else b.send(r, (r + 1) % 3, {Buf::tmp, 0, 0});
        b.recv(r, (r + 2) % 3, {Buf::tmp, 0, 0});
      }
    auto rep = validate(b.finish());
    EXPECT_TRUE(rep.ok) << dump(rep);
  }
  {
    Builder b(c, "bad");  // only a gather to 0: ranks 1 and 2 leave early
    b.send(1, 0, {Buf::tmp, 0, 0});
    b.send(2, 0, {Buf::tmp, 0, 0});
    b.recv(0, 1, {Buf::tmp, 0, 0});
    b.recv(0, 2, {Buf::tmp, 0, 0});
    auto rep = validate(b.finish());
    EXPECT_TRUE(mentions(rep, "can leave before")) << dump(rep);
  }
}

TEST(Validator, InPlaceAliasing) {
  // allreduce in place on 2 ranks: copy in→out is a no-op when they alias.
  Builder b(Collective::make(CollOp::allreduce, 2, 1, 0, 8), "x");
  for (int r = 0; r < 2; ++r) {
    b.alloc_tmp(r, 8);
    b.copy(r, {Buf::out, 0, 8}, {Buf::in, 0, 8});
    b.send(r, 1 - r, {Buf::out, 0, 8});
    b.recv(r, 1 - r, {Buf::tmp, 0, 8});
    b.reduce(r, {Buf::out, 0, 8}, {Buf::tmp, 0, 8});
  }
  Schedule s = b.finish();
  EXPECT_TRUE(validate(s).ok);
  ValidationOptions opt;
  opt.in_minus_out = {0, 0};
  auto rep = validate(s, opt);
  EXPECT_TRUE(rep.ok) << dump(rep);
  EXPECT_TRUE(rep.rank_consistent);
}
