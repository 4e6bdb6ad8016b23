// A property test over random datatypes: nested vector / hvector /
// indexed / struct / resized type maps with permuted blocks, gaps, negative
// lower bounds and strides, in every collective — hetcoll's result, every
// byte of every receive buffer (the gaps included), against the native
// library's (PMPI_*) in the same run. The types are built from MPI_INT on
// every rank alike (the same seed), and each call pairs a random type with
// itself or with plain ints of the same signature.
//   mpirun -n K mpi_datatypes [ROUNDS]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace {

int world_rank = 0, world_size = 1;
long failures = 0, checks = 0;

void report(bool ok, const std::string& what) {
  ++checks;
  if (ok) return;
  if (++failures <= 100) std::fprintf(stderr, "[world rank %d] FAIL %s\n", world_rank, what.c_str());
}

struct Type {
  MPI_Datatype t;
  std::string desc;
  MPI_Aint lb, extent, tlb, textent;
  int size;  // bytes of data
};

Type describe(MPI_Datatype t, std::string desc) {
  Type x{t, std::move(desc), 0, 0, 0, 0, 0};
  MPI_Type_get_extent(t, &x.lb, &x.extent);
  MPI_Type_get_true_extent(t, &x.tlb, &x.textent);
  MPI_Type_size(t, &x.size);
  return x;
}

// Disjoint slots for `n` blocks of `span` bytes each, `gap` bytes apart,
// assigned to the blocks in a random order: the byte offset of each block.
std::vector<MPI_Aint> permuted_slots(int n, MPI_Aint span, MPI_Aint gap, std::mt19937& rng, bool reverse_only = false) {
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  if (reverse_only) std::reverse(order.begin(), order.end());
  else std::shuffle(order.begin(), order.end(), rng);
  std::vector<MPI_Aint> at(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) at[size_t(i)] = MPI_Aint(order[size_t(i)]) * (span + gap);
  return at;
}

// A random type of ints, `depth` levels deep. Every type's blocks are
// disjoint, so it may be received into.
Type random_type(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, 6), small(1, 3), gap(0, 2);
  if (depth == 0) return describe(MPI_INT, "int");
  Type child = random_type(rng, depth - 1);
  const MPI_Aint span = child.textent;  // a child's data, from its true lower bound
  MPI_Datatype t = MPI_DATATYPE_NULL;
  std::string d;
  switch (pick(rng)) {
    case 0: {  // contiguous
      int n = small(rng);
      MPI_Type_contiguous(n, child.t, &t);
      d = "contiguous(" + std::to_string(n) + ", " + child.desc + ")";
      break;
    }
    case 1: {  // vector with a gap, or a negative stride
      int count = small(rng) + 1, len = small(rng);
      // stride in extents of the child: past the block (a gap) or backwards
      int stride = child.extent >= child.textent && child.extent > 0 ? len + gap(rng) : 0;
      if (stride == 0) {  // the child's extent does not cover its data: hvector instead
        MPI_Aint bs = MPI_Aint(len) * std::max(child.extent, child.textent) + child.textent;
        MPI_Type_create_hvector(count, 1, bs + 4 * gap(rng), child.t, &t);
        d = "hvector(" + std::to_string(count) + ",1," + std::to_string(bs) + ", " + child.desc + ")";
        break;
      }
      if (rng() % 3 == 0) stride = -stride;
      MPI_Type_vector(count, len, stride, child.t, &t);
      d = "vector(" + std::to_string(count) + "," + std::to_string(len) + "," + std::to_string(stride) + ", " + child.desc + ")";
      break;
    }
    case 2: {  // hvector with a byte stride, possibly negative
      int count = small(rng) + 1;
      MPI_Aint stride = span + 4 * gap(rng) + (rng() % 2 ? 2 : 0);
      if (rng() % 3 == 0) stride = -stride;
      MPI_Type_create_hvector(count, 1, stride, child.t, &t);
      d = "hvector(" + std::to_string(count) + ",1," + std::to_string(stride) + ", " + child.desc + ")";
      break;
    }
    case 3: {  // indexed, blocks in permuted order (needs extent == span to stay disjoint)
      int n = small(rng) + 1;
      if (child.extent != child.textent || child.tlb != 0) {
        MPI_Type_contiguous(1, child.t, &t);
        d = "contiguous(1, " + child.desc + ")";
        break;
      }
      std::vector<int> lens(static_cast<size_t>(n), 1), displs(static_cast<size_t>(n));
      auto at = permuted_slots(n, span, span * gap(rng), rng);
      for (int i = 0; i < n; ++i) displs[size_t(i)] = int(at[size_t(i)] / child.extent);
      MPI_Type_indexed(n, lens.data(), displs.data(), child.t, &t);
      d = "indexed(" + std::to_string(n) + " permuted, " + child.desc + ")";
      break;
    }
    case 4: {  // hindexed, permuted byte displacements
      int n = small(rng) + 1;
      std::vector<int> lens(static_cast<size_t>(n), 1);
      auto at = permuted_slots(n, span, 2 * gap(rng), rng);
      for (auto& a : at) a -= child.tlb;
      MPI_Type_create_hindexed(n, lens.data(), at.data(), child.t, &t);
      d = "hindexed(" + std::to_string(n) + " permuted, " + child.desc + ")";
      break;
    }
    case 5: {  // struct: the child and an int, in either order (the {int@4, int@0} shape)
      std::vector<MPI_Datatype> types = {child.t, MPI_INT};
      std::vector<int> lens = {1, 1};
      bool swap = rng() % 2;
      std::vector<MPI_Aint> at(2);
      if (swap) {
        at[1] = 0;
        at[0] = 4 + gap(rng) * 4 - child.tlb;
      } else {
        at[0] = -child.tlb;
        at[1] = span + gap(rng) * 4;
      }
      MPI_Type_create_struct(2, lens.data(), at.data(), types.data(), &t);
      d = std::string("struct{") + (swap ? "int@0, " : "") + child.desc + (swap ? "" : ", int") + "}";
      break;
    }
    default: {  // resized: a negative lower bound, an extent with room to spare
      MPI_Aint lb = child.tlb - 8 * gap(rng) - (rng() % 2 ? 4 : 0);
      MPI_Aint ext = (child.tlb + child.textent - lb) + 4 * gap(rng);
      MPI_Type_create_resized(child.t, lb, ext, &t);
      d = "resized(" + child.desc + ", lb " + std::to_string(lb) + ", extent " + std::to_string(ext) + ")";
      break;
    }
  }
  MPI_Type_commit(&t);
  if (child.t != MPI_INT) MPI_Type_free(&child.t);
  Type x = describe(t, d);
  // Consecutive elements must not overlap either: resize if they would.
  if (x.extent < x.textent || x.extent <= 0) {
    MPI_Datatype r;
    MPI_Type_create_resized(t, x.lb, x.textent + (x.tlb - x.lb), &r);
    MPI_Type_commit(&r);
    MPI_Type_free(&t);
    x = describe(r, "resized(" + d + ", to its data)");
  }
  return x;
}

// A buffer for `count` elements of `t`, with margins: `base` is the
// address MPI gets.
struct Buffer {
  std::vector<char> bytes;
  MPI_Aint offset = 0;
  char* base() { return bytes.data() + offset; }
};
Buffer buffer_for(const Type& t, int count, std::mt19937& rng) {
  Buffer b;
  MPI_Aint lo = std::min<MPI_Aint>(0, t.tlb), hi = t.tlb + t.textent;
  if (count > 0) {
    MPI_Aint last = MPI_Aint(count - 1) * t.extent;
    lo = std::min(lo, t.tlb + std::min<MPI_Aint>(0, last));
    hi = std::max(hi, last + t.tlb + t.textent);
  }
  b.bytes.resize(size_t(hi - lo) + 32);
  b.offset = 16 - lo;
  for (auto& c : b.bytes) c = char(rng());
  return b;
}

// Each collective with the random type `t` on one side (or both), `n`
// elements, against the native library.
// `shared` (the same on every rank) picks roots and orders; `rng` (each
// rank its own) fills the buffers.
void exercise(const Type& t, int n, std::mt19937& shared, std::mt19937& rng, const std::string& label) {
  const int p = world_size, r = world_rank;
  const int ints = t.size / 4;  // the same data as plain ints
  const Type plain = describe(MPI_INT, "int");
  const int root = int(shared() % unsigned(p));
  auto same = [&](Buffer& h, Buffer& nat, const std::string& what) { report(h.bytes == nat.bytes, label + " " + what); };
  // bcast
  {
    Buffer h = buffer_for(t, n, rng), nat = h;
    MPI_Bcast(h.base(), n, t.t, root, MPI_COMM_WORLD);
    PMPI_Bcast(nat.base(), n, t.t, root, MPI_COMM_WORLD);
    same(h, nat, "bcast");
  }
  // gather / allgather / scatter / alltoall: the type on the receive side,
  // plain ints on the send side, then the type on both.
  for (int both = 0; both < 2; ++both) {
    const Type& st = both ? t : plain;
    const int sn = both ? n : n * ints;
    std::string how = both ? " (type both sides)" : " (ints -> type)";
    Buffer in = buffer_for(st, sn, rng), in_p = buffer_for(st, sn * p, rng);
    Buffer h = buffer_for(t, n * p, rng), nat = h;
    MPI_Gather(in.base(), sn, st.t, h.base(), n, t.t, root, MPI_COMM_WORLD);
    PMPI_Gather(in.base(), sn, st.t, nat.base(), n, t.t, root, MPI_COMM_WORLD);
    if (r == root) same(h, nat, "gather" + how);
    MPI_Allgather(in.base(), sn, st.t, h.base(), n, t.t, MPI_COMM_WORLD);
    PMPI_Allgather(in.base(), sn, st.t, nat.base(), n, t.t, MPI_COMM_WORLD);
    same(h, nat, "allgather" + how);
    Buffer o = buffer_for(t, n, rng), no = o;
    MPI_Scatter(in_p.base(), sn, st.t, o.base(), n, t.t, root, MPI_COMM_WORLD);
    PMPI_Scatter(in_p.base(), sn, st.t, no.base(), n, t.t, root, MPI_COMM_WORLD);
    same(o, no, "scatter" + how);
    MPI_Alltoall(in_p.base(), sn, st.t, h.base(), n, t.t, MPI_COMM_WORLD);
    PMPI_Alltoall(in_p.base(), sn, st.t, nat.base(), n, t.t, MPI_COMM_WORLD);
    same(h, nat, "alltoall" + how);
    // The type on the send side only.
    Buffer src = buffer_for(t, n * p, rng);
    std::vector<int> out(size_t(ints) * size_t(n) * size_t(p) + 1, -1), nout = out;
    MPI_Alltoall(src.base(), n, t.t, out.data(), n * ints, MPI_INT, MPI_COMM_WORLD);
    PMPI_Alltoall(src.base(), n, t.t, nout.data(), n * ints, MPI_INT, MPI_COMM_WORLD);
    report(out == nout, label + " alltoall (type -> ints)");
  }
  // In place: allgather and alltoall on the type.
  {
    Buffer h = buffer_for(t, n * p, rng), nat = h;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, h.base(), n, t.t, MPI_COMM_WORLD);
    PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, nat.base(), n, t.t, MPI_COMM_WORLD);
    same(h, nat, "allgather in place");
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, h.base(), n, t.t, MPI_COMM_WORLD);
    PMPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, nat.base(), n, t.t, MPI_COMM_WORLD);
    same(h, nat, "alltoall in place");
  }
  // The v-collectives: uneven counts, displacements permuted, in extents.
  {
    std::vector<int> counts(static_cast<size_t>(p)), displs(static_cast<size_t>(p));
    std::vector<int> order(static_cast<size_t>(p));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), shared);
    int at = 1;
    for (int i = 0; i < p; ++i) counts[size_t(i)] = (n + i) % (n + 2);
    for (int k = 0; k < p; ++k) {
      int i = order[size_t(k)];
      displs[size_t(i)] = at;
      at += counts[size_t(i)] + 1;
    }
    const int span = at + 1;
    Buffer in = buffer_for(t, counts[size_t(r)], rng);
    Buffer h = buffer_for(t, span, rng), nat = h;
    MPI_Gatherv(in.base(), counts[size_t(r)], t.t, h.base(), counts.data(), displs.data(), t.t, root, MPI_COMM_WORLD);
    PMPI_Gatherv(in.base(), counts[size_t(r)], t.t, nat.base(), counts.data(), displs.data(), t.t, root, MPI_COMM_WORLD);
    if (r == root) same(h, nat, "gatherv");
    MPI_Allgatherv(in.base(), counts[size_t(r)], t.t, h.base(), counts.data(), displs.data(), t.t, MPI_COMM_WORLD);
    PMPI_Allgatherv(in.base(), counts[size_t(r)], t.t, nat.base(), counts.data(), displs.data(), t.t, MPI_COMM_WORLD);
    same(h, nat, "allgatherv");
    Buffer o = buffer_for(t, counts[size_t(r)], rng), no = o;
    MPI_Scatterv(h.base(), counts.data(), displs.data(), t.t, o.base(), counts[size_t(r)], t.t, root, MPI_COMM_WORLD);
    PMPI_Scatterv(nat.base(), counts.data(), displs.data(), t.t, no.base(), counts[size_t(r)], t.t, root, MPI_COMM_WORLD);
    same(o, no, "scatterv");
    // alltoallv: the same counts and displacements both ways (symmetric).
    std::vector<int> c2(size_t(p), counts[size_t(r)]);
    for (int j = 0; j < p; ++j) c2[size_t(j)] = (r + j + n) % (n + 2);
    std::vector<int> d2(static_cast<size_t>(p));
    int a2 = 0;
    for (int k = p - 1; k >= 0; --k) {
      d2[size_t(k)] = a2;
      a2 += c2[size_t(k)] + 1;
    }
    Buffer s2 = buffer_for(t, a2, rng), r2 = buffer_for(t, a2, rng), nr2 = r2;
    MPI_Alltoallv(s2.base(), c2.data(), d2.data(), t.t, r2.base(), c2.data(), d2.data(), t.t, MPI_COMM_WORLD);
    PMPI_Alltoallv(s2.base(), c2.data(), d2.data(), t.t, nr2.base(), c2.data(), d2.data(), t.t, MPI_COMM_WORLD);
    same(r2, nr2, "alltoallv");
    MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, r2.base(), c2.data(), d2.data(), t.t, MPI_COMM_WORLD);
    PMPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, nr2.base(), c2.data(), d2.data(), t.t, MPI_COMM_WORLD);
    same(r2, nr2, "alltoallv in place");
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 60;
  std::mt19937 types(2024);                       // the same types on every rank
  std::mt19937 data(unsigned(7 + world_rank));   // different data
  size_t noncontiguous = 0;
  for (int round = 0; round < rounds; ++round) {
    Type t = random_type(types, 1 + round % 3);
    noncontiguous += !(t.lb == 0 && t.extent == t.size && t.tlb == 0);
    for (int n : {1, 2, 5}) {
      std::mt19937 shared(unsigned(round * 10 + n));  // roots and orders: the same on every rank
      exercise(t, n, shared, data, "round " + std::to_string(round) + " " + t.desc + " x" + std::to_string(n));
    }
    MPI_Type_free(&t.t);
  }
  long totals[2] = {failures, checks};
  PMPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (world_rank == 0)
    std::printf("mpi_datatypes p=%d: %d random types (%zu with gaps or moved bounds), %ld checks, %ld failures\n",
                world_size, rounds, noncontiguous, totals[1], totals[0]);
  MPI_Finalize();
  return totals[0] ? 1 : 0;
}
