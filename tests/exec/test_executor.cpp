// The executor runs every algorithm on real data, each rank generating only
// its own program (as at run time), over an in-process network; the results
// equal a serial reference computed here, and bytes outside the result keep
// their sentinel. Reductions add signed integers of the element width.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <thread>

#include "../support/collectives.hpp"
#include "plan/build_schedule.hpp"
#include "algorithms/registry.hpp"
#include "exec/executor.hpp"
#include "schedule/passes.hpp"
#include "local_fabric.hpp"
#include "util/error.hpp"
#include "model/machine_model.hpp"

using namespace hetcoll;
using hetcoll::testing::LocalFabric;
using hetcoll::testing::make_test_collective;
using Bytes = std::vector<uint8_t>;

namespace {
constexpr uint8_t kSentinel = 0xA5;

uint8_t pattern(int r, uint64_t i) { return uint8_t(r * 131 + i * 7 + 3); }

// dst += src as signed integers of e bytes (wrapping), for the reference.
void add(uint8_t* dst, const uint8_t* src, uint64_t bytes, uint32_t e) {
  for (uint64_t k = 0; k < bytes; k += e) {
    if (e == 1) { int8_t a, b; std::memcpy(&a, dst + k, 1); std::memcpy(&b, src + k, 1); a = int8_t(a + b); std::memcpy(dst + k, &a, 1); }
    if (e == 4) { int32_t a, b; std::memcpy(&a, dst + k, 4); std::memcpy(&b, src + k, 4); a = int32_t(uint32_t(a) + uint32_t(b)); std::memcpy(dst + k, &a, 4); }
    if (e == 8) { int64_t a, b; std::memcpy(&a, dst + k, 8); std::memcpy(&b, src + k, 8); a = int64_t(uint64_t(a) + uint64_t(b)); std::memcpy(dst + k, &a, 8); }
  }
}

ElemType int_type(uint32_t e) { return e == 1 ? ElemType::i8 : e == 4 ? ElemType::i32 : ElemType::i64; }

// The result of `c` computed directly from the inputs.
std::vector<Bytes> reference(const Collective& c, const std::vector<Bytes>& in, std::vector<Bytes> out) {
  const int p = c.nranks;
  const uint32_t e = c.elem_size;
  const size_t P = size_t(p);
  auto sum_range = [&](int lo, int hi, uint64_t off, uint64_t len) {
    Bytes acc(in[size_t(lo)].begin() + long(off), in[size_t(lo)].begin() + long(off + len));
    for (int i = lo + 1; i < hi; ++i) add(acc.data(), in[size_t(i)].data() + off, len, e);
    return acc;
  };
  auto put = [&](Bytes& dst, uint64_t off, const Bytes& src) { std::copy(src.begin(), src.end(), dst.begin() + long(off)); };
  auto slice = [&](const Bytes& b, uint64_t off, uint64_t len) { return Bytes(b.begin() + long(off), b.begin() + long(off + len)); };
  const uint64_t m = c.count * e;
  switch (c.op) {
    case CollOp::barrier: break;
    case CollOp::bcast: for (int r = 0; r < p; ++r) out[size_t(r)] = out[size_t(c.root)]; break;
    case CollOp::reduce: if (m) out[size_t(c.root)] = sum_range(0, p, 0, m); break;
    case CollOp::allreduce: for (int r = 0; r < p; ++r) if (m) out[size_t(r)] = sum_range(0, p, 0, m); break;
    case CollOp::scan: for (int r = 0; r < p; ++r) if (m) out[size_t(r)] = sum_range(0, r + 1, 0, m); break;
    case CollOp::exscan: for (int r = 1; r < p; ++r) if (m) out[size_t(r)] = sum_range(0, r, 0, m); break;
    case CollOp::gather: for (int i = 0; i < p; ++i) put(out[size_t(c.root)], uint64_t(i) * m, in[size_t(i)]); break;
    case CollOp::gatherv: for (int i = 0; i < p; ++i) put(out[size_t(c.root)], c.displs[size_t(i)] * e, in[size_t(i)]); break;
    case CollOp::scatter: for (int r = 0; r < p; ++r) out[size_t(r)] = slice(in[size_t(c.root)], uint64_t(r) * m, m); break;
    case CollOp::scatterv:
      for (int r = 0; r < p; ++r) out[size_t(r)] = slice(in[size_t(c.root)], c.displs[size_t(r)] * e, c.counts[size_t(r)] * e);
      break;
    case CollOp::allgather: for (int r = 0; r < p; ++r) for (int i = 0; i < p; ++i) put(out[size_t(r)], uint64_t(i) * m, in[size_t(i)]); break;
    case CollOp::allgatherv:
      for (int r = 0; r < p; ++r) for (int i = 0; i < p; ++i) put(out[size_t(r)], c.displs[size_t(i)] * e, in[size_t(i)]);
      break;
    case CollOp::reduce_scatter_block: for (int r = 0; r < p; ++r) if (m) out[size_t(r)] = sum_range(0, p, uint64_t(r) * m, m); break;
    case CollOp::reduce_scatter: {
      uint64_t off = 0;
      for (int r = 0; r < p; ++r) {
        uint64_t len = c.counts[size_t(r)] * e;
        if (len) out[size_t(r)] = sum_range(0, p, off, len);
        off += len;
      }
      break;
    }
    case CollOp::alltoall:
      for (int r = 0; r < p; ++r) for (int i = 0; i < p; ++i) put(out[size_t(r)], uint64_t(i) * m, slice(in[size_t(i)], uint64_t(r) * m, m));
      break;
    case CollOp::alltoallv:
      for (size_t r = 0; r < P; ++r)
        for (size_t i = 0; i < P; ++i)
          put(out[r], c.rdispls[r * P + i] * e, slice(in[i], c.sdispls[i * P + r] * e, c.sendcounts[i * P + r] * e));
      break;
  }
  return out;
}

// optimized: run the schedule after the execution passes, as the MPI layer does.
// ports: sends in flight at once (the model's send_ports()).
void run_case(const std::string& algo, const Collective& c, const MachineModel& model, bool optimized, int ports) {
  const int p = c.nranks;
  std::vector<Bytes> in(static_cast<size_t>(p)), out(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) {
    in[size_t(r)].resize(c.in_bytes(r));
    for (uint64_t i = 0; i < in[size_t(r)].size(); ++i) in[size_t(r)][i] = pattern(r, i);
    out[size_t(r)].assign(c.out_bytes(r), kSentinel);
  }
  if (c.op == CollOp::bcast)
    for (uint64_t i = 0; i < out[size_t(c.root)].size(); ++i) out[size_t(c.root)][i] = pattern(c.root, i);
  std::vector<Bytes> expect = reference(c, in, out);
  LocalFabric fabric(p);
  std::vector<std::string> errors(static_cast<size_t>(p));
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      try {
        Schedule s = build_schedule(algo, c, model, r);  // this rank's program only
        if (optimized) s = optimize_for_execution(s);
        Bytes tmp(s.tmp_bytes(r) + 1);
        ReduceFn k = is_reduction(c.op) ? reduce_kernel(ReduceOp::sum, int_type(c.elem_size)) : nullptr;
        execute(s, r, {in[size_t(r)].data(), out[size_t(r)].data(), tmp.data()}, k, fabric.endpoint(r), ports);
      } catch (const std::exception& e) {
        errors[size_t(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < p; ++r) {
    ASSERT_EQ(errors[size_t(r)], "") << algo << (optimized ? " optimized " : " ") << c.describe() << " rank " << r;
    if (c.op == CollOp::exscan && r == 0) continue;  // undefined by MPI
    ASSERT_EQ(out[size_t(r)], expect[size_t(r)]) << algo << (optimized ? " optimized " : " ") << c.describe() << " rank " << r;
  }
}

class Executor : public ::testing::TestWithParam<std::string> {};

TEST_P(Executor, RealDataMatchesTheReference) {
  const Algorithm& a = find_algorithm(GetParam());
  auto model = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  for (CollOp op : a.ops)
    for (int p : {1, 2, 3, 4, 5, 7, 8, 12, 16})
      for (int root : {0, p - 1})
        for (uint64_t bytes : {0, 1, 7, 96, 1000, 8192}) {
          if (!has_root(op) && root) continue;
          for (int variant : {0, 2}) {
            if (variant && !hetcoll::testing::has_variants(op)) continue;
            for (bool optimized : {false, true})
              // As the MPI layer runs it (optimized, one send port), and unoptimized with three ports.
              run_case(a.name, make_test_collective(op, p, root, bytes, variant), *model, optimized, optimized ? 1 : 3);
          }
        }
}

// MPI_IN_PLACE with real data: the input sits inside the output buffer where
// MPI puts it; in-place schedules (or a copy aside, for the algorithms that
// need one) give the reference result.
// spec: a setting of the algorithm (default: its name, the planner's defaults).
void run_in_place(const Algorithm& a, Collective c, const MachineModel& model, const std::string& spec = "") {
  const std::string algo = spec.empty() ? a.name : spec;
  const int p = c.nranks;
  const bool copy_aside = std::find(a.copy_in_place.begin(), a.copy_in_place.end(), c.op) != a.copy_in_place.end();
  c.in_place = !copy_aside;
  std::vector<Bytes> in(static_cast<size_t>(p)), out(static_cast<size_t>(p)), storage(static_cast<size_t>(p));
  std::vector<uint64_t> in_at(static_cast<size_t>(p), 0), out_at(static_cast<size_t>(p), 0);
  for (int r = 0; r < p; ++r) {
    in[size_t(r)].resize(c.in_bytes(r));
    for (uint64_t i = 0; i < in[size_t(r)].size(); ++i) in[size_t(r)][i] = pattern(r, i);
    out[size_t(r)].assign(c.out_bytes(r), kSentinel);
    auto d = c.in_place_offset(r);
    if (d) {
      in_at[size_t(r)] = uint64_t(std::max<int64_t>(0, *d));
      out_at[size_t(r)] = uint64_t(std::max<int64_t>(0, -*d));
    }
    uint64_t size = d ? std::max(in_at[size_t(r)] + c.in_bytes(r), out_at[size_t(r)] + c.out_bytes(r)) : 0;
    storage[size_t(r)].assign(size, kSentinel);
    if (d) std::copy(in[size_t(r)].begin(), in[size_t(r)].end(), storage[size_t(r)].begin() + long(in_at[size_t(r)]));
    // The reference sees what MPI promises: out's bytes as they are before the call.
    if (d) out[size_t(r)] = Bytes(storage[size_t(r)].begin() + long(out_at[size_t(r)]),
                                  storage[size_t(r)].begin() + long(out_at[size_t(r)] + c.out_bytes(r)));
  }
  std::vector<Bytes> expect = reference(c, in, out);
  LocalFabric fabric(p);
  std::vector<std::string> errors(static_cast<size_t>(p));
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r)
    threads.emplace_back([&, r] {
      try {
        Schedule s = build_schedule(algo, c, model, r);
        Bytes tmp(s.tmp_bytes(r) + 1), aside;
        Bindings bind{in[size_t(r)].data(), out[size_t(r)].data(), tmp.data()};
        if (c.in_place_offset(r)) {
          uint8_t* base = storage[size_t(r)].data();
          bind.in = base + in_at[size_t(r)];
          bind.out = base + out_at[size_t(r)];
          if (copy_aside) {
            aside.assign(base + in_at[size_t(r)], base + in_at[size_t(r)] + c.in_bytes(r));
            bind.in = aside.data();
          }
        }
        ReduceFn k = is_reduction(c.op) ? reduce_kernel(ReduceOp::sum, int_type(c.elem_size)) : nullptr;
        execute(s, r, bind, k, fabric.endpoint(r));
      } catch (const std::exception& e) {
        errors[size_t(r)] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < p; ++r) {
    ASSERT_EQ(errors[size_t(r)], "") << algo << " " << c.describe() << " rank " << r;
    if (c.op == CollOp::exscan && r == 0) continue;
    Bytes got = c.in_place_offset(r) ? Bytes(storage[size_t(r)].begin() + long(out_at[size_t(r)]),
                                             storage[size_t(r)].begin() + long(out_at[size_t(r)] + c.out_bytes(r)))
                                     : out[size_t(r)];
    ASSERT_EQ(got, expect[size_t(r)]) << algo << " in place " << c.describe() << " rank " << r;
  }
}

TEST_P(Executor, InPlaceMatchesTheReference) {
  const Algorithm& a = find_algorithm(GetParam());
  auto model = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  for (CollOp op : a.ops) {
    if (op == CollOp::bcast || op == CollOp::barrier) continue;
    for (int p : {1, 2, 3, 5, 8})
      for (int root : {0, p - 1})
        for (uint64_t bytes : {7, 96}) {
          if (!has_root(op) && root) continue;
          for (int variant : {0, 2}) {
            if (variant && !hetcoll::testing::has_variants(op)) continue;
            run_in_place(a, make_test_collective(op, p, root, bytes, variant), *model);
          }
        }
  }
}

// hub_allreduce in every setting the planner may pick (any hub, segments of
// one element to the whole vector, windows of one segment and more), with
// real data, as the MPI layer runs it and in place.
TEST(ExecutorHubAllreduce, EverySettingMatchesTheReference) {
  auto model = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  const Algorithm& a = find_algorithm("hub_allreduce");
  for (int p : {2, 3, 5})
    for (uint64_t bytes : {8, 1000, 8192})
      for (int variant : {0, 2}) {
        const Collective c = make_test_collective(CollOp::allreduce, p, 0, bytes, variant);
        for (int hub = 0; hub < p; ++hub)
          for (int window : {1, 3})
            for (uint64_t seg : {uint64_t(c.elem_size), uint64_t(40), bytes}) {
              const std::string spec = "hub_allreduce[hub=" + std::to_string(hub) + ",window=" +
                                       std::to_string(window) + ",chain=" + std::to_string(window == 3) +
                                       ",seg=" + std::to_string(seg) + "]";
              for (bool optimized : {false, true}) run_case(spec, c, *model, optimized, optimized ? 1 : 3);
              run_in_place(a, c, *model, spec);
            }
      }
}

// hierarchical allreduce by shares (each subnet owns a share sized to its
// uplink) with real data, on machines with several subnets, subnets of one
// host and hosts of several ranks, every rank building only its own
// program, as the MPI layer runs it and in place.
TEST(ExecutorHierarchicalShares, RealDataMatchesTheReference) {
  const Algorithm& a = find_algorithm("hierarchical");
  size_t cases = 0;
  for (const char* spec : {"cluster:subnets=3+2+2", "cluster:subnets=3+3+2,ranks=2,layout=round",
                           "cluster:subnets=1+4+2,ranks=2", "cluster:subnets=2+2"}) {
    auto model = parse_model(spec);
    const int p = model->ranks();
    for (uint64_t bytes : {8, 1000, 8192, 100000})
      for (int variant : {0, 2}) {
        const Collective c = make_test_collective(CollOp::allreduce, p, 0, bytes, variant);
        for (const char* algo : {"hierarchical[shares=1]", "hierarchical[pieces=3,shares=1]"}) {
          for (bool optimized : {false, true}) run_case(algo, c, *model, optimized, optimized ? 1 : 64);
          run_in_place(a, c, *model, algo);
          ++cases;
        }
      }
  }
  EXPECT_EQ(cases, 64u);
}

TEST(Executor, OneRankProgramsEqualTheFullSchedule) {
  auto model = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  for (auto& a : registry())
    for (CollOp op : a.ops)
      for (int p : {5, 12}) {
        Collective c = make_test_collective(op, p, p - 1, 999, 2);
        Schedule full = build_schedule(a.name, c, *model);
        for (int r = 0; r < p; ++r) {
          Schedule mine = build_schedule(a.name, c, *model, r);
          ASSERT_EQ(mine.num_ops(r), full.num_ops(r)) << a.name << " rank " << r;
          EXPECT_EQ(mine.tmp_bytes(r), full.tmp_bytes(r)) << a.name << " rank " << r;
          for (size_t i = 0; i < full.num_ops(r); ++i) {
            const Op &x = full.op(r, i), &y = mine.op(r, i);
            ASSERT_TRUE(x.kind == y.kind && x.peer == y.peer && x.slice().str() == y.slice().str() &&
                        std::vector<uint32_t>(full.deps_begin(r, i), full.deps_end(r, i)) ==
                            std::vector<uint32_t>(mine.deps_begin(r, i), mine.deps_end(r, i)))
                << a.name << " " << c.describe() << " rank " << r << " op " << i;
          }
        }
      }
}

std::vector<std::string> all_names() {
  std::vector<std::string> v;
  for (auto& a : registry()) v.push_back(a.name);
  return v;
}
INSTANTIATE_TEST_SUITE_P(Registry, Executor, ::testing::ValuesIn(all_names()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });
}  // namespace

// The executor folds input copies into the reductions that first touch the
// bytes (executor.hpp); the real-data matrix above checks the results, this
// checks that the folding happens where it should and only there.
TEST(ExecutorCompile, FoldsInputCopiesIntoReductions) {
  auto model = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  auto fused = [&](const std::string& algo, Collective c, int rank, bool forward) {
    Schedule s = build_schedule(algo, c, *model, rank);
    if (forward) s = forward_input_copies(s);
    return compile(s, rank, 1 << 15, 1).fused_copies;
  };
  Collective red = Collective::make(CollOp::reduce, 2, 1024, 0, 8);
  EXPECT_EQ(fused("binomial_reduce", red, 0, false), 1u);  // copy out=in; reduce out+=tmp
  EXPECT_EQ(fused("chain_reduce[seg=256]", red, 0, false), 1u);
  Collective all = Collective::make(CollOp::allreduce, 2, 1024, 0, 8);
  // Rabenseifner sends half of the copy: only once the send reads `in`.
  EXPECT_EQ(fused("rabenseifner_allreduce", all, 0, false), 0u);
  EXPECT_EQ(fused("rabenseifner_allreduce", all, 0, true), 1u);
  Collective in_place = all;
  in_place.in_place = true;
  EXPECT_EQ(fused("recursive_doubling_allreduce", in_place, 0, true), 0u);
  // A broadcast has no input copy to fold.
  EXPECT_EQ(fused("binomial_tree", Collective::make(CollOp::bcast, 4, 1000), 1, true), 0u);
}

// A transport that records what the executor does with the send port: the
// order sends are posted in and how many are in flight at once.
class PortRecorder : public Transport {
 public:
  explicit PortRecorder(Transport& t) : t_(t) {}
  int rank() const override { return t_.rank(); }
  int size() const override { return t_.size(); }
  int tag_limit() const override { return t_.tag_limit(); }
  Request isend(const void* buf, size_t bytes, int peer, int tag) override {
    Request r = t_.isend(buf, bytes, peer, tag);
    sends.insert(r);
    posted.push_back({peer, tag});
    max_in_flight = std::max(max_in_flight, sends.size());
    return r;
  }
  Request irecv(void* buf, size_t bytes, int peer, int tag) override { return t_.irecv(buf, bytes, peer, tag); }
  void wait_some(std::vector<Request>& done) override {
    size_t before = done.size();
    t_.wait_some(done);
    for (size_t k = before; k < done.size(); ++k) sends.erase(done[k]);
  }
  void send(const void* buf, size_t bytes, int peer, int tag) override {
    posted.push_back({peer, tag});
    max_in_flight = std::max(max_in_flight, sends.size() + 1);
    t_.send(buf, bytes, peer, tag);
  }
  std::set<Request> sends;
  std::vector<std::pair<int, int>> posted;  // (peer, tag) in posting order
  size_t max_in_flight = 0;

 private:
  Transport& t_;
};

TEST(ExecutorSendPort, SendsLeaveInProgramOrderWithAtMostPortsInFlight) {
  auto model = parse_model("hockney:alpha=2us,beta=0.1ns");
  const int p = 7;
  size_t saw_more_than_one = 0;
  for (const char* algo : {"star_bcast", "binomial_tree", "chain_bcast", "spread_alltoall", "bruck_alltoall",
                           "scatter_collect", "rabenseifner_allreduce", "star_scatter"}) {
    const Algorithm& a = find_algorithm(algo);
    for (int ports : {1, 2, 3}) {
      Collective c = make_test_collective(a.ops.front(), p, 0, 4096, 0);
      LocalFabric fabric(p);
      std::vector<std::string> errors(p);
      std::vector<std::vector<std::pair<int, int>>> expected(p), posted(p);
      std::vector<size_t> most(p);
      std::vector<std::thread> threads;
      for (int r = 0; r < p; ++r)
        threads.emplace_back([&, r] {
          try {
            Schedule s = optimize_for_execution(build_schedule(algo, c, *model, r));
            ExecProgram prog = compile(s, r, fabric.endpoint(r).tag_limit(), ports);
            for (uint32_t i : prog.sends) expected[r].push_back({prog.ops[i].peer, prog.tag[i]});
            Bytes in(c.in_bytes(r) + 1), out(c.out_bytes(r) + 1), tmp(s.tmp_bytes(r) + 1);
            PortRecorder rec(fabric.endpoint(r));
            ExecScratch x;
            ReduceFn k = is_reduction(c.op) ? reduce_kernel(ReduceOp::sum, ElemType::i8) : nullptr;
            run(prog, {in.data(), out.data(), tmp.data()}, k, rec, x);
            posted[r] = rec.posted;
            most[r] = rec.max_in_flight;
          } catch (const std::exception& e) {
            errors[r] = e.what();
          }
        });
      for (auto& t : threads) t.join();
      for (int r = 0; r < p; ++r) {
        ASSERT_EQ(errors[r], "") << algo << " rank " << r;
        EXPECT_EQ(posted[r], expected[r]) << algo << " rank " << r << ": sends out of program order";
        EXPECT_LE(most[r], size_t(ports)) << algo << " rank " << r;
        saw_more_than_one += most[r] > 1;
      }
    }
  }
  EXPECT_GT(saw_more_than_one, 0u);  // with more ports, sends did overlap somewhere
}

// Non-blocking execution, as the MPI layer's progress engine does it: ONE
// thread starts, for every rank, several collectives at once (each on its
// own fabric, as each runs on its own tag space), then advances them all
// round-robin from the transports' completions until all are done. A run
// that may not block never makes a blocking call — one would hang this
// single thread — and every result equals the serial reference.
TEST(ExecutorNonBlocking, ManyRunsOfEveryRankAdvancedByOneThread) {
  auto model = parse_model("hockney:alpha=2us,beta=0.1ns,gamma=0.05ns");
  size_t runs_checked = 0;
  for (int p : {1, 2, 5, 8}) {
    // Every algorithm of every op, two sizes: a batch of concurrent runs per (p, size).
    for (uint64_t bytes : {uint64_t(0), uint64_t(1000)}) {
      struct One {
        std::string algo;
        Collective c;
        std::vector<Bytes> in, out, expect, tmp;
        std::unique_ptr<LocalFabric> fabric;
        std::vector<ExecProgram> prog;
        std::vector<ExecScratch> scratch;
        std::vector<ExecRun> run;
      };
      std::vector<std::unique_ptr<One>> batch;
      for (const Algorithm& a : registry())
        for (CollOp op : a.ops) {
          const int root = has_root(op) ? p - 1 : 0;
          const Collective c = make_test_collective(op, p, root, bytes, 0);
          auto o = std::make_unique<One>();
          o->algo = a.name;
          o->c = c;
          o->in.resize(size_t(p));
          o->out.resize(size_t(p));
          for (int r = 0; r < p; ++r) {
            o->in[size_t(r)].resize(c.in_bytes(r));
            for (uint64_t i = 0; i < o->in[size_t(r)].size(); ++i) o->in[size_t(r)][i] = pattern(r + int(batch.size()), i);
            o->out[size_t(r)].assign(c.out_bytes(r), kSentinel);
          }
          if (op == CollOp::bcast)
            for (uint64_t i = 0; i < o->out[size_t(root)].size(); ++i) o->out[size_t(root)][i] = pattern(root + int(batch.size()), i);
          try {
            for (int r = 0; r < p; ++r)
              o->prog.push_back(compile(optimize_for_execution(build_schedule(a.name, c, *model, r)), r, 32768));
          } catch (const InputError&) {
            continue;  // the algorithm does not take this call (its constraints)
          }
          o->expect = reference(c, o->in, o->out);
          o->fabric = std::make_unique<LocalFabric>(p);
          o->scratch.resize(size_t(p));
          o->run.resize(size_t(p));
          for (int r = 0; r < p; ++r) o->tmp.emplace_back(o->prog[size_t(r)].tmp_bytes + 1);
          batch.push_back(std::move(o));
        }
      // Start everything (rank by rank, run by run), then advance round-robin.
      for (auto& o : batch)
        for (int r = 0; r < p; ++r) {
          ReduceFn k = is_reduction(o->c.op) ? reduce_kernel(ReduceOp::sum, int_type(o->c.elem_size)) : nullptr;
          o->run[size_t(r)].start(o->prog[size_t(r)], {o->in[size_t(r)].data(), o->out[size_t(r)].data(), o->tmp[size_t(r)].data()},
                                  k, o->fabric->endpoint(r), o->scratch[size_t(r)], /*may_block=*/false);
        }
      for (size_t round = 0;; ++round) {
        ASSERT_LT(round, size_t(1) << 22) << "no progress";
        bool all = true;
        for (auto& o : batch)
          for (int r = 0; r < p; ++r) {
            ExecRun& run = o->run[size_t(r)];
            if (run.finished()) continue;
            all = false;
            std::vector<Transport::Request> done;
            o->fabric->endpoint(r).test_some(done);
            if (!done.empty()) run.advance(done);
          }
        if (all) break;
      }
      for (auto& o : batch)
        for (int r = 0; r < p; ++r) {
          if (o->c.op == CollOp::exscan && r == 0) continue;
          ASSERT_EQ(o->out[size_t(r)], o->expect[size_t(r)]) << o->algo << " " << o->c.describe() << " rank " << r;
          ++runs_checked;
        }
    }
  }
  EXPECT_GT(runs_checked, 500u);
}
