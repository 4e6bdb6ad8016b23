#include "algorithms/patterns/hybrid_mesh.hpp"

#include <algorithm>

#include <cmath>
#include <sstream>

#include "algorithms/patterns/common.hpp"
#include "algorithms/patterns/primitives.hpp"
#include "util/error.hpp"

namespace hetcoll {

std::string Mesh::str() const {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s + ":" + strategy;
}

int Mesh::size() const {
  int p = 1;
  for (int d : dims) p *= d;
  return p;
}

int Mesh::stride(int i) const {
  int s = 1;
  for (size_t j = size_t(i) + 1; j < dims.size(); ++j) s *= dims[j];
  return s;
}

int Mesh::coord(int i, int r) const { return (r / stride(i)) % dims[size_t(i)]; }

Group Mesh::line(int i, int r) const {
  int st = stride(i);
  return Group::strided(r - coord(i, r) * st, st, dims[size_t(i)]);
}

namespace {
std::string strategy_for(CollOp op, int k, bool with_m) {
  if (op == CollOp::allgather) return with_m ? "M" + std::string(size_t(k - 1), 'C') : std::string(size_t(k), 'C');
  if (with_m) return std::string(size_t(k - 1), 'S') + "M" + std::string(size_t(k - 1), 'C');
  return std::string(size_t(k), 'S') + std::string(size_t(k), 'C');
}

// Ordered factorisations of q into factors >= 2 (each a divisor of the
// group size, from divs), with at most max_dims factors; stops once out
// holds more than cap.
void factorizations(int q, const std::vector<int>& divs, size_t max_dims, size_t cap, std::vector<int>& cur,
                    std::vector<std::vector<int>>& out) {
  if (out.size() > cap) return;
  if (q == 1) {
    if (cur.size() >= 2) out.push_back(cur);
    return;
  }
  if (cur.size() == max_dims) return;
  for (int d : divs) {
    if (d > q) break;
    if (q % d != 0) continue;
    cur.push_back(d);
    factorizations(q / d, divs, max_dims, cap, cur, out);
    cur.pop_back();
  }
}
}  // namespace

Mesh parse_mesh(const std::string& text, CollOp op, int p) {
  auto colon = text.find(':');
  if (colon == std::string::npos)
    throw InputError(cat("mesh '", text, "' is not DIMSxDIMS:STRATEGY (e.g. 2x3x5:SSMCC)"));
  Mesh m;
  m.strategy = text.substr(colon + 1);
  std::stringstream ss(text.substr(0, colon));
  std::string d;
  int64_t ranks = 1;
  while (std::getline(ss, d, 'x')) {
    if (d.empty() || d.find_first_not_of("0123456789") != std::string::npos || d.size() > 6)
      throw InputError(cat("mesh '", text, "': '", d, "' is not a dimension"));
    int v = std::stoi(d);
    if (v < 2) throw InputError(cat("mesh '", text, "': dimensions must be at least 2"));
    ranks *= v;
    if (ranks > kMaxRanks) throw InputError(cat("mesh '", text, "' has more than ", kMaxRanks, " ranks"));
    m.dims.push_back(v);
  }
  if (m.dims.empty()) throw InputError(cat("mesh '", text, "' has no dimensions"));
  if (m.size() != p) throw InputError(cat("mesh '", text, "' has ", m.size(), " ranks, the group ", p));
  const int k = int(m.dims.size());
  if (m.strategy != strategy_for(op, k, true) && m.strategy != strategy_for(op, k, false))
    throw InputError(cat("mesh '", text, "': strategy for ", k, " dimension", k > 1 ? "s" : "", " of ",
                         coll_op_name(op), " is ", strategy_for(op, k, true), " or ", strategy_for(op, k, false)));
  return m;
}

std::vector<Mesh> hybrid_meshes(CollOp op, int p) {
  std::vector<std::vector<int>> fs;
  std::vector<int> cur;
  if (p >= 4) {
    // Every ordered factorisation while there are at most kMaxMeshes (p up
    // to ~2^10); beyond, those with the most dimensions that keep within
    // it, and the finest one (all prime factors). 2^16 has 32,768.
    constexpr size_t kMaxMeshes = 1024;
    std::vector<int> divs;
    for (int d = 2; int64_t(d) * d <= p; ++d)
      if (p % d == 0) divs.push_back(d);
    for (size_t i = divs.size(); i-- > 0;)
      if (divs[i] != p / divs[i]) divs.push_back(p / divs[i]);
    divs.push_back(p);
    std::sort(divs.begin(), divs.end());
    divs.erase(std::unique(divs.begin(), divs.end()), divs.end());
    for (size_t dims = 2;; ++dims) {
      std::vector<std::vector<int>> more;
      factorizations(p, divs, dims, kMaxMeshes, cur, more);
      if (more.size() > kMaxMeshes) break;
      const bool grew = more.size() > fs.size();
      fs = std::move(more);
      if (!grew) break;  // every factorisation is in
    }
    std::vector<int> finest;
    for (int q = p, d = 2; q > 1;) {
      if (q % d == 0) {
        finest.push_back(d);
        q /= d;
      } else {
        ++d;
      }
    }
    if (finest.size() >= 2 && std::find(fs.begin(), fs.end(), finest) == fs.end()) fs.push_back(finest);
  }
  std::vector<Mesh> out;
  for (auto& f : fs)
    for (bool with_m : {true, false}) out.push_back({f, strategy_for(op, int(f.size()), with_m)});
  return out;
}

namespace {
// Piece sizes, exactly (nullopt when a split is uneven) or as real numbers.
std::optional<Terms> cost_impl(CollOp op, const Mesh& mesh, double count, double elem, bool conflict, bool exact) {
  const int k = int(mesh.dims.size());
  auto lg = [](int d) { return double(ceil_log2(uint64_t(d))); };
  auto split = [&](double n, int d) -> std::optional<double> {
    if (exact && std::fmod(n, double(d)) != 0) return std::nullopt;
    return n / d;
  };
  Terms t;
  if (op == CollOp::allgather) {
    double chunk = count * elem;  // one rank's block
    int first = k - 1;
    int d = mesh.dims[size_t(first)];
    if (mesh.strategy[0] == 'M') {
      t += Terms{lg(d), (d - 1) * chunk, 0};
      t += lg(d) * Terms{1, d * chunk, 0};
    } else {
      t += double(d - 1) * Terms{1, chunk, 0};
    }
    chunk *= d;
    for (int i = k - 2; i >= 0; --i) {
      int di = mesh.dims[size_t(i)];
      t += double(di - 1) * Terms{1, chunk, 0};
      chunk *= di;
    }
    return t;
  }
  const bool combine = op == CollOp::allreduce;
  const int scatters = mesh.has_m() ? k - 1 : k;
  std::vector<double> part(static_cast<size_t>(k));  // elements of a part in dimension i
  double n = count, factor = 1;
  std::vector<double> conflict_of(static_cast<size_t>(k));
  for (int i = 0; i < k; ++i) {
    conflict_of[size_t(i)] = conflict ? factor : 1.0;
    factor *= mesh.dims[size_t(i)];
  }
  for (int i = 0; i < scatters; ++i) {
    int d = mesh.dims[size_t(i)];
    auto b = split(n, d);
    if (!b) return std::nullopt;
    part[size_t(i)] = *b;
    double bytes = *b * elem, cf = conflict_of[size_t(i)];
    if (combine) t += double(d - 1) * Terms{1, cf * bytes, bytes};
    else t += Terms{lg(d), cf * (d - 1) * bytes, 0};
    n = *b;
  }
  if (mesh.has_m()) {
    int d = mesh.dims[size_t(k - 1)];
    double bytes = n * elem, cf = conflict_of[size_t(k - 1)];
    if (combine) t += lg(d) * Terms{1, cf * bytes, bytes};
    t += lg(d) * Terms{1, cf * bytes, 0};
  }
  for (int i = scatters - 1; i >= 0; --i) {
    int d = mesh.dims[size_t(i)];
    t += double(d - 1) * Terms{1, conflict_of[size_t(i)] * part[size_t(i)] * elem, 0};
  }
  return t;
}
}  // namespace

std::optional<Terms> hybrid_cost(CollOp op, const Mesh& mesh, uint64_t count, uint32_t elem, bool conflict_factor) {
  return cost_impl(op, mesh, double(count), double(elem), conflict_factor, true);
}

Piece mesh_piece(const Mesh& mesh, int r, int level, uint64_t count) {
  Piece pc{0, count};
  for (int i = 0; i < level; ++i) {
    uint64_t d = uint64_t(mesh.dims[size_t(i)]), c = uint64_t(mesh.coord(i, r));
    uint64_t q = pc.count / d, rem = pc.count % d;
    pc.off += c * q + std::min(c, rem);
    pc.count = q + (c < rem ? 1 : 0);
  }
  return pc;
}

Place mesh_split_place(const Mesh& mesh, int r, int level, uint64_t count, uint32_t elem) {
  Piece pc = mesh_piece(mesh, r, level, count);
  return vector_place(Buf::out, even_blocks(pc.count, elem, mesh.dims[size_t(level)], pc.off * elem));
}

void mesh_collect_back(Builder& b, const Mesh& mesh, int scatters, uint64_t count, uint32_t elem) {
  for (int i = scatters - 1; i >= 0; --i)
    for (int r = 0; r < mesh.size(); ++r)
      if (mesh.coord(i, r) == 0) ring_allgather(b, mesh.line(i, r), mesh_split_place(mesh, r, i, count, elem));
}

std::optional<Terms> hybrid_closed(CollOp op, const GenContext& ctx) {
  if (ctx.coll.nranks == 1) return Terms{};
  const Mesh mesh = hybrid_mesh_for(ctx, cat("hybrid_", coll_op_name(op)).c_str());
  const int dk = mesh.dims.back();
  if (op == CollOp::allreduce && mesh.has_m() && floor_pow2(dk) != dk) return std::nullopt;
  return hybrid_cost(op, mesh, ctx.coll.count, ctx.coll.elem_size, false);
}

std::vector<ParamSpec> hybrid_params(CollOp op) {
  std::vector<ParamSpec> v{{"mesh", ParamKind::mesh, 0, 0, false,
                            "logical mesh d1x..xdk (product = p) and the strategy letters per dimension"}};
  if (op == CollOp::bcast || op == CollOp::allreduce)
    v.push_back({"levels", ParamKind::integer, 0, 1, false,
                 "1: ranks numbered subnet by subnet, host by host, so that the mesh's last dimensions lie inside "
                 "subnets"});
  return v;
}

bool has_subnets(const MachineModel& m, int n) {
  TopologyPtr t = m.topology();
  if (!t || t->ranks() < n) return false;
  for (int r = 1; r < n; ++r)
    if (t->group_of(r) != t->group_of(0)) return true;
  return false;
}

Mesh hybrid_mesh_for(const GenContext& ctx, const char* algo) {
  auto it = ctx.params.find("mesh");
  if (it != ctx.params.end()) {
    try {
      return parse_mesh(it->second, ctx.coll.op, ctx.coll.nranks);
    } catch (const InputError& e) {
      throw InputError(cat(algo, ": ", e.what()));
    }
  }
  return best_mesh(ctx.coll.op, ctx.coll.nranks, ctx.coll.count, ctx.coll.elem_size, ctx.model);
}

Builder hybrid_builder(const GenContext& ctx, const char* algo, const Mesh& mesh) {
  return make_builder(ctx, std::string(algo) + "[mesh=" + mesh.str() + "]");
}

Terms hybrid_estimate(CollOp op, const Mesh& mesh, uint64_t count, uint32_t elem) {
  return *cost_impl(op, mesh, double(count), double(elem), false, false);
}

Mesh best_mesh(CollOp op, int p, uint64_t count, uint32_t elem, const MachineModel& model) {
  auto meshes = hybrid_meshes(op, p);
  if (meshes.empty()) return Mesh{{p}, strategy_for(op, 1, true)};  // p prime: the 1-D short-vector form
  HockneyParams h = hockney_estimate(model, count * elem);
  const Mesh* best = nullptr;
  double best_t = 0;
  for (auto& m : meshes) {
    double t = h.time(*cost_impl(op, m, double(count), double(elem), false, false));
    if (!best || t < best_t) {
      best = &m;
      best_t = t;
    }
  }
  return *best;
}

}  // namespace hetcoll
