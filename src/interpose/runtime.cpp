#include "interpose/runtime.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <unordered_map>

#include "algorithms/registry.hpp"
#include "exec/executor.hpp"
#include "exec/mpi_transport.hpp"
#include "interpose/mpi_types.hpp"
#include "plan/planner.hpp"
#include "schedule/passes.hpp"
#include "util/error.hpp"

namespace hetcoll::mpi {

namespace {

// A default for a machine nobody has measured, fitted to shared memory with
// Open MPI (bench_mpi on a 2-core node): 3 µs per message above the eager
// size, 10 GB/s, 10 GB/s combining, and receives that keep the CPU busy
// (the receiver copies), so reductions do not overlap them. Small messages
// cost less than α; the choice among latency-bound algorithms hardly
// depends on it. HETCOLL_PROFILE replaces it.
const char* const kDefaultModel = "hockney:alpha=3us,beta=0.1ns,gamma=0.1ns,overlap=0";

thread_local std::string t_error;

// Errors inside run(): Decline happens before anything is sent.
struct Decline {
  std::string why;
};

// ------------------------------------------------------------ configuration

struct Config {
  bool disabled = false;
  bool explain = false;
  std::mutex mu;
  ModelPtr model;
  std::string model_note;  // printed once: why the profile was not used
  Overrides overrides;
  std::shared_ptr<Planner> planner;
  std::set<std::string> reported;  // fallback messages already printed
  // Bumped whenever the model or the overrides change: compiled schedules
  // of every communicator are stale then.
  std::atomic<uint64_t> generation{1};
};

ModelPtr load_model(const std::string& spec) {
  if (spec.find(':') == std::string::npos) return model_from_json(json::parse([&] {
      std::ifstream in(spec);
      if (!in) throw InputError(cat("cannot read profile '", spec, "'"));
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    }()));
  return parse_model(spec);
}

Config& config() {
  static Config* cfg = [] {
    auto* c = new Config;  // lives until exit: MPI may call us from atexit-time code
    const char* dis = std::getenv("HETCOLL_DISABLE");
    c->disabled = dis && *dis && std::strcmp(dis, "0") != 0;
    const char* dbg = std::getenv("HETCOLL_DEBUG");
    c->explain = dbg && (std::strcmp(dbg, "explain") == 0 || std::strcmp(dbg, "1") == 0);
    c->model = parse_model(kDefaultModel);
    if (const char* prof = std::getenv("HETCOLL_PROFILE"); prof && *prof) {
      try {
        c->model = load_model(prof);
      } catch (const std::exception& e) {
        c->model_note = cat("HETCOLL_PROFILE ignored (", e.what(), "); using ", kDefaultModel);
      }
    }
    if (const char* algo = std::getenv("HETCOLL_ALGO"); algo && *algo) {
      try {
        c->overrides = Overrides::parse(algo);
      } catch (const std::exception& e) {
        c->model_note += (c->model_note.empty() ? "" : "; ") + cat("HETCOLL_ALGO ignored: ", e.what());
      }
    }
    c->planner = std::make_shared<Planner>(c->model, c->overrides);
    return c;
  }();
  return *cfg;
}

std::shared_ptr<Planner> planner() {
  Config& c = config();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.planner;
}

void say(const std::string& line) { std::fprintf(stderr, "hetcoll: %s\n", line.c_str()); }

// ------------------------------------------------------------ communicators

// One call shape, planned and compiled for this rank: the next call of the
// same shape goes straight to the executor.
struct Compiled {
  Collective coll;     // the call as prepared (in_place as the user asked)
  bool aside = false;  // in-place input copied aside: the algorithm cannot run in place
  ExecProgram prog;
};

struct CommState {
  MPI_Comm dup = MPI_COMM_NULL;
  MpiTransport::CommInfo info;
  uint64_t group_key = 0;
  std::vector<int> world_ranks;  // for models that describe particular ranks
  // One collective at a time per communicator: MPI forbids concurrent
  // collectives on one communicator, so the lock only matters (and is only
  // taken) under MPI_THREAD_MULTIPLE, against erroneous programs and for
  // hetcoll_last_algorithm from another thread.
  std::mutex mu;
  bool multiple = false;
  std::vector<char> tmp, staged_in, staged_out, aside;
  uint64_t generation = 0;       // Config::generation the cache was built for
  std::unordered_map<uint64_t, Compiled> compiled;
  const Compiled* recent = nullptr;  // the last shape run: checked first
  uint64_t recent_key = 0;
  std::unique_ptr<MpiTransport> transport;
  ExecScratch scratch;
  std::string last;
};

// Bumped when any communicator state is freed: a handle seen before may
// now name another communicator.
std::atomic<uint64_t> g_states_freed{0};

int delete_state(MPI_Comm, int, void* value, void*) {
  auto* st = static_cast<CommState*>(value);
  g_states_freed.fetch_add(1, std::memory_order_acq_rel);
  st->transport.reset();
  if (st->dup != MPI_COMM_NULL) PMPI_Comm_free(&st->dup);
  delete st;
  return MPI_SUCCESS;
}

int keyval() {
  static int key = [] {
    int k = MPI_KEYVAL_INVALID;
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &k, nullptr);
    return k;
  }();
  return key;
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw ScheduleError(cat(what, " failed (MPI error ", rc, ")"));
}

// The private duplicate and what we know of the communicator; created on
// first use (MPI_Comm_dup is collective: every rank gets here in the same
// call, since every reason to decline comes earlier and agrees).
struct StateMemo {
  MPI_Comm comm = MPI_COMM_NULL;
  CommState* state = nullptr;
  uint64_t freed = 0;
};
thread_local StateMemo t_memo;

CommState* find_state(MPI_Comm comm) {
  const uint64_t freed = g_states_freed.load(std::memory_order_acquire);
  if (t_memo.state && t_memo.comm == comm && t_memo.freed == freed) return t_memo.state;
  void* value = nullptr;
  int flag = 0;
  check(PMPI_Comm_get_attr(comm, keyval(), &value, &flag), "MPI_Comm_get_attr");
  if (!flag) return nullptr;
  t_memo = {comm, static_cast<CommState*>(value), freed};
  return t_memo.state;
}

CommState& create_state(MPI_Comm comm) {
  auto st = std::make_unique<CommState>();
  check(PMPI_Comm_dup(comm, &st->dup), "MPI_Comm_dup");
  st->info = MpiTransport::query(st->dup);
  st->transport = std::make_unique<MpiTransport>(st->dup, st->info);
  int level = MPI_THREAD_SINGLE;
  check(PMPI_Query_thread(&level), "MPI_Query_thread");
  st->multiple = level == MPI_THREAD_MULTIPLE;
  MPI_Group g, world;
  check(PMPI_Comm_group(comm, &g), "MPI_Comm_group");
  check(PMPI_Comm_group(MPI_COMM_WORLD, &world), "MPI_Comm_group");
  std::vector<int> mine(static_cast<size_t>(st->info.size));
  std::iota(mine.begin(), mine.end(), 0);
  st->world_ranks.resize(mine.size());
  check(PMPI_Group_translate_ranks(g, int(mine.size()), mine.data(), world, st->world_ranks.data()),
        "MPI_Group_translate_ranks");
  PMPI_Group_free(&g);
  PMPI_Group_free(&world);
  for (int w : st->world_ranks) st->group_key = (st->group_key ^ uint64_t(w + 1)) * 0x100000001B3ull;
  check(PMPI_Comm_set_attr(comm, keyval(), st.get()), "MPI_Comm_set_attr");
  return *st.release();
}

// ------------------------------------------------------------ buffers

// Datatype layouts, remembered for the length of one call (a call asks for
// the same one or two types several times; across calls a handle may have
// been freed and reused, so nothing is kept).
struct LayoutMemo {
  MPI_Datatype type[4];
  TypeLayout layout[4];
  int n = 0;
};
thread_local LayoutMemo t_layouts;

TypeLayout layout(MPI_Datatype t) {
  LayoutMemo& m = t_layouts;
  for (int i = 0; i < m.n; ++i)
    if (m.type[i] == t) return m.layout[i];
  int i = m.n < 4 ? m.n++ : 3;
  m.type[i] = t;
  m.layout[i] = layout_of(t);
  return m.layout[i];
}

char* grow(std::vector<char>& v, size_t n) {
  if (v.size() < n) v.resize(n);
  return v.data();
}

// What one rank's call needs besides the schedule: where the logical in and
// out buffers are, and the packing before and unpacking after.
struct Prepared {
  Collective coll;
  ReduceFn kernel = nullptr;
  const void* in = nullptr;
  void* out = nullptr;
  bool in_place = false;
  std::vector<std::function<void()>> after;  // unpack into the user's buffers
};

uint64_t as_count(int c, const char* what) {
  if (c < 0) throw InputError(cat("negative ", what));
  return uint64_t(c);
}

// Copies `count` elements of `type` from a user buffer to packed bytes at dst.
void put(char* dst, const void* buf, uint64_t count, MPI_Datatype type, MPI_Comm comm) {
  TypeLayout l = layout(type);
  if (count == 0) return;
  if (l.contiguous) {
    std::memcpy(dst, buf, count * l.size);
    return;
  }
  int pos = 0;
  check(PMPI_Pack(buf, int(count), type, dst, int(count * l.size), &pos, comm), "MPI_Pack");
}

// A user buffer of `count` elements of `type`: itself if contiguous, else
// packed into `stage`.
const void* source(const void* buf, uint64_t count, MPI_Datatype type, std::vector<char>& stage, MPI_Comm comm) {
  if (layout(type).contiguous) return buf;
  char* dst = grow(stage, count * layout(type).size);
  put(dst, buf, count, type, comm);
  return dst;
}

void unpack(const char* src, uint64_t count, MPI_Datatype type, void* buf, MPI_Comm comm) {
  int pos = 0;
  check(PMPI_Unpack(src, int(count * layout(type).size), &pos, buf, int(count), type, comm), "MPI_Unpack");
}

size_t tsize(MPI_Datatype t) { return layout(t).size; }

// Blocks of a v-collective in a user buffer: element counts, displacements in
// elements. Canonical layout: the same counts in bytes, packed in rank order.
struct VBlocks {
  std::vector<uint64_t> bytes, prefix;  // canonical
  bool direct = true;                   // the user layout is the canonical one
};

VBlocks v_layout(const int* counts, const int* displs, MPI_Datatype type, int n) {
  VBlocks v;
  TypeLayout l = layout(type);
  uint64_t at = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t c = as_count(counts[i], "count");
    v.bytes.push_back(c * l.size);
    v.prefix.push_back(at);
    if (displs && (displs[i] < 0 || uint64_t(displs[i]) * uint64_t(l.extent) != at)) v.direct = false;
    at += c * l.size;
  }
  if (!l.contiguous) v.direct = false;
  return v;
}

// How a reduction's (datatype, op) combine; Decline when hetcoll cannot.
struct Reduction {
  ReduceFn kernel = nullptr;
  uint32_t elem = 1;
  bool order_free = false;
};

void reduction_of(MPI_Datatype type, MPI_Op op, Reduction& r) {
  auto ro = reduce_op_of(op);
  if (!ro) throw Decline{"a user-defined or unsupported operation"};
  auto et = elem_type_of(type);
  if (!et) throw Decline{"a datatype hetcoll does not combine (derived, MPI_CHAR, ...)"};
  r.kernel = reduce_kernel(*ro, *et);
  if (!r.kernel) throw Decline{cat("MPI does not define ", reduce_op_name(*ro), " on ", elem_type_name(*et))};
  r.elem = uint32_t(elem_bytes(*et));
  r.order_free = order_free(*ro, *et);
}

Prepared prepare(const Call& c, const Reduction& red, CommState* st, int p, int rank) {
  Prepared pr;
  MPI_Comm comm = c.comm;
  const bool in_place_all = c.sendbuf == MPI_IN_PLACE;
  // A collective with one count, filled in place (the hot path: no
  // allocation; it is checked when a new shape is compiled).
  auto fixed = [&](uint64_t count, uint32_t elem) {
    pr.coll.op = c.op;
    pr.coll.nranks = p;
    pr.coll.root = has_root(c.op) ? c.root : 0;
    pr.coll.count = count;
    pr.coll.elem_size = elem;
  };
  auto reduction = [&](uint64_t count) {
    pr.kernel = red.kernel;
    fixed(count, red.elem);
    pr.coll.order_free = red.order_free;
  };
  switch (c.op) {
    case CollOp::barrier:
      fixed(0, 1);
      return pr;
    case CollOp::bcast: {
      uint64_t n = as_count(c.count, "count");
      fixed(n * tsize(c.type), 1);
      if (layout(c.type).contiguous || n == 0) {
        pr.out = c.recvbuf;
      } else {
        char* buf = grow(st->staged_out, pr.coll.count);
        if (rank == c.root) put(buf, c.recvbuf, n, c.type, comm);
        else pr.after.push_back([=] { unpack(buf, n, c.type, c.recvbuf, comm); });
        pr.out = st->staged_out.data();
      }
      return pr;
    }
    case CollOp::reduce:
    case CollOp::allreduce:
    case CollOp::scan:
    case CollOp::exscan:
      reduction(as_count(c.count, "count"));
      pr.in_place = in_place_all && (c.op != CollOp::reduce || rank == c.root);
      pr.out = c.recvbuf;
      pr.in = pr.in_place ? c.recvbuf : c.sendbuf;
      return pr;
    case CollOp::reduce_scatter_block:
      reduction(as_count(c.count, "recvcount"));
      pr.in_place = in_place_all;
      pr.out = c.recvbuf;
      pr.in = pr.in_place ? c.recvbuf : c.sendbuf;
      return pr;
    case CollOp::reduce_scatter: {
      std::vector<uint64_t> counts;
      for (int i = 0; i < p; ++i) counts.push_back(as_count(c.recvcounts[i], "recvcount"));
      pr.kernel = red.kernel;
      pr.coll = Collective::make_v(CollOp::reduce_scatter, counts, 0, red.elem);
      pr.coll.order_free = red.order_free;
      pr.in_place = in_place_all;
      pr.out = c.recvbuf;
      pr.in = pr.in_place ? c.recvbuf : c.sendbuf;
      return pr;
    }
    case CollOp::gather:
    case CollOp::scatter:
    case CollOp::allgather:
    case CollOp::alltoall: {
      const bool root = rank == c.root;
      const bool gather_like = c.op == CollOp::gather;
      // Block bytes, from whichever side this rank knows.
      uint64_t B;
      if (c.op == CollOp::scatter) B = root ? as_count(c.sendcount, "sendcount") * tsize(c.sendtype)
                                            : as_count(c.recvcount, "recvcount") * tsize(c.recvtype);
      else if (gather_like && !root) B = as_count(c.sendcount, "sendcount") * tsize(c.sendtype);
      else B = as_count(c.recvcount, "recvcount") * tsize(c.recvtype);
      fixed(B, 1);
      const uint64_t in_n = pr.coll.in_bytes(rank), out_n = pr.coll.out_bytes(rank);
      const bool has_out = out_n > 0;
      // in-place: gather at the root (sendbuf), scatter at the root
      // (recvbuf), allgather and alltoall everywhere (sendbuf).
      pr.in_place = c.op == CollOp::scatter ? root && c.recvbuf == MPI_IN_PLACE
                                            : in_place_all && (c.op != CollOp::gather || root);
      uint64_t out_elems = has_out ? out_n / std::max<size_t>(tsize(c.recvtype), 1) : 0;
      if (c.op == CollOp::scatter && pr.in_place) {
        // The root keeps its block in sendbuf; `out` is a view into `in`.
        uint64_t sc = as_count(c.sendcount, "sendcount") * uint64_t(p);
        pr.in = source(c.sendbuf, sc, c.sendtype, st->staged_in, comm);
        pr.out = const_cast<char*>(static_cast<const char*>(pr.in)) + uint64_t(rank) * B;
        return pr;
      }
      if (has_out) {
        if (layout(c.recvtype).contiguous) {
          pr.out = c.recvbuf;
        } else {
          char* buf = grow(st->staged_out, out_n);
          pr.out = buf;
          if (pr.in_place) put(buf, c.recvbuf, out_elems, c.recvtype, comm);
          pr.after.push_back([=] { unpack(buf, out_elems, c.recvtype, c.recvbuf, comm); });
        }
      }
      if (pr.in_place) {
        int64_t off = *pr.coll.in_place_offset(rank);
        pr.in = static_cast<char*>(pr.out) + off;
      } else if (in_n) {
        uint64_t sc = as_count(c.sendcount, "sendcount") * (c.op == CollOp::scatter || c.op == CollOp::alltoall ? uint64_t(p) : 1);
        pr.in = source(c.sendbuf, sc, c.sendtype, st->staged_in, comm);
      }
      return pr;
    }
    case CollOp::allgatherv:
    case CollOp::gatherv:
    case CollOp::scatterv: {
      const bool root = rank == c.root;
      const bool allv = c.op == CollOp::allgatherv;
      // The rank that knows all counts: everybody (allgatherv) or the root.
      const bool knows = allv || root;
      const int* counts = c.op == CollOp::scatterv ? c.sendcounts : c.recvcounts;
      const int* displs = c.op == CollOp::scatterv ? c.sdispls : c.rdispls;
      MPI_Datatype vtype = c.op == CollOp::scatterv ? c.sendtype : c.recvtype;
      std::vector<uint64_t> bytes(static_cast<size_t>(p), 0);
      VBlocks v;
      if (knows) {
        v = v_layout(counts, displs, vtype, p);
        bytes = v.bytes;
      } else if (c.op == CollOp::gatherv) {
        bytes[size_t(rank)] = as_count(c.sendcount, "sendcount") * tsize(c.sendtype);
      } else {
        bytes[size_t(rank)] = as_count(c.recvcount, "recvcount") * tsize(c.recvtype);
      }
      pr.coll = Collective::make_v(c.op, bytes, c.root, 1);
      const uint64_t own = bytes[size_t(rank)];
      pr.in_place = c.op == CollOp::scatterv ? root && c.recvbuf == MPI_IN_PLACE
                                             : in_place_all && (allv || root);
      if (c.op == CollOp::scatterv) {
        if (root) {
          if (v.direct) {
            pr.in = c.sendbuf;
          } else {
            TypeLayout l = layout(vtype);
            char* buf = grow(st->staged_in, v.prefix.back() + v.bytes.back());
            for (int i = 0; i < p; ++i)
              put(buf + v.prefix[size_t(i)], static_cast<const char*>(c.sendbuf) + MPI_Aint(displs[i]) * l.extent,
                  uint64_t(counts[i]), vtype, comm);
            pr.in = buf;
          }
        }
        if (pr.in_place) {
          pr.out = const_cast<char*>(static_cast<const char*>(pr.in)) + v.prefix[size_t(rank)];
        } else if (own) {
          if (layout(c.recvtype).contiguous) {
            pr.out = c.recvbuf;
          } else {
            char* buf = grow(st->staged_out, own);
            uint64_t n = uint64_t(c.recvcount);
            pr.out = buf;
            pr.after.push_back([=] { unpack(buf, n, c.recvtype, c.recvbuf, comm); });
          }
        }
        return pr;
      }
      // gatherv, allgatherv: the result is in v layout in recvbuf.
      if (knows) {
        if (v.direct) {
          pr.out = c.recvbuf;
        } else {
          TypeLayout l = layout(vtype);
          char* buf = grow(st->staged_out, v.prefix.back() + v.bytes.back());
          pr.out = buf;
          if (pr.in_place)  // this rank's block, where MPI keeps it, into the staged layout
            put(buf + v.prefix[size_t(rank)], static_cast<const char*>(c.recvbuf) + MPI_Aint(displs[rank]) * l.extent,
                uint64_t(counts[rank]), vtype, comm);
          std::vector<uint64_t> prefix = v.prefix;
          std::vector<int> cnt(counts, counts + p), dsp(displs, displs + p);
          pr.after.push_back([=] {
            for (int i = 0; i < p; ++i)
              if (cnt[size_t(i)])
                unpack(buf + prefix[size_t(i)], uint64_t(cnt[size_t(i)]), vtype,
                       static_cast<char*>(c.recvbuf) + MPI_Aint(dsp[size_t(i)]) * l.extent, comm);
          });
        }
      }
      if (pr.in_place) pr.in = static_cast<char*>(pr.out) + *pr.coll.in_place_offset(rank);
      else if (own) pr.in = source(c.sendbuf, uint64_t(c.sendcount), c.sendtype, st->staged_in, comm);
      return pr;
    }
    case CollOp::alltoallv: {
      // Rank r knows its own rows: what it sends to and receives from each.
      const bool ip = in_place_all;
      VBlocks sv = ip ? v_layout(c.recvcounts, c.rdispls, c.recvtype, p) : v_layout(c.sendcounts, c.sdispls, c.sendtype, p);
      VBlocks rv = v_layout(c.recvcounts, c.rdispls, c.recvtype, p);
      const size_t P = size_t(p), R = size_t(rank);
      std::vector<uint64_t> send(P * P, 0);
      for (size_t j = 0; j < P; ++j) {
        send[R * P + j] = sv.bytes[j];  // my row
        send[j * P + R] = rv.bytes[j];  // what j sends me
      }
      pr.coll = Collective::make_alltoallv(p, send, 1);
      pr.in_place = ip;
      if (rv.direct) {
        pr.out = c.recvbuf;
      } else {
        TypeLayout l = layout(c.recvtype);
        char* buf = grow(st->staged_out, rv.prefix.back() + rv.bytes.back());
        pr.out = buf;
        if (ip)
          for (int j = 0; j < p; ++j)
            put(buf + rv.prefix[size_t(j)], static_cast<const char*>(c.recvbuf) + MPI_Aint(c.rdispls[j]) * l.extent,
                uint64_t(c.recvcounts[j]), c.recvtype, comm);
        std::vector<uint64_t> prefix = rv.prefix;
        std::vector<int> cnt(c.recvcounts, c.recvcounts + p), dsp(c.rdispls, c.rdispls + p);
        pr.after.push_back([=] {
          for (int j = 0; j < p; ++j)
            if (cnt[size_t(j)])
              unpack(buf + prefix[size_t(j)], uint64_t(cnt[size_t(j)]), c.recvtype,
                     static_cast<char*>(c.recvbuf) + MPI_Aint(dsp[size_t(j)]) * l.extent, comm);
        });
      }
      if (ip) {
        pr.in = pr.out;
      } else if (sv.direct) {
        pr.in = c.sendbuf;
      } else {
        TypeLayout l = layout(c.sendtype);
        char* buf = grow(st->staged_in, sv.prefix.back() + sv.bytes.back());
        for (int j = 0; j < p; ++j)
          put(buf + sv.prefix[size_t(j)], static_cast<const char*>(c.sendbuf) + MPI_Aint(c.sdispls[j]) * l.extent,
              uint64_t(c.sendcounts[j]), c.sendtype, comm);
        pr.in = buf;
      }
      return pr;
    }
  }
  return pr;
}

// ------------------------------------------------------------ decisions

std::string describe_call(const Collective& c) {
  std::string s = cat(coll_op_name(c.op), " p=", c.nranks);
  if (has_root(c.op)) s += cat(" root=", c.root);
  if (c.op != CollOp::barrier) s += cat(" size=", c.size_bytes(), "B");
  return s;
}

std::string choose(const Collective& c, const std::shared_ptr<Planner>& pl, CommState& st, int rank) {
  Config& cfg = config();
  // gatherv/scatterv/alltoallv: counts are known only locally, so the choice
  // may not depend on them: the local-count algorithms.
  if (c.op == CollOp::gatherv || c.op == CollOp::scatterv || c.op == CollOp::alltoallv) {
    std::string algo = c.op == CollOp::gatherv ? "star_gather" : c.op == CollOp::scatterv ? "star_scatter" : "pairwise_exchange";
    if (auto forced = pl->overrides().match(c)) {
      AlgorithmSpec as = parse_algorithm_spec(*forced);
      if (find_algorithm(as.name).local_counts) algo = *forced;
      else if (cfg.explain && rank == 0)
        say(cat("HETCOLL_ALGO's ", *forced, " ignored for ", coll_op_name(c.op), ": it needs every rank's counts"));
    }
    return algo;
  }
  Collective planned = c;
  planned.in_place = false;  // in-place is the root's affair: decide as everybody does
  bool per_rank = pl->model().ranks() > 0;
  Decision d = pl->decide(planned, per_rank ? st.group_key : 0, per_rank ? st.world_ranks : std::vector<int>{});
  if (cfg.explain && d.fresh && rank == 0) {
    std::string line = cat(describe_call(planned), ": ", d.algorithm);
    if (d.forced) {
      line += " (forced by HETCOLL_ALGO)";
    } else {
      line += cat(", predicted ", d.predicted * 1e6, " us");
      if (!d.runner_up.empty())
        line += cat("; runner-up ", d.runner_up, " ", d.runner_up_predicted * 1e6, " us (+",
                    int(100.0 * (d.runner_up_predicted - d.predicted) / std::max(d.predicted, 1e-30)), "%)");
    }
    say(line);
  }
  return d.algorithm;
}

uint64_t key_of(const Collective& c) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t x) { h = (h ^ x) * 1099511628211ull + (h >> 31); };
  mix(uint64_t(c.op));
  mix(uint64_t(uint32_t(c.nranks)));
  mix(uint64_t(uint32_t(c.root)));
  mix(c.count);
  mix(c.elem_size);
  mix(uint64_t(c.in_place) * 2 + c.order_free);
  if (!c.counts.empty() || !c.sendcounts.empty())  // the v-collectives
    for (auto* v : {&c.counts, &c.displs, &c.sendcounts, &c.sdispls, &c.recvcounts, &c.rdispls}) {
      mix(v->size());
      for (uint64_t x : *v) mix(x);
    }
  return h;
}

bool same(const Collective& a, const Collective& b) {
  return a.op == b.op && a.nranks == b.nranks && a.root == b.root && a.count == b.count && a.elem_size == b.elem_size &&
         a.in_place == b.in_place && a.order_free == b.order_free && a.counts == b.counts && a.displs == b.displs &&
         a.sendcounts == b.sendcounts && a.recvcounts == b.recvcounts && a.sdispls == b.sdispls &&
         a.rdispls == b.rdispls;
}

// A profile with per-rank data for another job size: report it once and
// plan with the default model instead.
void check_profile_fits() {
  Config& cfg = config();
  std::lock_guard<std::mutex> lock(cfg.mu);
  if (cfg.model->ranks() == 0) return;
  int world = 0;
  PMPI_Comm_size(MPI_COMM_WORLD, &world);
  if (cfg.model->ranks() == world) return;
  std::string note = cat("HETCOLL_PROFILE describes ", cfg.model->ranks(), " ranks, the job has ", world, "; using ",
                         kDefaultModel);
  if (cfg.explain && cfg.reported.insert(note).second) say(note);
  cfg.model = parse_model(kDefaultModel);
  cfg.planner = std::make_shared<Planner>(cfg.model, cfg.overrides);
  cfg.generation.fetch_add(1, std::memory_order_acq_rel);
}

// Plans (choose), generates this rank's program and compiles it.
Compiled compile_call(const Collective& coll, CommState& st, int rank) {
  check_profile_fits();
  Compiled cc;
  cc.coll = coll;
  const std::shared_ptr<Planner> pl = planner();  // model and overrides, consistent
  std::string algo = choose(coll, pl, st, rank);
  const Algorithm& a = find_algorithm(parse_algorithm_spec(algo).name);
  Collective run_coll = coll;
  if (coll.in_place) {
    // An algorithm that cannot run in place gets the input copied aside.
    cc.aside = std::find(a.copy_in_place.begin(), a.copy_in_place.end(), coll.op) != a.copy_in_place.end();
    run_coll.in_place = !cc.aside;
  }
  // The execution passes (schedule/passes.hpp): sends of the rank's own
  // input read it where the user keeps it; the first contribution received
  // lands in the accumulator. The executor then folds the remaining input
  // copies into reductions.
  Schedule s = optimize_for_execution(generate(algo, run_coll, pl->model(), rank));
  cc.prog = compile(s, rank, st.info.tag_limit);
  return cc;
}

Status execute_call(const Call& call) {
  t_layouts.n = 0;
  Config& cfg = config();
  if (cfg.disabled) throw Decline{"HETCOLL_DISABLE is set"};
  if (call.comm == MPI_COMM_NULL) throw InputError("MPI_COMM_NULL");
  // A communicator with state is an intracommunicator hetcoll has used.
  CommState* known = find_state(call.comm);
  if (!known) {
    int inter = 0;
    check(PMPI_Comm_test_inter(call.comm, &inter), "MPI_Comm_test_inter");
    if (inter) throw Decline{"an intercommunicator"};
  }
  // Reductions: the type and the op decide whether hetcoll can combine; they
  // are the same on every rank. Check before the communicator state exists.
  Reduction red;
  if (is_reduction(call.op)) reduction_of(call.type, call.reduce_op, red);
  CommState& st = known ? *known : create_state(call.comm);
  const int p = st.info.size, rank = st.info.rank;
  if (has_root(call.op) && (call.root < 0 || call.root >= p)) throw InputError(cat("root ", call.root, " is not in the group"));
  std::unique_lock<std::mutex> lock(st.mu, std::defer_lock);
  if (st.multiple) lock.lock();
  Prepared pr = prepare(call, red, &st, p, rank);
  pr.coll.in_place = pr.in_place;

  // The compiled program for this call shape, from the cache if the
  // configuration has not changed since.
  const uint64_t gen = cfg.generation.load(std::memory_order_acquire);
  if (st.generation != gen) {
    st.compiled.clear();
    st.recent = nullptr;
    st.generation = gen;
  }
  const uint64_t key = key_of(pr.coll);
  if (!st.recent || st.recent_key != key || !same(st.recent->coll, pr.coll)) {
    auto it = st.compiled.find(key);
    if (it == st.compiled.end() || !same(it->second.coll, pr.coll)) {
      if (st.compiled.size() >= 256) st.compiled.clear();
      pr.coll.check();
      Compiled cc = compile_call(pr.coll, st, rank);
      it = st.compiled.insert_or_assign(key, std::move(cc)).first;
    }
    st.recent = &it->second;
    st.recent_key = key;
    st.last = st.recent->prog.algorithm;
  }
  const Compiled& cc = *st.recent;

  const void* in = pr.in;
  if (cc.aside) {
    uint64_t n = pr.coll.in_bytes(rank);
    char* buf = grow(st.aside, n);
    if (n) std::memcpy(buf, pr.in, n);
    in = buf;
  }
  Bindings b{in, pr.out, grow(st.tmp, cc.prog.tmp_bytes + 1)};
  st.transport->reset();
  run(cc.prog, b, pr.kernel, *st.transport, st.scratch);
  for (auto& f : pr.after) f();
  return Status::ok;
}

}  // namespace

Status run(const Call& call) noexcept {
  Config* cfg = nullptr;
  try {
    cfg = &config();
    if (!cfg->model_note.empty() && cfg->explain) {
      std::lock_guard<std::mutex> lock(cfg->mu);
      if (cfg->reported.insert(cfg->model_note).second) say(cfg->model_note);
    }
    return execute_call(call);
  } catch (const Decline& d) {
    t_error = cat(mpi_name(call.op), ": ", d.why);
    if (cfg && cfg->explain) {
      std::lock_guard<std::mutex> lock(cfg->mu);
      if (cfg->reported.insert(t_error).second) say(t_error + " → native MPI");
    }
    return Status::unsupported;
  } catch (const InputError& e) {
    t_error = cat(mpi_name(call.op), ": ", e.what());
    return Status::bad_argument;
  } catch (const ScheduleError& e) {
    t_error = cat(mpi_name(call.op), ": ", e.what());
    return Status::mpi_error;
  } catch (const std::exception& e) {
    t_error = cat(mpi_name(call.op), ": ", e.what());
    return Status::internal;
  }
}

const char* last_error() noexcept { return t_error.c_str(); }

std::string last_decision(MPI_Comm comm) {
  void* value = nullptr;
  int flag = 0;
  if (comm == MPI_COMM_NULL || PMPI_Comm_get_attr(comm, keyval(), &value, &flag) != MPI_SUCCESS || !flag) return "";
  auto* st = static_cast<CommState*>(value);
  std::unique_lock<std::mutex> lock(st->mu, std::defer_lock);
  if (st->multiple) lock.lock();
  return st->last;
}

void set_model(const std::string& spec) {
  Config& c = config();
  ModelPtr m = spec.empty() ? parse_model(kDefaultModel) : load_model(spec);
  std::lock_guard<std::mutex> lock(c.mu);
  c.model = m;
  c.planner = std::make_shared<Planner>(c.model, c.overrides);
  c.generation.fetch_add(1, std::memory_order_acq_rel);
}

void set_overrides(const std::string& rules) {
  Config& c = config();
  Overrides o = Overrides::parse(rules);
  std::lock_guard<std::mutex> lock(c.mu);
  c.overrides = o;
  c.planner = std::make_shared<Planner>(c.model, c.overrides);
  c.generation.fetch_add(1, std::memory_order_acq_rel);
}

const char* mpi_name(CollOp op) {
  switch (op) {
    case CollOp::bcast: return "MPI_Bcast";
    case CollOp::reduce: return "MPI_Reduce";
    case CollOp::allreduce: return "MPI_Allreduce";
    case CollOp::gather: return "MPI_Gather";
    case CollOp::gatherv: return "MPI_Gatherv";
    case CollOp::scatter: return "MPI_Scatter";
    case CollOp::scatterv: return "MPI_Scatterv";
    case CollOp::allgather: return "MPI_Allgather";
    case CollOp::allgatherv: return "MPI_Allgatherv";
    case CollOp::reduce_scatter_block: return "MPI_Reduce_scatter_block";
    case CollOp::reduce_scatter: return "MPI_Reduce_scatter";
    case CollOp::alltoall: return "MPI_Alltoall";
    case CollOp::alltoallv: return "MPI_Alltoallv";
    case CollOp::barrier: return "MPI_Barrier";
    case CollOp::scan: return "MPI_Scan";
    case CollOp::exscan: return "MPI_Exscan";
  }
  return "MPI_?";
}

}  // namespace hetcoll::mpi
