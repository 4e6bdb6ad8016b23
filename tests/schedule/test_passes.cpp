// Input forwarding (schedule/passes.hpp): sends of bytes just copied from
// `in` read `in` instead, without waiting for the copy; writers of the
// copied bytes no longer wait for the send; nothing else changes.
#include <gtest/gtest.h>

#include <algorithm>

#include "schedule/builder.hpp"
#include "schedule/passes.hpp"
#include "schedule/validator.hpp"

using namespace hetcoll;

namespace {
std::vector<uint32_t> deps(const Schedule& s, int r, size_t i) { return {s.deps_begin(r, i), s.deps_end(r, i)}; }

// Recursive doubling allreduce on 2 ranks, 8 bytes: copy, send, recv, reduce.
Schedule exchange_and_reduce(bool in_place) {
  Collective c = Collective::make(CollOp::allreduce, 2, 1, 0, 8);
  c.in_place = in_place;
  Builder b(c, "hand");
  for (int r = 0; r < 2; ++r) {
    uint64_t t = b.alloc_tmp(r, 8);
    b.copy(r, {Buf::out, 0, 8}, {Buf::in, 0, 8});
    b.send(r, 1 - r, {Buf::out, 0, 8});
    b.recv(r, 1 - r, {Buf::tmp, t, 8});
    b.reduce(r, {Buf::out, 0, 8}, {Buf::tmp, t, 8});
  }
  return b.finish();
}
}  // namespace

TEST(InputForwarding, SendReadsTheInputAndStopsWaiting) {
  Schedule s = exchange_and_reduce(false);
  ASSERT_TRUE(validate(s).ok);
  ASSERT_EQ(deps(s, 0, 1), std::vector<uint32_t>{0});     // the send waited for the copy
  ASSERT_EQ(deps(s, 0, 3), (std::vector<uint32_t>{0, 1, 2}));  // the reduce for the send
  size_t n = 0;
  Schedule f = forward_input_copies(s, &n);
  EXPECT_EQ(n, 2u);  // one send per rank
  auto rep = validate(f);
  EXPECT_TRUE(rep.ok) << rep.summary();
  for (int r = 0; r < 2; ++r) {
    const Op& send = f.op(r, 1);
    EXPECT_EQ(send.buf, Buf::in);
    EXPECT_EQ(send.off, 0u);
    EXPECT_TRUE(deps(f, r, 1).empty());
    // The reduce still follows the copy and the receive, no longer the send.
    EXPECT_EQ(deps(f, r, 3), (std::vector<uint32_t>{0, 2}));
  }
  EXPECT_EQ(f.message_count(), s.message_count());
  EXPECT_EQ(f.bytes_sent(), s.bytes_sent());
}

TEST(InputForwarding, InPlaceSchedulesAreLeftAlone) {
  Schedule s = exchange_and_reduce(true);
  size_t n = 7;
  Schedule f = forward_input_copies(s, &n);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(to_text(f), to_text(s));
}

// Structural cases on hand-made programs (not meant as collectives: only
// the pass's rewriting is checked here).
TEST(InputForwarding, ASendAfterAnOverwriteKeepsReadingTheCopy) {
  Builder b(Collective::make(CollOp::allgather, 2, 8), "hand");
  b.copy(0, {Buf::out, 0, 8}, {Buf::in, 0, 8});
  b.recv(0, 1, {Buf::out, 4, 4});  // half of the copied bytes change
  b.send(0, 1, {Buf::out, 0, 8});  // sends the mix: must stay on out
  b.send(1, 0, {Buf::in, 0, 4});
  b.recv(1, 0, {Buf::out, 0, 8});
  Schedule s = b.finish();
  size_t n = 0;
  Schedule f = forward_input_copies(s, &n);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(f.op(0, 2).buf, Buf::out);
  EXPECT_EQ(to_text(f), to_text(s));
}

TEST(InputForwarding, ALaterWriterInheritsTheSendsOtherDependencies) {
  Builder b(Collective::make(CollOp::allgather, 2, 8), "hand");
  uint64_t t = b.alloc_tmp(0, 16);
  b.send(0, 1, {Buf::in, 0, 1});                 // 0: an earlier send
  b.copy(0, {Buf::tmp, t + 8, 8}, {Buf::in, 0, 8});  // 1
  b.send(0, 1, {Buf::tmp, t + 10, 4}, {0});      // 2: after 0 explicitly, reads copied bytes
  b.recv(0, 1, {Buf::tmp, t + 8, 8});            // 3: overwrites them (waited for 2)
  b.recv(1, 0, {Buf::out, 0, 1});
  b.recv(1, 0, {Buf::out, 1, 4});
  b.send(1, 0, {Buf::in, 0, 8});
  Schedule s = b.finish();
  ASSERT_EQ(deps(s, 0, 2), (std::vector<uint32_t>{0, 1}));
  ASSERT_EQ(deps(s, 0, 3), (std::vector<uint32_t>{1, 2}));
  size_t n = 0;
  Schedule f = forward_input_copies(s, &n);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(f.op(0, 2).buf, Buf::in);
  EXPECT_EQ(f.op(0, 2).off, 2u);  // the same bytes of the input
  EXPECT_EQ(deps(f, 0, 2), std::vector<uint32_t>{0});
  EXPECT_EQ(deps(f, 0, 3), (std::vector<uint32_t>{0, 1}));  // after the copy and what the send followed
}

TEST(ReceiveIntoAccumulators, TheChildsDataLandsInTheAccumulator) {
  // Binomial reduce on 2 ranks: root copies its input, receives the child's
  // into tmp and combines; afterwards it receives straight into out and
  // combines its input.
  Collective c = Collective::make(CollOp::reduce, 2, 4, 0, 8);
  Builder b(c, "hand");
  uint64_t t = b.alloc_tmp(0, 32);
  b.copy(0, {Buf::out, 0, 32}, {Buf::in, 0, 32});
  b.recv(0, 1, {Buf::tmp, t, 32});
  b.reduce(0, {Buf::out, 0, 32}, {Buf::tmp, t, 32});
  b.send(1, 0, {Buf::in, 0, 32});
  Schedule s = b.finish();
  size_t n = 0;
  Schedule f = receive_into_accumulators(s, &n);
  EXPECT_EQ(n, 1u);
  auto rep = validate(f);
  EXPECT_TRUE(rep.ok) << rep.summary();
  EXPECT_EQ(f.op(0, 1).buf, Buf::out);    // recv into the accumulator
  EXPECT_EQ(f.op(0, 2).src_buf, Buf::in);  // combine the own input
  EXPECT_EQ(deps(f, 0, 1), std::vector<uint32_t>{0});  // after the (now dead) copy
}

TEST(ReceiveIntoAccumulators, LeavesSlotsThatAreReadTwice) {
  // The received block is combined and also forwarded: the receive must
  // keep its own slot.
  Collective c = Collective::make(CollOp::reduce, 3, 4, 0, 8);
  Builder b(c, "hand");
  uint64_t t = b.alloc_tmp(1, 32);
  b.copy(1, {Buf::out, 0, 32}, {Buf::in, 0, 32});
  b.recv(1, 2, {Buf::tmp, t, 32});
  b.reduce(1, {Buf::out, 0, 32}, {Buf::tmp, t, 32});
  b.send(1, 0, {Buf::tmp, t, 32});  // reads the slot again
  Schedule s = b.finish();
  size_t n = 0;
  receive_into_accumulators(s, &n);
  EXPECT_EQ(n, 0u);
}

TEST(ReceiveIntoAccumulators, OnlyTheFirstCombineAfterTheCopy) {
  // Three contributions at the root: the first combine takes the receive
  // in place, the second (the accumulator is no longer a copy) does not.
  Collective c = Collective::make(CollOp::reduce, 3, 4, 0, 8);
  Builder b(c, "hand");
  uint64_t t = b.alloc_tmp(0, 64);
  b.copy(0, {Buf::out, 0, 32}, {Buf::in, 0, 32});
  b.recv(0, 1, {Buf::tmp, t, 32});
  b.reduce(0, {Buf::out, 0, 32}, {Buf::tmp, t, 32});
  b.recv(0, 2, {Buf::tmp, t + 32, 32});
  b.reduce(0, {Buf::out, 0, 32}, {Buf::tmp, t + 32, 32});
  b.send(1, 0, {Buf::in, 0, 32});
  b.send(2, 0, {Buf::in, 0, 32});
  Schedule s = b.finish();
  size_t n = 0;
  Schedule f = receive_into_accumulators(s, &n);
  EXPECT_EQ(n, 1u);
  EXPECT_TRUE(validate(f).ok) << validate(f).summary();
  EXPECT_EQ(f.op(0, 3).buf, Buf::tmp);
  EXPECT_EQ(f.op(0, 4).src_buf, Buf::tmp);
}
