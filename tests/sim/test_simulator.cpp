// The simulator against closed forms: Bruck Figs. 1-2 (postal), InterCom's
// MST broadcast and a one-port star (Hockney), Banikazemi eq. 7
// (heterogeneous).
#include <gtest/gtest.h>

#include <cmath>

#include "algorithms/patterns/broadcast_trees.hpp"
#include "algorithms/patterns/primitives.hpp"
#include "algorithms/registry.hpp"
#include "model/heterogeneous_model.hpp"
#include "model/machine_model.hpp"
#include "schedule/builder.hpp"
#include "sim/simulator.hpp"
#include "util/error.hpp"

using namespace hetcoll;

namespace {
double bcast_time(const char* algo, int n, const MachineModel& m, uint64_t bytes = 8, int root = 0) {
  return simulate(generate(algo, Collective::make(CollOp::bcast, n, bytes, root), m), m).makespan;
}
}  // namespace

TEST(Simulator, BruckFigures1And2) {
  auto postal2 = parse_model("postal:lambda=2");
  EXPECT_DOUBLE_EQ(bcast_time("binomial_tree", 8, *postal2), 6.0);  // Fig. 1b
  EXPECT_DOUBLE_EQ(bcast_time("lambda_tree", 8, *postal2), 5.0);    // Fig. 2
  auto oneport = parse_model("postal:lambda=1");
  EXPECT_DOUBLE_EQ(bcast_time("binomial_tree", 8, *oneport), 3.0);  // Fig. 1a
  // Fig. 1b node labels: when ranks 1..7 receive; edge labels: when sent.
  Schedule s = generate("binomial_tree", Collective::make(CollOp::bcast, 8, 8), *postal2);
  SimResult r = simulate(s, *postal2);
  const double received[] = {0, 4, 3, 5, 2, 5, 4, 6};
  const double sent[] = {0, 2, 1, 3, 0, 3, 2, 4};
  for (int v = 1; v < 8; ++v) {
    ASSERT_EQ(s.op(v, 0).kind, OpKind::recv);
    uint64_t g = s.first_op(v);
    EXPECT_DOUBLE_EQ(r.end[g], received[v]) << "rank " << v;
    // The matching send started λ = 2 earlier.
    EXPECT_DOUBLE_EQ(r.end[g] - 2.0, sent[v]) << "rank " << v;
  }
}

TEST(Simulator, HockneyMstBroadcastIsLogPTimesAlphaPlusNBeta) {
  auto m = parse_model("hockney:alpha=10us,beta=2ns");
  for (int p = 1; p <= 70; ++p) {
    double expect = std::ceil(std::log2(double(p))) * (10e-6 + 4096 * 2e-9);
    EXPECT_NEAR(bcast_time("binomial_tree", p, *m, 4096, p / 3), expect, 1e-12) << "p " << p;
  }
}

TEST(Simulator, OnePortReceiveSerialisesAStar) {
  // Everybody sends to rank 0 at once: one-port means (p-1)(α + mβ).
  auto m = parse_model("hockney:alpha=5us,beta=1ns");
  const int p = 9;
  Collective c = Collective::make(CollOp::gather, p, 100);
  Builder b(c, "star");
  b.copy(0, {Buf::out, 0, 100}, {Buf::in, 0, 100});
  for (int r = 1; r < p; ++r) {
    b.send(r, 0, {Buf::in, 0, 100});
    b.recv(0, r, {Buf::out, uint64_t(r) * 100, 100});
  }
  SimResult res = simulate(b.finish(), *m);
  EXPECT_NEAR(res.makespan, (p - 1) * (5e-6 + 100e-9), 1e-15);
  // Senders are free as soon as their message left (eager semantics).
  EXPECT_NEAR(res.rank_finish[1], 5e-6 + 100e-9, 1e-15);
}

TEST(Simulator, BanikazemiEquationSevenForAnyTree) {
  // T_recv(i) = T_recv(parent) + childrank·S(parent) + X + R(i)  (eq. 7)
  auto model = parse_model("hetero:nodes=FSSFSFFSSF");
  const int n = 10;
  for (uint64_t bytes : {1u, 100u, 4000u}) {
    for (int root : {0, 1, 7}) {
      for (const Tree& tree : {binomial_tree(n), lambda_tree(n, 1.7)}) {
        Builder b(Collective::make(CollOp::bcast, n, bytes, root), "tree", false);
        tree_bcast(b, Group::all(n), tree, root, {Buf::out, 0, bytes});
        SimResult res = simulate(b.finish(), *model);
        std::vector<double> expect(static_cast<size_t>(n), 0.0);
        for (int v = 0; v < n; ++v) {  // parents precede children in node order
          for (uint32_t k = tree.child_begin[size_t(v)]; k < tree.child_begin[size_t(v) + 1]; ++k) {
            int child = tree.children[k];
            int pr = (v + root) % n, cr = (child + root) % n;
            double childrank = double(k - tree.child_begin[size_t(v)] + 1);
            MessageCost c = model->message(pr, cr, bytes);
            double X = c.arrive - c.send;
            expect[size_t(child)] = expect[size_t(v)] + childrank * c.send + X + c.recv;
          }
        }
        double makespan = 0;
        for (int v = 0; v < n; ++v) {
          int rank = (v + root) % n;
          bool leaf = tree.child_begin[size_t(v)] == tree.child_begin[size_t(v) + 1];
          if (leaf) {
            EXPECT_NEAR(res.rank_finish[size_t(rank)], expect[size_t(v)], 1e-12) << "node " << v;
          }
          makespan = std::max(makespan, expect[size_t(v)]);
        }
        EXPECT_NEAR(res.makespan, makespan, 1e-12);  // eq. 6: the maximum
      }
    }
  }
}

TEST(Simulator, RejectsUnmatchedAndStuckSchedules) {
  auto m = parse_model("postal:lambda=1");
  Builder b(Collective::make(CollOp::bcast, 2, 8), "x");
  b.send(0, 1, {Buf::out, 0, 8});
  EXPECT_THROW(simulate(b.finish(), *m), ScheduleError);
  Builder c(Collective::make(CollOp::bcast, 2, 8), "y");
  c.recv(0, 1, {Buf::tmp, 0, 0});
  c.send(0, 1, {Buf::out, 0, 8}, {0});
  c.recv(1, 0, {Buf::out, 0, 8});
  c.send(1, 0, {Buf::tmp, 0, 0}, {0});
  EXPECT_THROW(simulate(c.finish(), *m), ScheduleError);
}

TEST(Simulator, ModelWithFewerRanksThanTheGroup) {
  auto m = parse_model("hetero:nodes=FS");
  EXPECT_THROW(bcast_time("binomial_tree", 3, *m), InputError);
}

TEST(Simulator, RankMapSelectsPhysicalNodes) {
  // The same 2-rank broadcast on the fast pair and on the slow pair.
  auto m = parse_model("hetero:nodes=FFSS");
  Schedule s = generate("binomial_tree", Collective::make(CollOp::bcast, 2, 1000), *m);
  SimOptions fast, slow;
  fast.rank_map = {0, 1};
  slow.rank_map = {2, 3};
  EXPECT_LT(simulate(s, *m, fast).makespan, simulate(s, *m, slow).makespan);
}

// overlap=0 (shared memory): a receive is the receiver's CPU work, so it
// waits for a reduction that holds the CPU (and the other way round).
TEST(Simulator, ReceivesOnTheCpuDoNotOverlapReductions) {
  Builder b(Collective::make(CollOp::reduce, 2, 2000, 0, 1), "hand");
  uint64_t t = b.alloc_tmp(0, 2000);
  b.copy(0, {Buf::out, 0, 2000}, {Buf::in, 0, 2000});
  b.recv(0, 1, {Buf::tmp, t, 1000});
  b.recv(0, 1, {Buf::tmp, t + 1000, 1000});
  b.reduce(0, {Buf::out, 0, 1000}, {Buf::tmp, t, 1000});
  b.reduce(0, {Buf::out, 1000, 1000}, {Buf::tmp, t + 1000, 1000});
  b.send(1, 0, {Buf::in, 0, 1000});
  b.send(1, 0, {Buf::in, 1000, 1000});
  Schedule s = b.finish();
  // 1000 bytes: 1 µs on the wire, 1 µs to combine.
  auto ports = parse_model("hockney:alpha=0s,beta=1ns,gamma=1ns");
  auto cpu = parse_model("hockney:alpha=0s,beta=1ns,gamma=1ns,overlap=0");
  // Ports: recv A [0,1], recv B [1,2] while reducing A [1,2], reduce B [2,3].
  EXPECT_NEAR(simulate(s, *ports).makespan, 3e-6, 1e-15);
  // CPU: recv A [0,1], recv B [1,2], reduce A [2,3], reduce B [3,4].
  EXPECT_NEAR(simulate(s, *cpu).makespan, 4e-6, 1e-15);
  // No closed form claims to be exact on such a model.
  Collective c = Collective::make(CollOp::allreduce, 8, 1000, 0, 8);
  EXPECT_TRUE(closed_form("ring_allreduce", c, *ports).has_value());
  EXPECT_FALSE(closed_form("ring_allreduce", c, *cpu).has_value());
}

TEST(Simulator, SendsLeaveInProgramOrder) {
  // Rank 0's first send waits for a message; its second could go at once,
  // but the send port takes a rank's sends in program order (as the
  // executor does): it starts when the first ends.
  auto m = parse_model("hockney:alpha=5us,beta=0");
  Builder b(Collective::make(CollOp::bcast, 3, 16), "ordered");
  b.send(1, 0, {Buf::out, 0, 8});
  b.recv(0, 1, {Buf::out, 0, 8});
  b.send(0, 2, {Buf::out, 0, 8});  // after the receive (inferred)
  b.send(0, 2, {Buf::out, 8, 8});  // ready at once
  b.recv(2, 0, {Buf::out, 0, 8});
  b.recv(2, 0, {Buf::out, 8, 8});
  Schedule s = b.finish();
  SimResult r = simulate(s, *m);
  EXPECT_NEAR(r.start[s.first_op(0) + 2], 10e-6, 1e-15);
  EXPECT_NEAR(r.makespan, 15e-6, 1e-15);
}

TEST(Simulator, SendPortsComeFromTheModel) {
  // A star: p-1 sends from the root, ceil((p-1)/ports) message times.
  const int p = 8;
  for (int ports : {1, 2, 3, 7, 9}) {
    auto m = parse_model(cat("hockney:alpha=5us,beta=1ns,ports=", ports));
    EXPECT_EQ(m->send_ports(), ports);
    EXPECT_EQ(parse_model(m->spec())->send_ports(), ports);
    EXPECT_EQ(model_from_json(m->to_json())->send_ports(), ports);
    double t = 5e-6 + 100e-9;
    EXPECT_NEAR(bcast_time("star_bcast", p, *m, 100), ((p - 1 + ports - 1) / ports) * t, 1e-12) << ports;
  }
  EXPECT_THROW(parse_model("hockney:alpha=5us,beta=1ns,ports=0"), InputError);
  EXPECT_THROW(parse_model("hockney:alpha=5us,beta=1ns,ports=1x"), InputError);
  EXPECT_THROW(parse_model("hockney:alpha=5us,beta=1ns,ports=99999999999"), InputError);
}
