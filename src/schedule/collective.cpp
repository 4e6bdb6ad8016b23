#include "schedule/collective.hpp"

#include <algorithm>
#include <numeric>

#include "util/error.hpp"

namespace hetcoll {

namespace {
const char* const kNames[kNumCollOps] = {
#define HETCOLL_COLLECTIVE(name, Name, params, args) #name,
#include "hetcoll_collectives.def"
#undef HETCOLL_COLLECTIVE
};

uint64_t extent(const std::vector<uint64_t>& counts, const std::vector<uint64_t>& displs, size_t begin,
                size_t n) {
  uint64_t e = 0;
  for (size_t i = 0; i < n; ++i) e = std::max(e, displs[begin + i] + counts[begin + i]);
  return e;
}

std::vector<uint64_t> prefix(const std::vector<uint64_t>& counts) {
  std::vector<uint64_t> d(counts.size());
  uint64_t s = 0;
  for (size_t i = 0; i < counts.size(); ++i) { d[i] = s; s += counts[i]; }
  return d;
}

json::Value uvec(const std::vector<uint64_t>& v) {
  json::Value a = json::Value::array();
  for (auto x : v) a.push_back(json::Value(x));
  return a;
}

std::vector<uint64_t> uvec_from(const json::Value& v, const char* what) {
  std::vector<uint64_t> out;
  for (auto& x : json::as_array(v, what)) out.push_back(json::as_uint(x, what));
  return out;
}
}  // namespace

const char* coll_op_name(CollOp op) { return kNames[static_cast<int>(op)]; }

CollOp coll_op_from_name(const std::string& name) {
  for (int i = 0; i < kNumCollOps; ++i)
    if (name == kNames[i]) return static_cast<CollOp>(i);
  // Friendly aliases used by the papers and by MPI.
  if (name == "broadcast") return CollOp::bcast;
  if (name == "combine" || name == "combine_to_all" || name == "global_combine") return CollOp::allreduce;
  if (name == "combine_to_one") return CollOp::reduce;
  if (name == "collect") return CollOp::allgather;
  if (name == "distributed_combine") return CollOp::reduce_scatter_block;
  std::string list;
  for (int i = 0; i < kNumCollOps; ++i) list += std::string(i ? ", " : "") + kNames[i];
  throw InputError(cat("unknown collective '", name, "' (known: ", list, ")"));
}

std::vector<CollOp> all_coll_ops() {
  std::vector<CollOp> v;
  for (int i = 0; i < kNumCollOps; ++i) v.push_back(static_cast<CollOp>(i));
  return v;
}

namespace {
// What kind of collective each is, one row each in the order of
// hetcoll_collectives.def: the facts code asks of a collective by kind.
// (What it moves, it means in the switches of Collective, model/bound.cpp,
// interpose/buffers.cpp and the hierarchy's phases.)
struct CollFacts {
  CollOp op;
  bool reduction;          // combines contributions with an operator
  bool root;               // one rank is the root
  bool counts_everywhere;  // MPI gives every rank of the call every count
  CollOp base;             // its regular form (a v-collective's, exscan's)
};
constexpr CollFacts kFacts[] = {
    // collective                reduction  root   counts everywhere  base form
    {CollOp::bcast,                 false,  true,  true,  CollOp::bcast},
    {CollOp::reduce,                true,   true,  true,  CollOp::reduce},
    {CollOp::allreduce,             true,   false, true,  CollOp::allreduce},
    {CollOp::gather,                false,  true,  true,  CollOp::gather},
    {CollOp::gatherv,               false,  true,  false, CollOp::gather},
    {CollOp::scatter,               false,  true,  true,  CollOp::scatter},
    {CollOp::scatterv,              false,  true,  false, CollOp::scatter},
    {CollOp::allgather,             false,  false, true,  CollOp::allgather},
    {CollOp::allgatherv,            false,  false, true,  CollOp::allgather},
    {CollOp::reduce_scatter_block,  true,   false, true,  CollOp::reduce_scatter_block},
    {CollOp::reduce_scatter,        true,   false, true,  CollOp::reduce_scatter_block},
    {CollOp::alltoall,              false,  false, true,  CollOp::alltoall},
    {CollOp::alltoallv,             false,  false, false, CollOp::alltoall},
    {CollOp::barrier,               false,  false, true,  CollOp::barrier},
    {CollOp::scan,                  true,   false, true,  CollOp::scan},
    {CollOp::exscan,                true,   false, true,  CollOp::scan},
};
constexpr bool rows_in_order() {
  for (int i = 0; i < kNumCollOps; ++i)
    if (static_cast<int>(kFacts[i].op) != i) return false;
  return true;
}
static_assert(sizeof(kFacts) / sizeof(kFacts[0]) == kNumCollOps && rows_in_order(),
              "kFacts: one row for each collective of hetcoll_collectives.def, in its order");
const CollFacts& facts(CollOp op) { return kFacts[static_cast<int>(op)]; }
}  // namespace

bool is_reduction(CollOp op) { return facts(op).reduction; }
bool has_root(CollOp op) { return facts(op).root; }
CollOp base_form(CollOp op) { return facts(op).base; }
bool counts_known_everywhere(CollOp op) { return facts(op).counts_everywhere; }

uint64_t Collective::in_bytes(int r) const {
  const uint64_t e = elem_size, p = uint64_t(nranks);
  switch (op) {
    case CollOp::bcast:
    case CollOp::barrier:
      return 0;
    case CollOp::reduce:
    case CollOp::allreduce:
    case CollOp::scan:
    case CollOp::exscan:
    case CollOp::gather:
    case CollOp::allgather:
      return count * e;
    case CollOp::gatherv:
    case CollOp::allgatherv:
      return counts[size_t(r)] * e;
    case CollOp::scatter:
      return r == root ? p * count * e : 0;
    case CollOp::scatterv:
      return r == root ? extent(counts, displs, 0, size_t(p)) * e : 0;
    case CollOp::reduce_scatter_block:
    case CollOp::alltoall:
      return p * count * e;
    case CollOp::reduce_scatter:
      return std::accumulate(counts.begin(), counts.end(), uint64_t(0)) * e;
    case CollOp::alltoallv:
      return extent(sendcounts, sdispls, size_t(r) * p, size_t(p)) * e;
  }
  return 0;
}

uint64_t Collective::out_bytes(int r) const {
  const uint64_t e = elem_size, p = uint64_t(nranks);
  switch (op) {
    case CollOp::barrier:
      return 0;
    case CollOp::bcast:
    case CollOp::allreduce:
    case CollOp::scan:
    case CollOp::exscan:
    case CollOp::scatter:
    case CollOp::reduce_scatter_block:
      return count * e;
    case CollOp::reduce:
      return r == root ? count * e : 0;
    case CollOp::gather:
      return r == root ? p * count * e : 0;
    case CollOp::gatherv:
      return r == root ? extent(counts, displs, 0, size_t(p)) * e : 0;
    case CollOp::scatterv:
    case CollOp::reduce_scatter:
      return counts[size_t(r)] * e;
    case CollOp::allgather:
    case CollOp::alltoall:
      return p * count * e;
    case CollOp::allgatherv:
      return extent(counts, displs, 0, size_t(p)) * e;
    case CollOp::alltoallv:
      return extent(recvcounts, rdispls, size_t(r) * p, size_t(p)) * e;
  }
  return 0;
}

uint64_t Collective::total_bytes() const {
  uint64_t m = 0;
  for (int r = 0; r < nranks; ++r) m = std::max({m, in_bytes(r), out_bytes(r)});
  return m;
}

uint64_t Collective::size_bytes() const {
  const uint64_t e = elem_size, p = uint64_t(nranks);
  switch (op) {
    case CollOp::barrier:
      return 0;
    case CollOp::gatherv:
    case CollOp::scatterv:
    case CollOp::allgatherv:
    case CollOp::reduce_scatter:
      return std::accumulate(counts.begin(), counts.end(), uint64_t(0)) * e / p;
    case CollOp::alltoallv:
      return std::accumulate(sendcounts.begin(), sendcounts.end(), uint64_t(0)) * e / (p * p);
    default:
      return count * e;
  }
}

std::optional<int64_t> Collective::in_place_offset(int r) const {
  const int64_t e = elem_size;
  switch (op) {
    case CollOp::bcast:
    case CollOp::barrier:
      return std::nullopt;
    case CollOp::reduce:
      if (r != root) return std::nullopt;
      return 0;
    case CollOp::allreduce:
    case CollOp::scan:
    case CollOp::exscan:
    case CollOp::reduce_scatter_block:
    case CollOp::reduce_scatter:
    case CollOp::alltoall:
    case CollOp::alltoallv:
      return 0;
    case CollOp::gather:
      if (r != root) return std::nullopt;
      return int64_t(r) * int64_t(count) * e;
    case CollOp::gatherv:
      if (r != root) return std::nullopt;
      return int64_t(displs[size_t(r)]) * e;
    case CollOp::scatter:
      if (r != root) return std::nullopt;
      return -int64_t(r) * int64_t(count) * e;
    case CollOp::scatterv:
      if (r != root) return std::nullopt;
      return -int64_t(displs[size_t(r)]) * e;
    case CollOp::allgather:
      return int64_t(r) * int64_t(count) * e;
    case CollOp::allgatherv:
      return int64_t(displs[size_t(r)]) * e;
  }
  return std::nullopt;
}

namespace {
void check_group(CollOp op, int nranks) {
  if (nranks < 1) throw InputError(cat("group size must be at least 1, got ", nranks));
  if (nranks > kMaxRanks) throw InputError(cat("group size ", nranks, " is more than hetcoll plans for (", kMaxRanks, ")"));
  if (op == CollOp::alltoallv && nranks > kMaxDenseRanks)
    throw InputError(cat("alltoallv of ", nranks, " ranks: hetcoll holds its p x p counts in full, up to ",
                         kMaxDenseRanks, " ranks"));
}

// a * b, refusing more than kMaxBytes.
uint64_t bounded(uint64_t a, uint64_t b, const char* what) {
  uint64_t r;
  if (__builtin_mul_overflow(a, b, &r) || r > kMaxBytes)
    throw InputError(cat(what, " would be more than ", kMaxBytes, " bytes"));
  return r;
}
}  // namespace

void Collective::check() const {
  check_group(op, nranks);
  if (has_root(op) && (root < 0 || root >= nranks))
    throw InputError(cat("root ", root, " is not a rank of a group of ", nranks));
  if (elem_size == 0) throw InputError("element size must be at least 1 byte");
  const size_t p = size_t(nranks);
  // Every buffer within kMaxBytes (so that no size below overflows).
  bounded(bounded(count, elem_size, "one block"), p, "the buffer of all blocks");
  uint64_t sum = 0;
  for (uint64_t x : counts) {
    sum += bounded(x, elem_size, "a block");
    if (sum > kMaxBytes) throw InputError(cat("the blocks would be more than ", kMaxBytes, " bytes"));
  }
  switch (op) {
    case CollOp::gatherv:
    case CollOp::scatterv:
    case CollOp::allgatherv:
    case CollOp::reduce_scatter:
      if (counts.size() != p) throw InputError(cat(coll_op_name(op), ": need ", p, " counts, got ", counts.size()));
      if (op != CollOp::reduce_scatter && displs.size() != p)
        throw InputError(cat(coll_op_name(op), ": need ", p, " displacements, got ", displs.size()));
      break;
    case CollOp::alltoallv:
      if (sendcounts.size() != p * p || recvcounts.size() != p * p || sdispls.size() != p * p ||
          rdispls.size() != p * p)
        throw InputError(cat("alltoallv: counts and displacements must be ", p, "x", p, " matrices"));
      for (size_t i = 0; i < p; ++i)
        for (size_t j = 0; j < p; ++j)
          if (sendcounts[i * p + j] != recvcounts[j * p + i])
            throw InputError(cat("alltoallv: rank ", i, " sends ", sendcounts[i * p + j], " elements to rank ", j,
                                 " which expects ", recvcounts[j * p + i]));
      break;
    default:
      break;
  }
}

std::string Collective::describe() const {
  std::string s = cat(coll_op_name(op), " p=", nranks);
  if (has_root(op)) s += cat(" root=", root);
  switch (op) {
    case CollOp::gatherv:
    case CollOp::scatterv:
    case CollOp::allgatherv:
    case CollOp::reduce_scatter:
    case CollOp::alltoallv:
      s += cat(" bytes<=", total_bytes());
      break;
    case CollOp::barrier:
      break;
    default:
      s += cat(" count=", count);
  }
  if (elem_size != 1) s += cat(" elem=", elem_size, "B");
  if (order_free && is_reduction(op)) s += " order-free";
  if (in_place) s += " in-place";
  return s;
}

json::Value Collective::to_json() const {
  json::Value v = json::Value::object();
  v["op"] = coll_op_name(op);
  v["nranks"] = nranks;
  if (has_root(op)) v["root"] = root;
  v["elem_size"] = elem_size;
  if (order_free) v["order_free"] = true;
  if (in_place) v["in_place"] = true;
  v["count"] = count;
  if (!counts.empty()) v["counts"] = uvec(counts);
  if (!displs.empty()) v["displs"] = uvec(displs);
  if (!sendcounts.empty()) {
    v["sendcounts"] = uvec(sendcounts);
    v["sdispls"] = uvec(sdispls);
    v["recvcounts"] = uvec(recvcounts);
    v["rdispls"] = uvec(rdispls);
  }
  return v;
}

Collective Collective::from_json(const json::Value& v) {
  Collective c;
  c.op = coll_op_from_name(json::as_string(json::at(v, "op"), "op"));
  c.nranks = int(json::as_int(json::at(v, "nranks"), "nranks"));
  if (auto* r = json::find(v, "root")) c.root = int(json::as_int(*r, "root"));
  if (auto* e = json::find(v, "elem_size")) c.elem_size = uint32_t(json::as_uint(*e, "elem_size"));
  if (auto* n = json::find(v, "count")) c.count = json::as_uint(*n, "count");
  if (auto* o = json::find(v, "order_free")) c.order_free = json::as_bool(*o, "order_free");
  if (auto* o = json::find(v, "in_place")) c.in_place = json::as_bool(*o, "in_place");
  if (auto* x = json::find(v, "counts")) c.counts = uvec_from(*x, "counts");
  if (auto* x = json::find(v, "displs")) c.displs = uvec_from(*x, "displs");
  if (auto* x = json::find(v, "sendcounts")) c.sendcounts = uvec_from(*x, "sendcounts");
  if (auto* x = json::find(v, "sdispls")) c.sdispls = uvec_from(*x, "sdispls");
  if (auto* x = json::find(v, "recvcounts")) c.recvcounts = uvec_from(*x, "recvcounts");
  if (auto* x = json::find(v, "rdispls")) c.rdispls = uvec_from(*x, "rdispls");
  c.check();
  return c;
}

Collective Collective::make(CollOp op, int nranks, uint64_t count, int root, uint32_t elem_size) {
  check_group(op, nranks);
  Collective c;
  c.op = op;
  c.nranks = nranks;
  c.count = count;
  c.root = root;
  c.elem_size = elem_size;
  if (nranks >= 1) {
    switch (op) {
      case CollOp::gatherv:
      case CollOp::scatterv:
      case CollOp::allgatherv:
      case CollOp::reduce_scatter:
        c.counts.assign(size_t(nranks), count);
        c.displs = prefix(c.counts);
        break;
      case CollOp::alltoallv:
        return make_alltoallv(nranks, std::vector<uint64_t>(size_t(nranks) * size_t(nranks), count), elem_size);
      default:
        break;
    }
  }
  c.check();
  return c;
}

Collective Collective::make_v(CollOp op, std::vector<uint64_t> counts, int root, uint32_t elem_size) {
  Collective c;
  c.op = op;
  c.nranks = int(counts.size());
  c.root = root;
  c.elem_size = elem_size;
  c.displs = prefix(counts);
  c.counts = std::move(counts);
  c.check();
  return c;
}

Collective Collective::make_alltoallv(int nranks, std::vector<uint64_t> sendcounts, uint32_t elem_size) {
  check_group(CollOp::alltoallv, nranks);
  Collective c;
  c.op = CollOp::alltoallv;
  c.nranks = nranks;
  c.elem_size = elem_size;
  size_t p = size_t(nranks);
  if (sendcounts.size() != p * p) throw InputError(cat("alltoallv: need a ", p, "x", p, " count matrix"));
  c.recvcounts.resize(p * p);
  c.sdispls.resize(p * p);
  c.rdispls.resize(p * p);
  for (size_t i = 0; i < p; ++i)
    for (size_t j = 0; j < p; ++j) c.recvcounts[j * p + i] = sendcounts[i * p + j];
  for (size_t i = 0; i < p; ++i) {
    uint64_t s = 0, r = 0;
    for (size_t j = 0; j < p; ++j) {
      c.sdispls[i * p + j] = s;
      s += sendcounts[i * p + j];
      c.rdispls[i * p + j] = r;
      r += c.recvcounts[i * p + j];
    }
  }
  c.sendcounts = std::move(sendcounts);
  c.check();
  return c;
}

int size_class(uint64_t bytes) {
  if (bytes == 0) return 0;
  int k = 63 - __builtin_clzll(bytes);  // 2^k <= bytes < 2^(k+1)
  uint64_t quarter = k >= 2 ? (bytes >> (k - 2)) & 3 : (bytes << (2 - k)) & 3;
  return 1 + 4 * k + int(quarter);
}

uint64_t size_class_floor(int cls) {
  if (cls <= 0) return 0;
  int k = (cls - 1) / 4, quarter = (cls - 1) % 4;
  return (uint64_t(4 + quarter) << k) >> 2;
}

Collective representative(const Collective& call) {
  Collective rep;
  const uint64_t e = call.elem_size;
  auto block = [&](uint64_t bytes) { return (size_class_floor(size_class(bytes)) + e - 1) / e; };
  switch (call.op) {
    case CollOp::barrier:
      rep = Collective::make(CollOp::barrier, call.nranks, 0);
      break;
    case CollOp::gatherv:
    case CollOp::scatterv:
      rep = Collective::make_v(call.op, std::vector<uint64_t>(size_t(call.nranks), (kUnknownBlockBytes + e - 1) / e),
                               call.root, call.elem_size);
      break;
    case CollOp::alltoallv: {
      const size_t p = size_t(call.nranks);
      rep = Collective::make_alltoallv(call.nranks, std::vector<uint64_t>(p * p, (kUnknownBlockBytes + e - 1) / e),
                                       call.elem_size);
      break;
    }
    case CollOp::allgatherv:
    case CollOp::reduce_scatter:
      rep = Collective::make_v(call.op, std::vector<uint64_t>(size_t(call.nranks), block(call.size_bytes())),
                               call.root, call.elem_size);
      break;
    default:
      rep = Collective::make(call.op, call.nranks, block(call.size_bytes()), has_root(call.op) ? call.root : 0,
                             call.elem_size);
  }
  rep.order_free = call.order_free;
  return rep;
}

}  // namespace hetcoll
