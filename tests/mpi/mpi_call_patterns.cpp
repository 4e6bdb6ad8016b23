// Call patterns a demanding MPI user has, each checked against the native
// library (PMPI_*) in the same run:
//   histories  ranks whose call histories differ: two communicators that
//              share ranks, calls of one size class on both sides of a
//              crossover of the planner and of an override boundary,
//              the same from two threads (needs >= 3 ranks)
//   datatypes  permuted type maps (transpose by datatype, a struct whose
//              blocks are out of order) in every data-moving collective
//   errors     the user's error handler (set after the first collective),
//              MPI_DATATYPE_NULL, bad overrides in the C API, arguments the
//              standard says are ignored (garbage on the ranks where they
//              are not significant)
//   bigcount   a non-contiguous bcast of more than 2^31 packed bytes, and
//              an element larger than 2 GiB (2 ranks, ~14 GB of memory)
//   hang       a rank that arrives late: the watchdog reports what the
//              others wait for (run with HETCOLL_HANG_TIMEOUT=1)
//   mpirun -n K mpi_call_patterns SECTION
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "config/settings.hpp"
#include "hetcoll.h"
#include "plan/planner.hpp"

using namespace hetcoll;

namespace {

int world_rank = 0, world_size = 1;
std::atomic<long> failures{0}, checks{0};

void report(bool ok, const std::string& what) {
  ++checks;
  if (ok) return;
  if (++failures <= 200) std::fprintf(stderr, "[world rank %d] FAIL %s\n", world_rank, what.c_str());
}

std::string algo_of(MPI_Comm comm) {
  char buf[256];
  hetcoll_last_algorithm(comm, buf, sizeof buf);
  return buf;
}

// Two communicators of world_size - 1 ranks that share all but one: A
// without the last rank, B without the first (MPI_COMM_NULL where absent).
struct Overlap {
  MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
  Overlap() {
    MPI_Comm_split(MPI_COMM_WORLD, world_rank < world_size - 1 ? 0 : MPI_UNDEFINED, world_rank, &a);
    MPI_Comm_split(MPI_COMM_WORLD, world_rank > 0 ? 0 : MPI_UNDEFINED, world_rank, &b);
  }
  ~Overlap() {
    if (a != MPI_COMM_NULL) MPI_Comm_free(&a);
    if (b != MPI_COMM_NULL) MPI_Comm_free(&b);
  }
};

// One collective on `comm` with `count` elements per rank (doubles for
// reductions, bytes otherwise), hetcoll against native, compared.
void check_call(MPI_Comm comm, CollOp op, int count, const std::string& what) {
  if (comm == MPI_COMM_NULL) return;
  int r, p;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  const size_t n = size_t(count);
  std::mt19937 rng(unsigned(count * 31 + r));
  switch (op) {
    case CollOp::allreduce:
    case CollOp::reduce:
    case CollOp::reduce_scatter_block: {
      const size_t in_n = op == CollOp::reduce_scatter_block ? n * size_t(p) : n;
      std::vector<double> in(in_n), h(in_n, -1), nat(in_n, -1);
      for (auto& x : in) x = double(rng() % 1000) / 8;  // exact sums
      if (op == CollOp::allreduce) {
        MPI_Allreduce(in.data(), h.data(), count, MPI_DOUBLE, MPI_SUM, comm);
        PMPI_Allreduce(in.data(), nat.data(), count, MPI_DOUBLE, MPI_SUM, comm);
      } else if (op == CollOp::reduce) {
        MPI_Reduce(in.data(), h.data(), count, MPI_DOUBLE, MPI_SUM, 1 % p, comm);
        PMPI_Reduce(in.data(), nat.data(), count, MPI_DOUBLE, MPI_SUM, 1 % p, comm);
      } else {
        MPI_Reduce_scatter_block(in.data(), h.data(), count, MPI_DOUBLE, MPI_SUM, comm);
        PMPI_Reduce_scatter_block(in.data(), nat.data(), count, MPI_DOUBLE, MPI_SUM, comm);
      }
      report(h == nat, what + " (" + algo_of(comm) + ")");
      break;
    }
    case CollOp::bcast: {
      std::vector<char> h(n), nat(n);
      if (r == 0)
        for (auto& x : h) x = char(rng());
      nat = h;
      MPI_Bcast(h.data(), count, MPI_BYTE, 0, comm);
      PMPI_Bcast(nat.data(), count, MPI_BYTE, 0, comm);
      report(h == nat, what + " (" + algo_of(comm) + ")");
      break;
    }
    case CollOp::allgather:
    case CollOp::alltoall: {
      const size_t in_n = op == CollOp::alltoall ? n * size_t(p) : n;
      std::vector<char> in(in_n), h(n * size_t(p)), nat(n * size_t(p));
      for (auto& x : in) x = char(rng());
      if (op == CollOp::allgather) {
        MPI_Allgather(in.data(), count, MPI_BYTE, h.data(), count, MPI_BYTE, comm);
        PMPI_Allgather(in.data(), count, MPI_BYTE, nat.data(), count, MPI_BYTE, comm);
      } else {
        MPI_Alltoall(in.data(), count, MPI_BYTE, h.data(), count, MPI_BYTE, comm);
        PMPI_Alltoall(in.data(), count, MPI_BYTE, nat.data(), count, MPI_BYTE, comm);
      }
      report(h == nat, what + " (" + algo_of(comm) + ")");
      break;
    }
    default:
      break;
  }
}

// Sizes a < b of one size class for which the planner, planning each exact
// size, would choose differently on a group of p ranks: the calls that made
// ranks with different histories disagree.
std::vector<std::pair<int, int>> split_classes(CollOp op, int p, uint32_t elem) {
  auto model = parse_model(default_settings().profile);
  std::vector<std::pair<int, int>> out;
  for (int cls = size_class(64); cls < size_class(uint64_t(1) << 22) && out.size() < 3; ++cls) {
    const uint64_t a = (size_class_floor(cls) + elem - 1) / elem, b = (size_class_floor(cls + 1) - 1) / elem;
    if (a >= b) continue;
    Collective ca = Collective::make(op, p, a, 0, elem), cb = Collective::make(op, p, b, 0, elem);
    if (plan(ca, *model).best().algorithm != plan(cb, *model).best().algorithm) out.push_back({int(a), int(b)});
  }
  return out;
}

void histories() {
  if (world_size < 3) {
    if (world_rank == 0) std::printf("histories: needs 3 ranks or more; skipped\n");
    return;
  }
  Overlap ov;
  const int p = world_size - 1;
  // The case found, and every class the exact sizes would split.
  struct Case {
    CollOp op;
    int a, b;
  };
  std::vector<Case> cases = {{CollOp::allreduce, 7000, 8000}};
  for (CollOp op : {CollOp::allreduce, CollOp::bcast, CollOp::reduce, CollOp::allgather, CollOp::alltoall,
                    CollOp::reduce_scatter_block})
    for (auto [a, b] : split_classes(op, p, is_reduction(op) ? 8 : 1)) cases.push_back({op, a, b});
  if (world_rank == 0) std::printf("histories: %zu split size classes\n", cases.size());
  for (const Case& c : cases) {
    // A sees the small call first; B — where one rank has no history — the large one.
    std::string what = std::string(coll_op_name(c.op)) + " " + std::to_string(c.a) + " then " + std::to_string(c.b);
    check_call(ov.a, c.op, c.a, what + " on A");
    check_call(ov.b, c.op, c.b, what + " on B");
    check_call(ov.a, c.op, c.b, what + " again on A");
    check_call(ov.b, c.op, c.a, what + " again on B");
  }
  // An override boundary inside one size class.
  hetcoll_set_algorithm("bcast:0-1000:@star_bcast#1000-inf:@binomial_tree");
  check_call(ov.a, CollOp::bcast, 990, "bcast 990 B on A (override star below 1000)");
  check_call(ov.b, CollOp::bcast, 1010, "bcast 1010 B on B (override binomial from 1000)");
  if (ov.b != MPI_COMM_NULL) report(algo_of(ov.b) == "binomial_tree", "1010 B follows the binomial rule: " + algo_of(ov.b));
  check_call(ov.a, CollOp::bcast, 1010, "bcast 1010 B on A");
  if (ov.a != MPI_COMM_NULL) report(algo_of(ov.a) == "binomial_tree", "1010 B on A: " + algo_of(ov.a));
  check_call(ov.b, CollOp::bcast, 990, "bcast 990 B on B");
  if (ov.b != MPI_COMM_NULL) report(algo_of(ov.b) == "star_bcast", "990 B on B: " + algo_of(ov.b));
  hetcoll_set_algorithm("");

  // Two threads, each on its own communicator, with sizes of one class on
  // both sides of a crossover in opposite orders: which thread plans a
  // class first differs from rank to rank.
  int level = 0;
  MPI_Query_thread(&level);
  if (level == MPI_THREAD_MULTIPLE) {
    hetcoll_set_model("");  // a fresh decision cache
    MPI_Comm ta, tb;
    MPI_Comm_dup(MPI_COMM_WORLD, &ta);
    MPI_Comm_dup(MPI_COMM_WORLD, &tb);
    auto pairs = split_classes(CollOp::allreduce, world_size, 8);
    if (pairs.empty()) pairs = {{7000, 8000}};
    std::thread t1([&] {
      for (auto [a, b] : pairs) {
        check_call(ta, CollOp::allreduce, a, "thread 1 allreduce (small first)");
        check_call(ta, CollOp::allreduce, b, "thread 1 allreduce (large second)");
      }
    });
    std::thread t2([&] {
      for (auto [a, b] : pairs) {
        check_call(tb, CollOp::allreduce, b, "thread 2 allreduce (large first)");
        check_call(tb, CollOp::allreduce, a, "thread 2 allreduce (small second)");
      }
    });
    t1.join();
    t2.join();
    MPI_Comm_free(&ta);
    MPI_Comm_free(&tb);
  }
}

// ---------------------------------------------------------------- datatypes

struct Typed {
  MPI_Datatype type;
  const char* name;
};

// Byte-for-byte: every byte of the receive buffers (gaps included) must be
// as the native library leaves it.
void datatypes() {
  const int p = world_size, r = world_rank;
  std::vector<Typed> types;
  // The transpose idiom: column-major view of a 4x4 matrix of doubles
  // (lb 0, size = extent, blocks out of order).
  MPI_Datatype col, transpose;
  MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &col);
  MPI_Type_create_hvector(4, 1, 8, col, &transpose);
  MPI_Type_commit(&transpose);
  types.push_back({transpose, "hvector(4,1,8, vector(4,1,4,double))"});
  // {int at 4, int at 0}: size 8, extent 8, lb 0 — swapped.
  MPI_Datatype swapped;
  int lens[2] = {1, 1};
  MPI_Aint disp[2] = {4, 0};
  MPI_Datatype ints[2] = {MPI_INT, MPI_INT};
  MPI_Type_create_struct(2, lens, disp, ints, &swapped);
  MPI_Type_commit(&swapped);
  types.push_back({swapped, "struct {int@4, int@0}"});
  // Indexed blocks in reverse order.
  MPI_Datatype reversed;
  int blens[3] = {2, 1, 1};
  int bdisp[3] = {2, 1, 0};
  MPI_Type_indexed(3, blens, bdisp, MPI_SHORT, &reversed);
  MPI_Type_commit(&reversed);
  types.push_back({reversed, "indexed {2@2, 1@1, 1@0} of short"});

  std::mt19937 rng(unsigned(77 + r));
  auto fill = [&](std::vector<char>& v) {
    for (auto& x : v) x = char(rng());
  };
  for (const Typed& t : types) {
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t.type, &lb, &ext);
    const size_t E = size_t(ext);
    for (int n : {1, 3}) {
      const size_t N = size_t(n);
      std::string what = std::string(t.name) + " x" + std::to_string(n) + ": ";
      {  // bcast
        std::vector<char> h(N * E), nat;
        fill(h);
        nat = h;
        MPI_Bcast(h.data(), n, t.type, p - 1, MPI_COMM_WORLD);
        PMPI_Bcast(nat.data(), n, t.type, p - 1, MPI_COMM_WORLD);
        report(h == nat, what + "bcast");
      }
      {  // alltoall into the type, from contiguous bytes
        int sz;
        MPI_Type_size(t.type, &sz);
        std::vector<char> in(N * size_t(sz) * size_t(p)), h(N * E * size_t(p)), nat;
        fill(in);
        fill(h);
        nat = h;
        MPI_Alltoall(in.data(), n * sz, MPI_BYTE, h.data(), n, t.type, MPI_COMM_WORLD);
        PMPI_Alltoall(in.data(), n * sz, MPI_BYTE, nat.data(), n, t.type, MPI_COMM_WORLD);
        report(h == nat, what + "alltoall bytes -> type");
        std::vector<char> back(in.size()), nback(in.size());
        MPI_Alltoall(h.data(), n, t.type, back.data(), n * sz, MPI_BYTE, MPI_COMM_WORLD);
        PMPI_Alltoall(nat.data(), n, t.type, nback.data(), n * sz, MPI_BYTE, MPI_COMM_WORLD);
        report(back == nback, what + "alltoall type -> bytes");
      }
      // The v-collectives, every rank using the type on both sides.
      std::vector<int> counts(static_cast<size_t>(p)), displs(static_cast<size_t>(p));
      int span = 0;
      for (int i = p - 1; i >= 0; --i) {
        counts[size_t(i)] = n + i % 2;
        displs[size_t(i)] = span;
        span += counts[size_t(i)] + 1;
      }
      {
        std::vector<char> in(size_t(counts[size_t(r)]) * E), h(size_t(span) * E), nat;
        fill(in);
        fill(h);
        nat = h;
        MPI_Gatherv(in.data(), counts[size_t(r)], t.type, h.data(), counts.data(), displs.data(), t.type, 0, MPI_COMM_WORLD);
        PMPI_Gatherv(in.data(), counts[size_t(r)], t.type, nat.data(), counts.data(), displs.data(), t.type, 0, MPI_COMM_WORLD);
        report(r != 0 || h == nat, what + "gatherv");
        MPI_Allgatherv(in.data(), counts[size_t(r)], t.type, h.data(), counts.data(), displs.data(), t.type, MPI_COMM_WORLD);
        PMPI_Allgatherv(in.data(), counts[size_t(r)], t.type, nat.data(), counts.data(), displs.data(), t.type, MPI_COMM_WORLD);
        report(h == nat, what + "allgatherv");
        std::vector<char> out(in.size()), nout(in.size());
        MPI_Scatterv(h.data(), counts.data(), displs.data(), t.type, out.data(), counts[size_t(r)], t.type, 0, MPI_COMM_WORLD);
        PMPI_Scatterv(nat.data(), counts.data(), displs.data(), t.type, nout.data(), counts[size_t(r)], t.type, 0, MPI_COMM_WORLD);
        report(out == nout, what + "scatterv");
      }
      {
        // alltoallv: rank r sends (r + j + n) % 3 + n elements to rank j — symmetric, as MPI requires.
        std::vector<int> c2(static_cast<size_t>(p)), d2(static_cast<size_t>(p));
        int a2 = 0;
        for (int j = p - 1; j >= 0; --j) {
          c2[size_t(j)] = (r + j + n) % 3 + n;
          d2[size_t(j)] = a2;
          a2 += c2[size_t(j)] + 1;
        }
        std::vector<char> in(size_t(a2) * E), h(size_t(a2) * E), nat;
        fill(in);
        fill(h);
        nat = h;
        MPI_Alltoallv(in.data(), c2.data(), d2.data(), t.type, h.data(), c2.data(), d2.data(), t.type, MPI_COMM_WORLD);
        PMPI_Alltoallv(in.data(), c2.data(), d2.data(), t.type, nat.data(), c2.data(), d2.data(), t.type, MPI_COMM_WORLD);
        report(h == nat, what + "alltoallv");
      }
      {
        std::vector<char> in(N * E), h(N * E * size_t(p)), nat;
        fill(in);
        fill(h);
        nat = h;
        MPI_Gather(in.data(), n, t.type, h.data(), n, t.type, p / 2, MPI_COMM_WORLD);
        PMPI_Gather(in.data(), n, t.type, nat.data(), n, t.type, p / 2, MPI_COMM_WORLD);
        report(r != p / 2 || h == nat, what + "gather");
        MPI_Allgather(in.data(), n, t.type, h.data(), n, t.type, MPI_COMM_WORLD);
        PMPI_Allgather(in.data(), n, t.type, nat.data(), n, t.type, MPI_COMM_WORLD);
        report(h == nat, what + "allgather");
        std::vector<char> out(N * E), nout(N * E);
        MPI_Scatter(h.data(), n, t.type, out.data(), n, t.type, 0, MPI_COMM_WORLD);
        PMPI_Scatter(nat.data(), n, t.type, nout.data(), n, t.type, 0, MPI_COMM_WORLD);
        report(out == nout, what + "scatter");
      }
    }
  }
  for (auto& t : types) MPI_Type_free(&t.type);
  MPI_Type_free(&col);

  // A negative extent on some ranks only (the blocks land in reverse order
  // there), plain ints on the others: legal, since the type signatures match.
  MPI_Datatype rev;
  MPI_Type_create_resized(MPI_INT, 0, -MPI_Aint(sizeof(int)), &rev);
  MPI_Type_commit(&rev);
  {
    std::vector<int> counts(static_cast<size_t>(p), 1), displs(static_cast<size_t>(p));
    for (int i = 0; i < p; ++i) displs[size_t(i)] = i;
    std::vector<int> h(size_t(p) + 2, -1), nat = h;
    const int mine = 100 + r;
    int* hlast = h.data() + p;  // the receive buffer's last element
    int* nlast = nat.data() + p;
    MPI_Gatherv(&mine, 1, MPI_INT, hlast, counts.data(), displs.data(), rev, 0, MPI_COMM_WORLD);
    PMPI_Gatherv(&mine, 1, MPI_INT, nlast, counts.data(), displs.data(), rev, 0, MPI_COMM_WORLD);
    report(r != 0 || h == nat, "gatherv into a negative extent at the root");
    const bool odd = r % 2 == 1;
    MPI_Allgatherv(&mine, 1, MPI_INT, odd ? hlast : h.data() + 1, counts.data(), displs.data(), odd ? rev : MPI_INT,
                   MPI_COMM_WORLD);
    PMPI_Allgatherv(&mine, 1, MPI_INT, odd ? nlast : nat.data() + 1, counts.data(), displs.data(), odd ? rev : MPI_INT,
                    MPI_COMM_WORLD);
    report(h == nat, "allgatherv into a negative extent on odd ranks");
    int out = -1, nout = -2;
    MPI_Scatterv(hlast, counts.data(), displs.data(), rev, &out, 1, MPI_INT, 0, MPI_COMM_WORLD);
    PMPI_Scatterv(nlast, counts.data(), displs.data(), rev, &nout, 1, MPI_INT, 0, MPI_COMM_WORLD);
    report(out == nout, "scatterv from a negative extent at the root");
  }
  MPI_Type_free(&rev);

  // Reductions on pair types with holes (MPI_DOUBLE_INT: 12 bytes of data
  // in 16) leave the holes of the receive buffer alone, as MPI does.
  {
    struct DI {
      double v;
      int i;
    };
    const int n = 37;
    std::vector<DI> in(n);
    for (int k = 0; k < n; ++k) in[size_t(k)] = {double((k * 7 + r * 3) % 5), r};
    for (MPI_Op op : {MPI_MINLOC, MPI_MAXLOC}) {
      std::vector<unsigned char> h(n * sizeof(DI), 0xaa), nat = h;
      MPI_Allreduce(in.data(), h.data(), n, MPI_DOUBLE_INT, op, MPI_COMM_WORLD);
      PMPI_Allreduce(in.data(), nat.data(), n, MPI_DOUBLE_INT, op, MPI_COMM_WORLD);
      report(h == nat, "allreduce on MPI_DOUBLE_INT: every byte, holes included");
      std::fill(h.begin(), h.end(), 0xaa);
      nat = h;
      MPI_Reduce(in.data(), h.data(), n, MPI_DOUBLE_INT, op, p - 1, MPI_COMM_WORLD);
      PMPI_Reduce(in.data(), nat.data(), n, MPI_DOUBLE_INT, op, p - 1, MPI_COMM_WORLD);
      report(h == nat, "reduce on MPI_DOUBLE_INT: every byte, holes included");
      std::vector<unsigned char> hi(n * sizeof(DI), 0x55), ni;
      std::memcpy(hi.data(), in.data(), hi.size());
      for (int k = 0; k < n; ++k) std::memset(hi.data() + k * sizeof(DI) + 12, 0x77, 4);  // the holes
      ni = hi;
      MPI_Scan(MPI_IN_PLACE, hi.data(), n, MPI_DOUBLE_INT, op, MPI_COMM_WORLD);
      PMPI_Scan(MPI_IN_PLACE, ni.data(), n, MPI_DOUBLE_INT, op, MPI_COMM_WORLD);
      report(hi == ni, "scan in place on MPI_DOUBLE_INT: every byte, holes included");
    }
    report(algo_of(MPI_COMM_WORLD).find("scan") != std::string::npos, "hetcoll ran the pair scan: " + algo_of(MPI_COMM_WORLD));
  }
}

// ---------------------------------------------------------------- errors

void errors() {
  const int p = world_size, r = world_rank;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  // A first collective, then MPI_ERRORS_RETURN: the handler in effect at
  // the time of the failing call counts.
  int x = r;
  MPI_Bcast(&x, 1, MPI_INT, 0, comm);
  report(x == 0, "bcast before the handler");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  // A mismatched bcast: the root sends 100 ints, the others expect 50.
  // Native MPI reports MPI_ERR_TRUNCATE on the receivers.
  if (p >= 2) {
    std::vector<int> buf(100, r == 0 ? 7 : -1);
    hetcoll_set_algorithm("bcast:@star_bcast");  // every receiver hears from the root: a truncation, not a hang
    int rc = MPI_Bcast(buf.data(), r == 0 ? 100 : 50, MPI_INT, 0, comm);
    hetcoll_set_algorithm("");
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    if (r != 0) report(cls == MPI_ERR_TRUNCATE, "mismatched bcast returns MPI_ERR_TRUNCATE, got class " + std::to_string(cls));
    // The communicator still works.
    MPI_Barrier(comm);
    std::vector<int> v(10, r), w(10);
    int rc2 = MPI_Allreduce(v.data(), w.data(), 10, MPI_INT, MPI_SUM, comm);
    report(rc2 == MPI_SUCCESS && w[3] == p * (p - 1) / 2, "allreduce after the error");
  }
  // The same with the planner's algorithms (intermediate ranks truncate and
  // go on: nobody is left waiting), for a bcast and a gather, each followed
  // by correct collectives that must give right results (the failed call's
  // messages cannot match later ones).
  if (p >= 3) {
    const int n = 3000;
    std::vector<int> buf(size_t(4 * n), r == 0 ? 5 : -1), out(size_t(4 * n) * size_t(p));
    // Sizes of one size class, so that the ranks still agree on the
    // algorithm (they decide on their own counts, which the program made
    // differ; across classes an erroneous program may hang — the hang
    // report then says so).
    int rc = MPI_Bcast(buf.data(), r == 0 ? n + 50 : n, MPI_INT, 0, comm);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    report(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "a mismatched bcast: success or MPI_ERR_TRUNCATE");
    rc = MPI_Gather(buf.data(), r == 0 ? n : n + 1, MPI_INT, out.data(), n, MPI_INT, 0, comm);
    cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    report(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "a mismatched gather: success or MPI_ERR_TRUNCATE");
    long wrong = 0;
    for (int it = 0; it < 5; ++it) {
      for (int i = 0; i < 2 * n; ++i) buf[size_t(i)] = r == 0 ? i + it : -1;
      rc = MPI_Bcast(buf.data(), 2 * n, MPI_INT, 0, comm);
      for (int i = 0; i < 2 * n; ++i) wrong += buf[size_t(i)] != i + it;
      int x = r + it, y = -1;
      rc |= MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm);
      wrong += y != p * (p - 1) / 2 + p * it;
      for (int i = 0; i < n; ++i) buf[size_t(i)] = r * 1000 + i;
      rc |= MPI_Allgather(buf.data(), n, MPI_INT, out.data(), n, MPI_INT, comm);
      for (int j = 0; j < p; ++j)
        for (int i = 0; i < n; ++i) wrong += out[size_t(j * n + i)] != j * 1000 + i;
    }
    report(rc == MPI_SUCCESS && wrong == 0, "right results after mismatched calls: " + std::to_string(wrong) + " wrong");
  }
  // An uncommitted datatype: MPI_ERR_TYPE on every rank, as natively.
  {
    MPI_Datatype raw;
    MPI_Type_vector(2, 1, 2, MPI_INT, &raw);
    std::vector<int> v(8, r);
    int rc = MPI_Bcast(v.data(), 2, raw, 0, comm);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    report(cls == MPI_ERR_TYPE, "an uncommitted datatype gives MPI_ERR_TYPE, got class " + std::to_string(cls));
    MPI_Type_free(&raw);
  }
  // MPI_IN_PLACE where MPI does not allow it, and aliased buffers: the native
  // error, no crash. (Open MPI raises some of these on MPI_COMM_WORLD.)
  {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 1;
    int cls = MPI_SUCCESS, rc = MPI_Allreduce(&x, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm);
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    report(cls == MPI_ERR_BUFFER || cls == MPI_ERR_ARG, "MPI_IN_PLACE as recvbuf: class " + std::to_string(cls));
    // MPI_ERR_BUFFER from hetcoll itself: MPICH's own bcast would copy from
    // the MPI_IN_PLACE address and crash.
    rc = MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, comm);
    cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    report(cls == MPI_ERR_BUFFER, "MPI_IN_PLACE as a bcast buffer: MPI_ERR_BUFFER, got class " + std::to_string(cls));
    int a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4};
    rc = MPI_Allreduce(a, a, 4, MPI_INT, MPI_SUM, comm);
    int native = PMPI_Allreduce(b, b, 4, MPI_INT, MPI_SUM, comm);
    report((rc == MPI_SUCCESS) == (native == MPI_SUCCESS), "aliased send and receive buffers: as natively");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  }
  // A per-rank model for another number of ranks is refused when set.
  {
    std::string letters(static_cast<size_t>(p + 1), 'F');
    int st = hetcoll_set_model(("hetero:nodes=" + letters).c_str());
    report(st == HETCOLL_BAD_ARGUMENT && std::string(hetcoll_last_error()).find("the job has") != std::string::npos,
           std::string("a model of the wrong size: ") + hetcoll_last_error());
    letters.pop_back();
    report(hetcoll_set_model(("hetero:nodes=" + letters).c_str()) == HETCOLL_SUCCESS, "a model of the job's size");
    int v = r, w = 0;
    report(MPI_Allreduce(&v, &w, 1, MPI_INT, MPI_SUM, comm) == MPI_SUCCESS && w == p * (p - 1) / 2,
           "an allreduce on the per-rank model");
    hetcoll_set_model("");
  }
  // MPI_DATATYPE_NULL: the native class, no abort.
  {
    int y = 0;
    int rc = MPI_Bcast(&y, 1, MPI_DATATYPE_NULL, 0, comm);
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
    report(cls == MPI_ERR_TYPE, "MPI_Bcast with MPI_DATATYPE_NULL: class " + std::to_string(cls));
    int st = hetcoll_bcast(&y, 1, MPI_DATATYPE_NULL, 0, comm);
    report(st == HETCOLL_BAD_ARGUMENT && hetcoll_last_error_code() == MPI_ERR_TYPE,
           "hetcoll_bcast with MPI_DATATYPE_NULL: status " + std::to_string(st) + ", " + hetcoll_last_error());
    st = hetcoll_allreduce(&x, &y, -1, MPI_INT, MPI_SUM, comm);
    report(st == HETCOLL_BAD_ARGUMENT && hetcoll_last_error_code() == MPI_ERR_COUNT, "negative count");
    st = hetcoll_bcast(&y, 1, MPI_INT, p + 3, comm);
    report(st == HETCOLL_BAD_ARGUMENT && hetcoll_last_error_code() == MPI_ERR_ROOT, "root outside the group");
    st = hetcoll_allreduce(&x, &y, 1, MPI_INT, MPI_OP_NULL, comm);
    report(st == HETCOLL_BAD_ARGUMENT && hetcoll_last_error_code() == MPI_ERR_OP, "MPI_OP_NULL");
  }
  // Bad override parameters are refused when set, and the old setting stays.
  {
    report(hetcoll_set_algorithm("bcast:@star_bcast") == HETCOLL_SUCCESS, "a good override");
    int st = hetcoll_set_algorithm("bcast:@chain_bcast[seg=0]");
    report(st == HETCOLL_BAD_ARGUMENT && std::string(hetcoll_last_error()).find("seg='0'") != std::string::npos,
           std::string("seg=0 refused: ") + hetcoll_last_error());
    int y = r == 1 % p ? 42 : 0;
    report(hetcoll_bcast(&y, 1, MPI_INT, 1 % p, comm) == HETCOLL_SUCCESS && y == 42, "bcast after the refused override");
    report(algo_of(comm) == "star_bcast", "the old override stays: " + algo_of(comm));
    hetcoll_set_algorithm("");
  }
  // Arguments the standard says are ignored carry garbage where they are.
  {
    const int root = p - 1;
    const bool me = r == root;
    std::vector<int> all(size_t(p) * 3), mine(3), nat(size_t(p) * 3);
    for (int i = 0; i < p * 3; ++i) all[size_t(i)] = i * 10 + 1;
    // scatter: send arguments only at the root; the root receives in place.
    std::vector<int> all_copy = all;
    int rc = MPI_Scatter(me ? all.data() : nullptr, me ? 3 : -1, me ? MPI_INT : MPI_DATATYPE_NULL,
                         me ? MPI_IN_PLACE : mine.data(), me ? -1 : 3, me ? MPI_DATATYPE_NULL : MPI_INT, root, comm);
    report(rc == MPI_SUCCESS && (me ? all == all_copy : mine[1] == r * 30 + 11), "scatter with ignored arguments");
    // gather: receive arguments only at the root, which sends in place.
    for (int i = 0; i < 3; ++i) mine[size_t(i)] = r * 100 + i;
    if (me)
      for (int i = 0; i < 3; ++i) all[size_t(root * 3 + i)] = r * 100 + i;
    rc = MPI_Gather(me ? MPI_IN_PLACE : mine.data(), me ? -1 : 3, me ? MPI_DATATYPE_NULL : MPI_INT,
                    me ? all.data() : nullptr, me ? 3 : -1, me ? MPI_INT : MPI_DATATYPE_NULL, root, comm);
    bool ok = rc == MPI_SUCCESS;
    if (me)
      for (int i = 0; i < p * 3; ++i) ok &= all[size_t(i)] == (i / 3) * 100 + i % 3;
    report(ok, "gather with ignored arguments");
    // gatherv / scatterv: counts and displacements only at the root.
    std::vector<int> counts(size_t(p), 3), displs(static_cast<size_t>(p));
    for (int i = 0; i < p; ++i) displs[size_t(i)] = 3 * i;
    rc = MPI_Gatherv(me ? MPI_IN_PLACE : mine.data(), me ? -1 : 3, me ? MPI_DATATYPE_NULL : MPI_INT,
                     me ? all.data() : nullptr, me ? counts.data() : nullptr, me ? displs.data() : nullptr,
                     me ? MPI_INT : MPI_DATATYPE_NULL, root, comm);
    ok = rc == MPI_SUCCESS;
    if (me)
      for (int i = 0; i < p * 3; ++i) ok &= all[size_t(i)] == (i / 3) * 100 + i % 3;
    report(ok, "gatherv with ignored arguments");
    rc = MPI_Scatterv(me ? all.data() : nullptr, me ? counts.data() : nullptr, me ? displs.data() : nullptr,
                      me ? MPI_INT : MPI_DATATYPE_NULL, me ? MPI_IN_PLACE : mine.data(), me ? -1 : 3,
                      me ? MPI_DATATYPE_NULL : MPI_INT, root, comm);
    report(rc == MPI_SUCCESS && (me || mine[2] == r * 100 + 2), "scatterv with ignored arguments");
    // allgather, alltoall, alltoallv in place: send count and type ignored.
    std::vector<int> g(size_t(p) * 3);
    for (int i = 0; i < 3; ++i) g[size_t(r * 3 + i)] = r * 7 + i;
    rc = MPI_Allgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, g.data(), 3, MPI_INT, comm);
    ok = rc == MPI_SUCCESS;
    for (int i = 0; i < p * 3; ++i) ok &= g[size_t(i)] == (i / 3) * 7 + i % 3;
    report(ok, "allgather in place with ignored send arguments");
    for (int i = 0; i < p * 3; ++i) g[size_t(i)] = r * 1000 + i;
    std::vector<int> ng = g;
    rc = MPI_Alltoall(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, g.data(), 3, MPI_INT, comm);
    PMPI_Alltoall(MPI_IN_PLACE, 3, MPI_INT, ng.data(), 3, MPI_INT, comm);
    report(rc == MPI_SUCCESS && g == ng, "alltoall in place with ignored send arguments");
    for (int i = 0; i < p * 3; ++i) g[size_t(i)] = r * 1000 + i;
    ng = g;
    rc = MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, g.data(), counts.data(), displs.data(),
                       MPI_INT, comm);
    PMPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, ng.data(), counts.data(), displs.data(), MPI_INT,
                   comm);
    report(rc == MPI_SUCCESS && g == ng, "alltoallv in place with ignored send arguments");
    // reduce: recvbuf only at the root.
    int v = r + 1, sum = -1;
    rc = MPI_Reduce(&v, me ? &sum : nullptr, 1, MPI_INT, MPI_SUM, root, comm);
    report(rc == MPI_SUCCESS && (!me || sum == p * (p + 1) / 2), "reduce with a NULL recvbuf off the root");
    // All of them ran in hetcoll, not the native library.
    report(!algo_of(comm).empty(), "hetcoll ran them: " + algo_of(comm));
  }
  MPI_Comm_free(&comm);
}

// ---------------------------------------------------------------- bigcount

void bigcount() {
  if (world_size != 2) {
    if (world_rank == 0) std::printf("bigcount: runs on 2 ranks; skipped\n");
    return;
  }
  const int r = world_rank;
  // 4 bytes of data in every 5: 2^29 + 2^20 elements are more than 2^31
  // packed bytes, in a buffer of 2.7 GB.
  {
    MPI_Datatype gappy;
    MPI_Type_create_resized(MPI_INT, 0, 5, &gappy);
    MPI_Type_commit(&gappy);
    const int n = (1 << 29) + (1 << 20);
    std::vector<unsigned char> buf(size_t(n) * 5, 0xee);
    if (r == 0)
      for (size_t i = 0; i < size_t(n); ++i) {
        uint32_t v = uint32_t(i * 2654435761u);
        std::memcpy(&buf[i * 5], &v, 4);
      }
    int rc = MPI_Bcast(buf.data(), n, gappy, 0, MPI_COMM_WORLD);
    bool ok = rc == MPI_SUCCESS;
    for (size_t i = 0; i < size_t(n) && ok; i += 9973) {
      uint32_t v;
      std::memcpy(&v, &buf[i * 5], 4);
      ok &= v == uint32_t(i * 2654435761u) && buf[i * 5 + 4] == 0xee;
    }
    uint32_t last;
    std::memcpy(&last, &buf[size_t(n - 1) * 5], 4);
    ok &= last == uint32_t(size_t(n - 1) * 2654435761u);
    report(ok, "bcast of " + std::to_string(size_t(n) * 4) + " packed bytes");
    report(!algo_of(MPI_COMM_WORLD).empty(), "hetcoll ran the big bcast");
    MPI_Type_free(&gappy);
  }
  // One element of more than 2 GiB with a hole: 2^30 + 8 bytes, a gap of
  // 8, 2^30 + 8 bytes.
  {
    const int half = (1 << 30) + 8;
    MPI_Datatype huge;
    MPI_Type_vector(2, half, half + 8, MPI_BYTE, &huge);
    MPI_Type_commit(&huge);
    const size_t ext = size_t(half) * 2 + 8;
    std::vector<unsigned char> buf(ext, 0x11);
    if (r == 0)
      for (size_t i = 0; i < ext; ++i) buf[i] = (i >= size_t(half) && i < size_t(half) + 8) ? 0x11 : (unsigned char)(i * 7);
    int rc = MPI_Bcast(buf.data(), 1, huge, 0, MPI_COMM_WORLD);
    bool ok = rc == MPI_SUCCESS;
    for (size_t i = 0; i < ext && ok; i += 4093)
      ok &= buf[i] == ((i >= size_t(half) && i < size_t(half) + 8) ? 0x11 : (unsigned char)(i * 7));
    ok &= buf[ext - 1] == (unsigned char)((ext - 1) * 7) && buf[size_t(half) + 3] == 0x11;
    report(ok, "bcast of one element of " + std::to_string(2 * size_t(half)) + " bytes");
    MPI_Type_free(&huge);
  }
}

// ---------------------------------------------------------------- hang

// The last rank arrives 4 s late; with HETCOLL_HANG_TIMEOUT=1 the others
// report (on stderr) what they wait for. The call then completes. Then
// the same with non-blocking collectives: the MPI_Waitall that waits for
// them reports the first still running.
void hang() {
  std::vector<double> v(1000, 1.0), w(1000);
  MPI_Allreduce(v.data(), w.data(), 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);  // hetcoll's state exists
  if (world_rank == world_size - 1) sleep(4);
  MPI_Allreduce(v.data(), w.data(), 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  report(w[0] == world_size, "the late allreduce");

  if (world_rank == world_size - 1) sleep(4);
  std::vector<double> nb(1000);
  int x = world_rank == 0 ? 42 : 0;
  MPI_Request r[2];
  MPI_Iallreduce(v.data(), nb.data(), 1000, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r[0]);
  MPI_Ibcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, &r[1]);
  MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
  report(nb[999] == world_size && x == 42, "the late MPI_Iallreduce and MPI_Ibcast");
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  const std::string section = argc > 1 ? argv[1] : "";
  if (section == "histories") histories();
  else if (section == "datatypes") datatypes();
  else if (section == "errors") errors();
  else if (section == "bigcount") bigcount();
  else if (section == "hang") hang();
  else {
    if (world_rank == 0) std::fprintf(stderr, "usage: mpi_call_patterns histories|datatypes|errors|bigcount|hang\n");
    MPI_Finalize();
    return 2;
  }
  long totals[2] = {failures.load(), checks.load()};
  PMPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0)
    std::printf("mpi_call_patterns %s p=%d: %ld checks, %ld failures\n", section.c_str(), world_size, totals[1], totals[0]);
  MPI_Finalize();
  return totals[0] ? 1 : 0;
}
