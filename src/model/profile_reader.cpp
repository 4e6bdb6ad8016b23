#include "model/profile.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <set>
#include <unordered_map>

#include "model/machine_model.hpp"
#include "model/profile_fields.hpp"
#include "util/error.hpp"

namespace hetcoll {

namespace {

using namespace profile_io;

// Nesting deeper than a profile has is refused before parsing. Returns the
// extent [first, last) of the top-level "pairs" object or array (empty
// where there is none), which a reader that skips the matrices leaves out
// of the parse.
std::pair<size_t, size_t> check_depth(const std::string& text) {
  size_t depth = 0, string_start = 0, pairs_first = 0, pairs_last = 0;
  bool in_string = false, pairs_key = false, in_pairs = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (in_string) {
      // To the closing quote: the next quote after an even run of backslashes.
      const void* q = std::memchr(text.data() + i, '"', text.size() - i);
      if (!q) break;
      i = size_t(static_cast<const char*>(q) - text.data());
      size_t slashes = 0;
      while (i - slashes > string_start && text[i - slashes - 1] == '\\') ++slashes;
      if (slashes % 2) continue;
      in_string = false;
      pairs_key = depth == 1 && !in_pairs && pairs_last == 0 && text.compare(string_start, i - string_start, "pairs") == 0;
      continue;
    }
    const char c = text[i];
    if (c == '"') {
      in_string = true;
      string_start = i + 1;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxProfileDepth)
        throw InputError(cat("profile: JSON nested deeper than ", kMaxProfileDepth, " levels: not a profile"));
      if (pairs_key && depth == 2) in_pairs = true, pairs_first = i;
      pairs_key = false;
    } else if (c == ']' || c == '}') {
      if (depth) --depth;
      if (in_pairs && depth == 1) in_pairs = false, pairs_last = i + 1;
      pairs_key = false;
    } else if (c != ':' && c != ' ' && c != '\n' && c != '\t' && c != '\r') {
      pairs_key = false;
    }
  }
  return {pairs_first, pairs_last};
}


// The text as JSON, bounded in size and depth (without pairs: the matrices
// skipped), as a flat document (util/json_document.hpp: every rank of a job
// reads it; a tree of maps and strings took 10x as long).
json::Document parse_profile_json(const std::string& text, bool with_pairs) {
  if (text.size() > kMaxProfileFileBytes)
    throw InputError(cat("profile: larger than ", kMaxProfileFileBytes >> 20, " MiB: not a profile"));
  const auto [pairs_first, pairs_last] = check_depth(text);
  try {
    // Without pairs: the matrices (most of a version 1 file) left out of the
    // parse, their brackets checked.
    if (!with_pairs && pairs_last > pairs_first) {
      std::string rest;
      rest.reserve(text.size() - (pairs_last - pairs_first) + 4);
      rest.append(text, 0, pairs_first).append("null").append(text, pairs_last, std::string::npos);
      return json::Document(rest, kMaxProfileDepth + 1);
    }
    return json::Document(text, kMaxProfileDepth + 1);
  } catch (const InputError& e) {
    throw InputError(cat("profile: not valid JSON (", e.what(), ")"));
  }
}

// "format", "version" and "measured": how and when the profile was measured.
void read_measured(const Reader& r, Profile& p) {
  if (!r.j.is_object()) throw InputError("profile: the top level is not an object");
  if (!r.has("format") || r.at("format").str() != kProfileFormat)
    throw InputError(cat("profile: \"format\" is not \"", kProfileFormat, "\": not a hetcoll profile"));
  const int64_t version = r.at("version").integer(INT64_MIN, INT64_MAX);
  if (version != 1 && version != kProfileVersion)
    throw InputError(cat("profile: schema version ", version, " is not one this hetcoll reads (1 to ",
                         kProfileVersion, "); probe again with this version"));
  p.version = int(version);
  Reader m = r.at("measured");
  read_fields(m, p, measured_fields(), p);
  if (p.mode != "concurrent" && p.mode != "sequential")
    throw InputError(cat("profile: measured.mode '", p.mode, "' is not concurrent or sequential"));
  if (m.has("phases")) {
    Reader ph = m.at("phases");
    if (!ph.j.is_object() || ph.j.size() > 64) throw InputError("profile: measured.phases is not an object of at most 64 phases");
    for (size_t k = 0; k < ph.j.size(); ++k) {
      const std::string name(ph.j.key(k));
      if (name.size() > 64) throw InputError("profile: measured.phases has a name longer than 64 characters");
      const double t = Reader(ph.j[k], "profile.measured.phases." + name).num(0, 1e9);
      auto same = std::find_if(p.phases.begin(), p.phases.end(), [&](const auto& q) { return q.first == name; });
      if (same != p.phases.end()) same->second = t;  // a name given twice: the last
      else p.phases.emplace_back(name, t);
    }
  }
  read_fields(m, p, message_fields(), p);
}

// "hosts": names, ranks, subnets and Banikazemi's per-host costs; their number.
size_t read_hosts(const Reader& r, Profile& p) {
  Reader hosts = r.at("hosts");
  const size_t n = hosts.size(kMaxProfileHosts);
  if (n == 0) throw InputError("profile: no hosts");
  std::set<std::string> names;
  std::vector<bool> rank_seen(size_t(p.ranks), false);
  p.hosts.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Reader h = hosts[i];
    HostProfile& x = p.hosts[i];
    x.name = h.at("name").str(256);
    if (x.name.empty()) throw InputError(cat("profile: ", h.path(), ".name is empty"));
    if (!names.insert(x.name).second) throw InputError(cat("profile: host '", x.name, "' appears twice"));
    Reader rk = h.at("ranks");
    const size_t nr = rk.size(kMaxProfileRanks);
    if (nr == 0) throw InputError(cat("profile: ", rk.path(), " is empty"));
    for (size_t k = 0; k < nr; ++k) {
      int v = int(rk[k].integer(0, p.ranks - 1));
      if (rank_seen[size_t(v)]) throw InputError(cat("profile: rank ", v, " is on two hosts"));
      rank_seen[size_t(v)] = true;
      x.ranks.push_back(v);
    }
    read_fields(h, x, host_fields(), p);
  }
  for (size_t k = 0; k < rank_seen.size(); ++k)
    if (!rank_seen[k]) throw InputError(cat("profile: rank ", k, " of measured.ranks is on no host"));
  return n;
}

// "subnets", "ring" and "backplane".
void read_structure(const Reader& r, Profile& p, size_t n) {
  read_fields(r.at("subnets"), p, subnet_fields(), p);
  std::vector<bool> used(size_t(p.subnet_count), false);
  for (const HostProfile& h : p.hosts) {
    if (h.subnet >= p.subnet_count)
      throw InputError(cat("profile: host '", h.name, "' is in subnet ", h.subnet, " of ", p.subnet_count));
    used[size_t(h.subnet)] = true;
  }
  for (size_t s = 0; s < used.size(); ++s)
    if (!used[s]) throw InputError(cat("profile: subnet ", s, " has no host"));

  Reader ring = r.at("ring");
  Reader rh = ring.at("hosts");
  if (rh.size(n) != n) throw InputError(cat("profile: ring.hosts has ", rh.j.size(), " hosts, the profile ", n));
  std::vector<bool> in_ring(n, false);
  for (size_t i = 0; i < n; ++i) {
    int h = int(rh[i].integer(0, int64_t(n) - 1));
    if (in_ring[size_t(h)]) throw InputError(cat("profile: host ", h, " appears twice in ring.hosts"));
    in_ring[size_t(h)] = true;
    p.ring.push_back(h);
  }
  p.ring_crossings = int(ring.at("crossings").integer(0, int64_t(n)));
  if (r.has("backplane")) {  // absent from profiles written before the probe measured it
    read_fields(r.at("backplane"), p.backplane, backplane_fields(), p);
  }
  if (r.has("sharing")) {  // absent from profiles written before the probe measured it
    read_fields(r.at("sharing"), p.sharing, sharing_fields(), p);
  }
}

// "network": the tree (version 2) — a root first, parents before
// children, switches above hosts, every host's leaf once.
void read_network(const Reader& r, Profile& p, size_t n) {
  if (!r.has("network")) {
    if (p.version >= 2 && !r.has("classes")) throw InputError("profile: neither \"network\" nor \"classes\"");
    return;
  }
  Reader nodes = r.at("network");
  const size_t count = nodes.size(4 * kMaxProfileHosts);
  std::vector<char> is_host(count, 0), leaf_seen(n, 0);
  p.network.resize(count);
  for (size_t i = 0; i < count; ++i) {
    Reader x = nodes[i];
    NodeProfile& node = p.network[i];
    node.name = x.at("name").str(256);
    node.parent = int(x.at("parent").integer(-1, int64_t(i) - 1));
    if ((i == 0) != (node.parent < 0)) throw InputError(cat("profile: ", x.path(), ": the first node alone is the root"));
    if (node.parent >= 0 && is_host[size_t(node.parent)])
      throw InputError(cat("profile: ", x.path(), " hangs off host '", p.network[size_t(node.parent)].name, "'"));
    if (x.has("host")) {
      node.host = int(x.at("host").integer(0, int64_t(n) - 1));
      if (i == 0) throw InputError("profile: the network's root is a host");
      if (leaf_seen[size_t(node.host)]++) throw InputError(cat("profile: host ", node.host, " has two leaves"));
      is_host[i] = 1;
    }
    if (i > 0) {
      node.shared = x.has("both");
      if (node.shared) {
        read_fields(x.at("both"), node.up, link_fields(), p);
        node.down = node.up;
      } else {
        read_fields(x.at("up"), node.up, link_fields(), p);
        read_fields(x.at("down"), node.down, link_fields(), p);
      }
    }
    if (x.has("fabric")) {
      Reader fb = x.at("fabric");
      if (fb.has("as")) {  // another switch's fabric, one link
        node.fabric_as = int(fb.at("as").integer(0, int64_t(i) - 1));
        if (p.network[size_t(node.fabric_as)].host >= 0)
          throw InputError(cat("profile: ", fb.path(), ": node ", node.fabric_as, " is a host"));
      } else {
        read_fields(fb, node.fabric, link_fields(), p);
      }
    }
  }
  for (size_t h = 0; h < n; ++h)
    if (!leaf_seen[h]) throw InputError(cat("profile: host '", p.hosts[h].name, "' has no leaf in the network"));
  std::vector<int> depth(count, 0);
  for (size_t i = 1; i < count; ++i)
    if ((depth[i] = depth[size_t(p.network[i].parent)] + 1) > 16)
      throw InputError(cat("profile: network node '", p.network[i].name, "' is deeper than 16 levels"));
}

// "pairs": the per-pair matrices (optional).
void read_pairs(const Reader& r, Profile& p, size_t n) {
  if (!r.has("pairs")) return;
  Reader pairs = r.at("pairs");
  auto matrix = [&](const char* key) {
    Reader a = pairs.at(key);
    if (a.size(n * n) != n * n)
      throw InputError(cat("profile: ", a.path(), " has ", a.j.size(), " entries, ", n, " hosts need ", n * n));
    std::vector<double> v(n * n);
    for (size_t k = 0; k < n * n; ++k) v[k] = a[k].num(0, kMaxSeconds);
    return v;
  };
  std::vector<double> smin = matrix("small_min"), smed = matrix("small_median"), lmin = matrix("large_min"),
                      lmed = matrix("large_median");
  p.small.resize(n * n);
  p.large.resize(n * n);
  for (size_t k = 0; k < n * n; ++k) {
    p.small[k] = {smin[k], smed[k]};
    p.large[k] = {lmin[k], lmed[k]};
  }
}

// "classes": per class of host pairs, and every pair of hosts has one —
// where the network has no tree (version 1); beside a tree, the
// shared-memory class is what the model reads.
void read_classes(const Reader& r, Profile& p, size_t n) {
  if (!r.has("classes") && !p.network.empty()) return;
  Reader classes = r.at("classes");
  const size_t nc = classes.size(size_t(p.subnet_count) * size_t(p.subnet_count + 1) / 2 + 1);
  for (size_t i = 0; i < nc; ++i) {
    Reader c = classes[i];
    PairClass x;
    read_fields(c, x, class_fields(), p);
    if ((x.a < 0) != (x.b < 0) || x.a > x.b)
      throw InputError(cat("profile: ", c.path(), ": subnets (", x.a, ", ", x.b, ") are not a class"));
    for (const PairClass& y : p.classes)
      if (y.a == x.a && y.b == x.b) throw InputError(cat("profile: class '", x.name, "' appears twice"));
    p.classes.push_back(std::move(x));
  }
  // Every pair of hosts needs its class (or the tree).
  for (int a = 0; a < p.subnet_count && p.network.empty(); ++a)
    for (int b = a; b < p.subnet_count; ++b) {
      bool needed = a != b || p.hosts.size() > 1;
      if (a == b) {
        int members = 0;
        for (const HostProfile& h : p.hosts) members += h.subnet == a;
        needed = members > 1;
      }
      if (needed && !p.between(a, b))
        throw InputError(cat("profile: no class for the host pairs of subnets ", a, " and ", b));
    }
  if (n == 1 && !p.shared_memory() && p.hosts[0].ranks.size() > 1)
    throw InputError("profile: one host of several ranks and no shared-memory class");
}

// "reductions", "lambda" and "model".
void read_rates(const Reader& r, Profile& p) {
  Reader reds = r.at("reductions");
  const size_t nred = reds.size(1024);
  p.reductions.resize(nred);
  for (size_t i = 0; i < nred; ++i) read_fields(reds[i], p.reductions[i], reduction_fields(), p);

  Reader lam = r.at("lambda");
  const size_t nl = lam.size(256);
  for (size_t i = 0; i < nl; ++i) {
    Reader l = lam[i];
    LambdaPoint x;
    x.bytes = uint64_t(l.at("bytes").integer(0, int64_t(1) << 40));
    std::string sends = l.at("sends").str();
    if (sends != "blocking" && sends != "nonblocking")
      throw InputError(cat("profile: ", l.path(), ".sends '", sends, "' is not blocking or nonblocking"));
    x.nonblocking = sends == "nonblocking";
    Reader k = l.at("k"), e1 = l.at("experiment1"), e2 = l.at("experiment2");
    const size_t nk = k.size(1024);
    if (e1.size(1024) != nk || e2.size(1024) != nk)
      throw InputError(cat("profile: ", l.path(), ": k and the experiments' times differ in length"));
    for (size_t q = 0; q < nk; ++q) {
      x.ks.push_back(int(k[q].integer(1, int64_t(kMaxProfileRanks))));
      x.exp1.push_back(e1[q].measure(kMaxSeconds));
      x.exp2.push_back(e2[q].measure(kMaxSeconds));
    }
    x.fit1 = read_fit(l.at("fit1"));
    x.fit2 = read_fit(l.at("fit2"));
    p.lambda.push_back(std::move(x));
  }
  p.receives_use_cpu = r.at("model").at("receives_use_cpu").boolean();
}

// "tuned": measured decisions, per job layout.
void read_tuned(const Reader& r, Profile& p, size_t n) {
  if (r.has("tuned")) {  // absent until 'hetcoll tune' ran
    Reader tl = r.at("tuned");
    const size_t nt = tl.size(kMaxTunedLayouts);
    for (size_t i = 0; i < nt; ++i) {
      Reader t = tl[i];
      TunedLayout x;
      Reader hs = t.at("hosts");
      const size_t nr = hs.size(kMaxProfileRanks);
      if (nr == 0) throw InputError(cat("profile: ", hs.path(), " is empty"));
      for (size_t k = 0; k < nr; ++k) x.hosts.push_back(int(hs[k].integer(0, int64_t(n) - 1)));
      x.created = t.at("created").str();
      x.repeats = int(t.at("repeats").integer(0, 1 << 20));
      Reader es = t.at("entries");
      const size_t ne = es.size(kMaxTunedEntries);
      for (size_t k = 0; k < ne; ++k) {
        Reader e = es[k];
        TunedEntry y;
        read_fields(e, y, tuned_entry_fields(), p);
        if (y.class_hi <= y.class_lo)
          throw InputError(cat("profile: ", e.path(), ": size classes [", y.class_lo, ", ", y.class_hi, ") are empty"));
        if (std::find(std::begin(kTunedTimings), std::end(kTunedTimings), y.timing) == std::end(kTunedTimings)) {
          std::string known;
          for (const char* k : kTunedTimings) known += cat(known.empty() ? "" : ", ", "\"", k, "\"");
          throw InputError(cat("profile: ", e.path(), ".timing: '", y.timing, "' is none of ", known));
        }
        Reader ts = e.at("times");
        const size_t nx = ts.size(16);
        bool winner_timed = false;
        for (size_t q = 0; q < nx; ++q) {
          TunedTime z;
          z.algorithm = ts[q].at("algorithm").str(256);
          z.time = {ts[q].at("min").num(0, kMaxSeconds), ts[q].at("median").num(0, kMaxSeconds)};
          z.predicted = ts[q].at("predicted").num(0, kMaxSeconds);
          winner_timed |= z.algorithm == y.winner;
          y.times.push_back(std::move(z));
        }
        if (!winner_timed) throw InputError(cat("profile: ", e.path(), ": the winner '", y.winner, "' was not timed"));
        for (const TunedEntry& other : x.entries)
          if (other.op == y.op && other.class_lo < y.class_hi && y.class_lo < other.class_hi)
            throw InputError(cat("profile: ", e.path(), ": size classes overlap another ", y.op, " entry"));
        x.entries.push_back(std::move(y));
      }
      p.tuned.push_back(std::move(x));
    }
  }
}

}  // namespace

Profile parse_profile(const std::string& text, bool with_pairs) {
  const json::Document doc = parse_profile_json(text, with_pairs);
  Reader r(doc.root(), "profile");
  Profile p;
  read_measured(r, p);
  const size_t n = read_hosts(r, p);
  read_structure(r, p, n);
  read_network(r, p, n);
  if (with_pairs) read_pairs(r, p, n);
  read_classes(r, p, n);
  read_rates(r, p);
  read_tuned(r, p, n);
  return p;
}

Profile load_profile(const std::string& path, bool with_pairs) {
  const std::string text = read_model_file(path);  // a regular file, at most 64 MiB
  try {
    return parse_profile(text, with_pairs);
  } catch (const InputError& e) {
    throw InputError(cat(path, ": ", e.what()));
  }
}

}  // namespace hetcoll
