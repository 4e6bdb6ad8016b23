#include "interpose/tls.hpp"
#include "interpose/buffers.hpp"

#include <cstring>
#include <new>

#include "interpose/errors.hpp"
#include "interpose/mpi_types.hpp"

namespace hetcoll::mpi {

namespace {

// Datatype layouts, remembered for the length of one call (a call asks for
// the same one or two types several times).
struct LayoutMemo {
  MPI_Datatype type[4];
  TypeLayout layout[4];
  int n = 0;
};
HETCOLL_TLS LayoutMemo t_layouts;

TypeLayout layout(MPI_Datatype t) {
  LayoutMemo& m = t_layouts;
  for (int i = 0; i < m.n; ++i)
    if (m.type[i] == t) return m.layout[i];
  int i = m.n < 4 ? m.n++ : 3;
  m.type[i] = t;
  m.layout[i] = layout_of(t);
  return m.layout[i];
}

// ---------------------------------------------------------------- arguments

uint64_t count_arg(int c, const char* what) {
  if (c < 0) throw UserError(MPI_ERR_COUNT, cat(what, " is negative (", c, ")"));
  return uint64_t(c);
}

const int* array_arg(const int* a, const char* what) {
  if (!a) throw UserError(MPI_ERR_ARG, cat(what, " is NULL"));
  return a;
}

uint64_t mul(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r) || r > kMaxBytes)
    throw UserError(MPI_ERR_COUNT, cat(what, " is larger than ", kMaxBytes, " bytes"));
  return r;
}

uint64_t add(uint64_t a, uint64_t b, const char* what) {
  if (a + b > kMaxBytes) throw UserError(MPI_ERR_COUNT, cat(what, " is larger than ", kMaxBytes, " bytes"));
  return a + b;
}

// A (count, type) pair's bytes.
uint64_t bytes_of(uint64_t count, const TypeLayout& l, const char* what) { return mul(count, l.size, what); }

// The two sides of a data-moving collective must describe the same bytes.
void same_size(uint64_t send, uint64_t recv, const char* what) {
  if (send != recv)
    throw UserError(MPI_ERR_TRUNCATE, cat(what, ": the send side has ", send, " bytes, the receive side ", recv));
}

// MPI_IN_PLACE where MPI does not allow it, or send and receive buffers that
// are the same without it (MPI forbids aliased arguments).
void no_in_place(const void* buf, const char* what) {
  if (buf == MPI_IN_PLACE) throw UserError(MPI_ERR_BUFFER, cat("MPI_IN_PLACE is not allowed as ", what), true);
}
void not_aliased(const void* send, const void* recv, bool moves_data) {
  if (moves_data && send == recv && send != nullptr)
    throw UserError(MPI_ERR_BUFFER, "the send and receive buffers are the same (use MPI_IN_PLACE)");
}

char* grow(std::vector<char>& v, uint64_t n) {
  if (v.size() < n) {
    try {
      v.resize(n);
    } catch (const std::exception&) {
      throw MpiError(MPI_ERR_NO_MEM, cat("cannot allocate ", n, " bytes to pack a datatype"));
    }
  }
  return v.data();
}

// A user buffer of `count` elements of `type`: itself if contiguous in
// order, else packed into `stage`.
const void* source(const void* buf, uint64_t count, MPI_Datatype type, const TypeLayout& l, std::vector<char>& stage) {
  if (l.contiguous) return buf;
  char* dst = grow(stage, count * l.size);
  pack(buf, count, type, l, dst);
  return dst;
}

const char* at(const void* buf, int64_t elements, const TypeLayout& l) {
  return static_cast<const char*>(buf) + elements * int64_t(l.extent);
}

// Blocks of a v-collective in a user buffer: counts and displacements in
// elements. The canonical layout: the same blocks in bytes, packed in rank
// order; `direct` when the user's layout is that already.
struct VBlocks {
  std::vector<uint64_t> bytes, prefix;
  uint64_t total = 0;
  bool direct = true;
};

VBlocks v_layout(const int* counts, const int* displs, const TypeLayout& l, int n, const char* what) {
  VBlocks v;
  v.bytes.reserve(size_t(n));
  v.prefix.reserve(size_t(n));
  for (int i = 0; i < n; ++i) {
    uint64_t b = bytes_of(count_arg(counts[i], what), l, what);
    v.bytes.push_back(b);
    v.prefix.push_back(v.total);
    // The user's layout is the canonical one when block i starts at byte
    // prefix[i] (a negative extent or displacement never does).
    int64_t at;
    if (displs[i] < 0 || l.extent <= 0 || __builtin_mul_overflow(int64_t(displs[i]), int64_t(l.extent), &at) ||
        uint64_t(at) != v.total)
      v.direct = false;
    v.total = add(v.total, b, what);
  }
  if (!l.contiguous) v.direct = false;
  return v;
}

}  // namespace

void forget_layouts() { t_layouts.n = 0; }

Reduction reduction_of(const Call& c) {
  if (c.datatype == MPI_DATATYPE_NULL) throw UserError(MPI_ERR_TYPE, "datatype is MPI_DATATYPE_NULL");
  if (c.op == MPI_OP_NULL) throw UserError(MPI_ERR_OP, "op is MPI_OP_NULL");
  auto ro = reduce_op_of(c.op);
  if (!ro) throw Decline{"a user-defined or unsupported operation"};
  auto et = elem_type_of(c.datatype);
  if (!et) throw Decline{"a datatype hetcoll does not combine (derived, MPI_CHAR, ...)"};
  Reduction r;
  if (!reduce_kernel(*ro, *et)) throw Decline{cat("MPI does not define ", reduce_op_name(*ro), " on ", elem_type_name(*et))};
  r.type = *et;
  r.dense = dense_bytes(*et) != elem_bytes(*et);
  r.kernel = r.dense ? dense_reduce_kernel(*ro, *et) : reduce_kernel(*ro, *et);
  r.elem = uint32_t(r.dense ? dense_bytes(*et) : elem_bytes(*et));
  if (r.dense && layout_of(c.datatype).size != r.elem)
    throw Decline{cat(elem_type_name(*et), " holds ", layout_of(c.datatype).size, " bytes of data here, not ", r.elem)};
  r.order_free = order_free(*ro, *et);
  return r;
}

namespace {

// One call's arguments turned into the collective hetcoll plans and the
// buffers it runs on (prepare()): a method per kind of collective.
class Preparing {
 public:
  // `held`: the objects are held, and `held_call` (the object c refers to,
  // a request's own copy) is rewritten to name them.
  Preparing(const Call& c, const Reduction& red, CommState& st, CallMemory& mem, HeldObjects* held = nullptr,
            Call* held_call = nullptr)
      : c(c), red(red), st(st), mem(mem), held(held), held_call(held_call), p(st.info.size), rank(st.info.rank),
        P(uint64_t(st.info.size)), is_root(has_root(c.coll) && st.info.rank == c.root) {}
  Prepared take() { return std::move(pr); }

  void barrier();  // barrier
  void bcast();  // bcast
  void reduction_call();  // reduce, allreduce, scan, exscan
  void reduce_scatter_block();  // reduce_scatter_block
  void reduce_scatter();  // reduce_scatter
  void blocks();  // gather, scatter, allgather, alltoall
  void v_blocks();  // gatherv, allgatherv, scatterv
  void alltoallv();  // alltoallv

 private:
  void fixed(uint64_t count, uint32_t elem);
  void reduction(uint64_t count);
  void densify(const void* in, uint64_t in_elems, void* out, uint64_t out_elems);
  // A datatype or array argument, checked; held first where the call
  // outlives its MPI call (c then names the held one).
  TypeLayout type(MPI_Datatype Call::*field, const char* what);
  const int* array(const int* Call::*field, const char* what);

  // Lambdas left in pr.after run after this object is gone: they capture
  // what they use by name, never `this`.
  const Call& c;
  const Reduction& red;
  CommState& st;
  CallMemory& mem;
  HeldObjects* held;
  Call* held_call;
  Prepared pr;
  const int p, rank;
  const uint64_t P;
  const bool is_root;
};

TypeLayout Preparing::type(MPI_Datatype Call::*field, const char* what) {
  if (c.*field == MPI_DATATYPE_NULL) throw UserError(MPI_ERR_TYPE, cat(what, " is MPI_DATATYPE_NULL"));
  if (held) held_call->*field = held->type(c.*field);  // c reads it from now on
  return layout(c.*field);
}

const int* Preparing::array(const int* Call::*field, const char* what) {
  const int* a = array_arg(c.*field, what);
  if (held) held_call->*field = a = held->array(a, size_t(p));
  return a;
}

// A collective with one count (the hot path: no allocation).
void Preparing::fixed(uint64_t count, uint32_t elem) {
  pr.coll.op = c.coll;
  pr.coll.nranks = p;
  pr.coll.root = has_root(c.coll) ? c.root : 0;
  pr.coll.count = count;
  pr.coll.elem_size = elem;
}

void Preparing::reduction(uint64_t count) {
  mul(count, red.elem, "count");
  pr.kernel = red.kernel;
  fixed(count, red.elem);
  pr.coll.order_free = red.order_free;
}

// Dense records for a pair type with holes: the input (the receive buffer
// where in place) packed into staging, the result unpacked where MPI
// defines it. The call itself then runs out of place.
void Preparing::densify(const void* in, uint64_t in_elems, void* out, uint64_t out_elems) {
  char* din = grow(mem.staged_in, in_elems * red.elem);
  to_dense(red.type, in, din, in_elems);
  pr.in = din;
  pr.in_place = false;
  pr.out = nullptr;
  if (out && out_elems) {
    char* dout = grow(mem.staged_out, out_elems * red.elem);
    pr.out = dout;
    const ElemType t = red.type;
    pr.after.push_back([t, dout, out, out_elems] { from_dense(t, dout, out, out_elems); });
  }
}

void Preparing::barrier() {
  fixed(0, 1);
}

void Preparing::bcast() {
  no_in_place(c.buffer, "the buffer of a bcast");
  const uint64_t n = count_arg(c.count, "count");
  const TypeLayout l = type(&Call::datatype, "datatype");
  const uint64_t bytes = bytes_of(n, l, "count x datatype");
  fixed(bytes, 1);
  if (l.contiguous || bytes == 0) {
    pr.out = c.buffer;
  } else {
    char* buf = grow(mem.staged_out, bytes);
    if (is_root) {
      pack(c.buffer, n, c.datatype, l, buf);
    } else {
      const MPI_Datatype dt = c.datatype;
      void* user = c.buffer;
      pr.after.push_back([buf, n, dt, l, user] { unpack(buf, n, dt, l, user); });
    }
    pr.out = buf;
  }
}

void Preparing::reduction_call() {
  reduction(count_arg(c.count, "count"));
  const bool ip = c.sendbuf == MPI_IN_PLACE;
  if (ip && c.coll == CollOp::reduce && !is_root)
    throw UserError(MPI_ERR_BUFFER, "MPI_IN_PLACE is for the root of a reduce only", true);
  if (c.coll != CollOp::reduce || is_root) {
    no_in_place(c.recvbuf, "recvbuf");
    not_aliased(c.sendbuf, c.recvbuf, c.count > 0);
  }
  pr.in_place = ip;
  // A reduce's recvbuf is significant at the root only.
  pr.out = c.coll == CollOp::reduce && !is_root ? nullptr : c.recvbuf;
  pr.in = ip ? c.recvbuf : c.sendbuf;
  if (red.dense)  // an exscan leaves rank 0's recvbuf alone, as MPI does
    densify(pr.in, pr.coll.count, c.coll == CollOp::exscan && rank == 0 ? nullptr : pr.out, pr.coll.count);
}

void Preparing::reduce_scatter_block() {
  no_in_place(c.recvbuf, "recvbuf");
  not_aliased(c.sendbuf, c.recvbuf, c.recvcount > 0);
  reduction(count_arg(c.recvcount, "recvcount"));
  mul(uint64_t(c.recvcount) * P, red.elem, "recvcount x size");
  pr.in_place = c.sendbuf == MPI_IN_PLACE;
  pr.out = c.recvbuf;
  pr.in = pr.in_place ? c.recvbuf : c.sendbuf;
  if (red.dense) densify(pr.in, pr.coll.count * P, pr.out, pr.coll.count);
}

void Preparing::reduce_scatter() {
  no_in_place(c.recvbuf, "recvbuf");
  const int* rc = array(&Call::recvcounts, "recvcounts");
  std::vector<uint64_t> counts(P);
  uint64_t total = 0;
  for (int i = 0; i < p; ++i) {
    counts[size_t(i)] = count_arg(rc[i], "a recvcount");
    total = add(total, mul(counts[size_t(i)], red.elem, "a recvcount"), "the sum of recvcounts");
  }
  pr.kernel = red.kernel;
  pr.coll = Collective::make_v(CollOp::reduce_scatter, counts, 0, red.elem);
  pr.coll.order_free = red.order_free;
  pr.in_place = c.sendbuf == MPI_IN_PLACE;
  pr.out = c.recvbuf;
  pr.in = pr.in_place ? c.recvbuf : c.sendbuf;
  if (red.dense) densify(pr.in, total / red.elem, pr.out, counts[size_t(rank)]);
}

void Preparing::blocks() {
  // Which side of the call this rank's block size comes from: the
  // receive side where it is significant, else the send side.
  const bool gather = c.coll == CollOp::gather, scatter = c.coll == CollOp::scatter;
  const bool recv_significant = !gather || is_root;
  const bool send_significant = !scatter || is_root;
  // MPI_IN_PLACE: sendbuf for gather (root), allgather and alltoall;
  // recvbuf for scatter (root). The ignored side's count and type are
  // not read.
  bool ip = scatter ? is_root && c.recvbuf == MPI_IN_PLACE
                    : c.sendbuf == MPI_IN_PLACE && (!gather || is_root);
  if (c.sendbuf == MPI_IN_PLACE && gather && !is_root)
    throw UserError(MPI_ERR_BUFFER, "MPI_IN_PLACE is for the root of a gather only", true);
  // recvbuf is significant at a gather's root, everywhere but at a
  // scatter's root (which may receive in place), and everywhere else.
  if (gather ? is_root : !(scatter && is_root)) no_in_place(c.recvbuf, "recvbuf");
  if (scatter && is_root) no_in_place(c.sendbuf, "the sendbuf of a scatter");
  uint64_t rc = 0, sc = 0, B = 0;
  TypeLayout rl, sl;
  const bool read_recv = recv_significant && !(scatter && ip);
  const bool read_send = send_significant && !(!scatter && ip);
  if (read_recv) {
    rc = count_arg(c.recvcount, "recvcount");
    rl = type(&Call::recvtype, "recvtype");
    B = bytes_of(rc, rl, "recvcount x recvtype");
  }
  if (read_send) {
    sc = count_arg(c.sendcount, "sendcount");
    sl = type(&Call::sendtype, "sendtype");
    const uint64_t sb = bytes_of(sc, sl, "sendcount x sendtype");
    if (read_recv) same_size(sb, B, mpi_name(c.coll));
    B = sb;
  }
  mul(B, P, "the whole buffer");
  fixed(B, 1);
  pr.in_place = ip;
  const uint64_t in_n = pr.coll.in_bytes(rank), out_n = pr.coll.out_bytes(rank);
  if (scatter && ip) {  // the root keeps its block in sendbuf: `out` is a view into `in`
    pr.in = source(c.sendbuf, sc * P, c.sendtype, sl, mem.staged_in);
    pr.out = const_cast<char*>(static_cast<const char*>(pr.in)) + uint64_t(rank) * B;
    return;
  }
  if (out_n) {
    if (rl.contiguous) {
      pr.out = c.recvbuf;
    } else {
      char* buf = grow(mem.staged_out, out_n);
      pr.out = buf;
      const uint64_t elems = out_n / rl.size;
      if (ip) {
        if (c.coll == CollOp::alltoall) pack(c.recvbuf, elems, c.recvtype, rl, buf);  // all of it is input
        else pack(at(c.recvbuf, int64_t(rank) * int64_t(rc), rl), rc, c.recvtype, rl, buf + uint64_t(rank) * B);
      }
      const MPI_Datatype rt = c.recvtype;
      void* user = c.recvbuf;
      pr.after.push_back([buf, elems, rt, rl, user] { unpack(buf, elems, rt, rl, user); });
    }
  }
  if (ip) pr.in = static_cast<char*>(pr.out) + *pr.coll.in_place_offset(rank);
  else if (in_n) pr.in = source(c.sendbuf, in_n / sl.size, c.sendtype, sl, mem.staged_in);
}

void Preparing::v_blocks() {
  const bool allv = c.coll == CollOp::allgatherv, scatterv = c.coll == CollOp::scatterv;
  // The ranks that know every count: everybody (allgatherv) or the root.
  const bool knows = allv || is_root;
  bool ip = scatterv ? is_root && c.recvbuf == MPI_IN_PLACE : c.sendbuf == MPI_IN_PLACE && knows;
  if (c.sendbuf == MPI_IN_PLACE && c.coll == CollOp::gatherv && !is_root)
    throw UserError(MPI_ERR_BUFFER, "MPI_IN_PLACE is for the root of a gatherv only", true);
  if (scatterv ? !is_root : knows) no_in_place(c.recvbuf, "recvbuf");
  if (scatterv && is_root) no_in_place(c.sendbuf, "the sendbuf of a scatterv");
  const int* counts = nullptr;
  const int* displs = nullptr;
  MPI_Datatype vtype = MPI_DATATYPE_NULL;
  TypeLayout vl;
  VBlocks v;
  std::vector<uint64_t> bytes(P, 0);
  if (knows) {
    counts = array(scatterv ? &Call::sendcounts : &Call::recvcounts, scatterv ? "sendcounts" : "recvcounts");
    displs = array(&Call::displs, "displs");
    MPI_Datatype Call::*vfield = scatterv ? &Call::sendtype : &Call::recvtype;
    vl = type(vfield, scatterv ? "sendtype" : "recvtype");
    vtype = c.*vfield;
    v = v_layout(counts, displs, vl, p, scatterv ? "a sendcount" : "a recvcount");
    bytes = v.bytes;
  }
  // This rank's own side: what it sends (gatherv, allgatherv) or
  // receives (scatterv), unless in place.
  uint64_t own_count = 0;
  TypeLayout own_l;
  if (!ip) {
    own_count = count_arg(scatterv ? c.recvcount : c.sendcount, scatterv ? "recvcount" : "sendcount");
    own_l = type(scatterv ? &Call::recvtype : &Call::sendtype, scatterv ? "recvtype" : "sendtype");
    const uint64_t own = bytes_of(own_count, own_l, scatterv ? "recvcount x recvtype" : "sendcount x sendtype");
    if (knows) same_size(own, bytes[size_t(rank)], mpi_name(c.coll));
    bytes[size_t(rank)] = own;
  }
  pr.coll = Collective::make_v(c.coll, bytes, c.root, 1);
  pr.in_place = ip;
  const uint64_t own = bytes[size_t(rank)];
  if (scatterv) {
    if (is_root) {
      if (v.direct) {
        pr.in = c.sendbuf;
      } else {
        char* buf = grow(mem.staged_in, v.total);
        for (int i = 0; i < p; ++i)
          pack(at(c.sendbuf, displs[i], vl), uint64_t(counts[i]), vtype, vl, buf + v.prefix[size_t(i)]);
        pr.in = buf;
      }
    }
    if (ip) {
      pr.out = const_cast<char*>(static_cast<const char*>(pr.in)) + v.prefix[size_t(rank)];
    } else if (own) {
      if (own_l.contiguous) {
        pr.out = c.recvbuf;
      } else {
        char* buf = grow(mem.staged_out, own);
        const MPI_Datatype rt = c.recvtype;
        void* user = c.recvbuf;
        pr.out = buf;
        pr.after.push_back([buf, own_count, rt, own_l, user] { unpack(buf, own_count, rt, own_l, user); });
      }
    }
    return;
  }
  // gatherv, allgatherv: the result is in v layout in recvbuf.
  if (knows) {
    if (v.direct) {
      pr.out = c.recvbuf;
    } else {
      char* buf = grow(mem.staged_out, v.total);
      pr.out = buf;
      if (ip)  // this rank's block, where MPI keeps it, into the staged layout
        pack(at(c.recvbuf, displs[rank], vl), uint64_t(counts[rank]), vtype, vl, buf + v.prefix[size_t(rank)]);
      std::vector<uint64_t> prefix = v.prefix;
      std::vector<int> cnt(counts, counts + p), dsp(displs, displs + p);
      void* user = c.recvbuf;
      pr.after.push_back([buf, prefix, cnt, dsp, vtype, vl, user] {
        for (size_t i = 0; i < cnt.size(); ++i)
          if (cnt[i])
            unpack(buf + prefix[i], uint64_t(cnt[i]), vtype, vl, const_cast<char*>(at(user, dsp[i], vl)));
      });
    }
  }
  if (ip) pr.in = static_cast<char*>(pr.out) + *pr.coll.in_place_offset(rank);
  else if (own) pr.in = source(c.sendbuf, own_count, c.sendtype, own_l, mem.staged_in);
}

void Preparing::alltoallv() {
  // Rank r knows its own row: what it sends to and receives from each.
  const bool ip = c.sendbuf == MPI_IN_PLACE;
  no_in_place(c.recvbuf, "recvbuf");
  const int* rcounts = array(&Call::recvcounts, "recvcounts");
  const int* rdispls = array(&Call::rdispls, "rdispls");
  const TypeLayout rl = type(&Call::recvtype, "recvtype");
  VBlocks rv = v_layout(rcounts, rdispls, rl, p, "a recvcount");
  const int* scounts = rcounts;
  const int* sdispls = rdispls;
  TypeLayout sl = rl;
  VBlocks sv;
  if (!ip) {
    scounts = array(&Call::sendcounts, "sendcounts");
    sdispls = array(&Call::sdispls, "sdispls");
    sl = type(&Call::sendtype, "sendtype");
    sv = v_layout(scounts, sdispls, sl, p, "a sendcount");
  }
  const VBlocks& s = ip ? rv : sv;
  const size_t R = size_t(rank);
  std::vector<uint64_t> send(P * P, 0);
  for (size_t j = 0; j < P; ++j) {
    send[R * P + j] = s.bytes[j];  // my row
    send[j * P + R] = rv.bytes[j];  // what j sends me
  }
  pr.coll = Collective::make_alltoallv(p, send, 1);
  pr.in_place = ip;
  if (rv.direct) {
    pr.out = c.recvbuf;
  } else {
    char* buf = grow(mem.staged_out, rv.total);
    pr.out = buf;
    if (ip)
      for (int j = 0; j < p; ++j)
        pack(at(c.recvbuf, rdispls[j], rl), uint64_t(rcounts[j]), c.recvtype, rl, buf + rv.prefix[size_t(j)]);
    std::vector<uint64_t> prefix = rv.prefix;
    std::vector<int> cnt(rcounts, rcounts + p), dsp(rdispls, rdispls + p);
    const MPI_Datatype rt = c.recvtype;
    void* user = c.recvbuf;
    pr.after.push_back([buf, prefix, cnt, dsp, rt, rl, user] {
      for (size_t j = 0; j < cnt.size(); ++j)
        if (cnt[j]) unpack(buf + prefix[j], uint64_t(cnt[j]), rt, rl, const_cast<char*>(at(user, dsp[j], rl)));
    });
  }
  if (ip) {
    pr.in = pr.out;
  } else if (sv.direct) {
    pr.in = c.sendbuf;
  } else {
    char* buf = grow(mem.staged_in, sv.total);
    for (int j = 0; j < p; ++j)
      pack(at(c.sendbuf, sdispls[j], sl), uint64_t(scounts[j]), c.sendtype, sl, buf + sv.prefix[size_t(j)]);
    pr.in = buf;
  }
}

}  // namespace

namespace {
inline Prepared prepare_call(Preparing& x, CollOp coll) {
  switch (coll) {
    case CollOp::barrier:
      x.barrier();
      break;
    case CollOp::bcast:
      x.bcast();
      break;
    case CollOp::reduce:
    case CollOp::allreduce:
    case CollOp::scan:
    case CollOp::exscan:
      x.reduction_call();
      break;
    case CollOp::reduce_scatter_block:
      x.reduce_scatter_block();
      break;
    case CollOp::reduce_scatter:
      x.reduce_scatter();
      break;
    case CollOp::gather:
    case CollOp::scatter:
    case CollOp::allgather:
    case CollOp::alltoall:
      x.blocks();
      break;
    case CollOp::gatherv:
    case CollOp::allgatherv:
    case CollOp::scatterv:
      x.v_blocks();
      break;
    case CollOp::alltoallv:
      x.alltoallv();
      break;
  }
  return x.take();
}
}  // namespace

Prepared prepare(const Call& c, const Reduction& red, CommState& st, CallMemory& mem) {
  Preparing x(c, red, st, mem);
  return prepare_call(x, c.coll);
}

Prepared prepare_held(Call& c, const Reduction& red, CommState& st, CallMemory& mem, HeldObjects& held) {
  Preparing x(c, red, st, mem, &held, &c);
  return prepare_call(x, c.coll);
}

MPI_Datatype HeldObjects::type(MPI_Datatype t) {
  const MPI_Datatype h = hold_type(t);
  if (h != t) types_.push_back(h);
  return h;
}

const int* HeldObjects::array(const int* a, size_t n) {
  arrays_.emplace_back(a, a + n);
  return arrays_.back().data();
}

void HeldObjects::release() {
  for (MPI_Datatype t : types_) release_type(t);
  types_.clear();
  arrays_.clear();
}

}  // namespace hetcoll::mpi
