#include "model/profile.hpp"

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "model/machine_model.hpp"
#include "util/error.hpp"

namespace hetcoll {

using njson = nlohmann::json;
using ojson = nlohmann::ordered_json;

size_t Profile::host_index(const std::string& name) const {
  for (size_t i = 0; i < hosts.size(); ++i)
    if (hosts[i].name == name) return i;
  return hosts.size();
}

const PairClass* Profile::shared_memory() const {
  for (const PairClass& c : classes)
    if (c.a < 0) return &c;
  return nullptr;
}

const PairClass* Profile::between(int a, int b) const {
  if (a > b) std::swap(a, b);
  for (const PairClass& c : classes)
    if (c.a == a && c.b == b) return &c;
  return nullptr;
}

bool looks_like_profile(const std::string& text) {
  size_t k = text.find("\"format\"");
  return k != std::string::npos && k < 4096 && text.find(kProfileFormat, k) != std::string::npos;
}

namespace {

// Nesting deeper than a profile has is refused before parsing.
void check_depth(const std::string& text) {
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxProfileDepth)
        throw InputError(cat("profile: JSON nested deeper than ", kMaxProfileDepth, " levels: not a profile"));
    } else if (c == ']' || c == '}') {
      if (depth) --depth;
    }
  }
}

// Typed access with the path of the field in every message.
struct Reader {
  const njson& j;
  std::string path;

  Reader at(const char* key) const {
    if (!j.is_object()) throw InputError(cat("profile: ", path, " is not an object"));
    auto it = j.find(key);
    if (it == j.end()) throw InputError(cat("profile: ", path, " has no \"", key, "\""));
    return Reader{*it, path + "." + key};
  }
  bool has(const char* key) const { return j.is_object() && j.contains(key); }
  Reader operator[](size_t i) const { return Reader{j[i], cat(path, "[", i, "]")}; }
  size_t size(size_t limit) const {
    if (!j.is_array()) throw InputError(cat("profile: ", path, " is not an array"));
    if (j.size() > limit) throw InputError(cat("profile: ", path, " has ", j.size(), " entries (at most ", limit, ")"));
    return j.size();
  }
  double num(double lo = 0, double hi = 1e300) const {
    if (!j.is_number()) throw InputError(cat("profile: ", path, " is not a number"));
    double v = j.get<double>();
    if (!std::isfinite(v) || v < lo || v > hi)
      throw InputError(cat("profile: ", path, " = ", v, " is outside [", lo, ", ", hi, "]"));
    return v;
  }
  int64_t integer(int64_t lo, int64_t hi) const {
    if (!j.is_number_integer()) throw InputError(cat("profile: ", path, " is not a whole number"));
    int64_t v = j.is_number_unsigned() ? int64_t(std::min<uint64_t>(j.get<uint64_t>(), uint64_t(INT64_MAX)))
                                       : j.get<int64_t>();
    if (v < lo || v > hi) throw InputError(cat("profile: ", path, " = ", v, " is outside [", lo, ", ", hi, "]"));
    return v;
  }
  std::string str(size_t max_len = 1024) const {
    if (!j.is_string()) throw InputError(cat("profile: ", path, " is not a string"));
    const std::string& s = j.get_ref<const std::string&>();
    if (s.size() > max_len) throw InputError(cat("profile: ", path, " is longer than ", max_len, " characters"));
    return s;
  }
  bool boolean() const {
    if (!j.is_boolean()) throw InputError(cat("profile: ", path, " is not true or false"));
    return j.get<bool>();
  }
  Measure measure(double hi = 1e6) const { return {at("min").num(0, hi), at("median").num(0, hi)}; }
};

// Times are at most a day, rates at most 1 s per byte, bandwidths positive.
constexpr double kMaxSeconds = 86400, kMaxPerByte = 1, kMaxBandwidth = 1e15;

ojson measure_json(const Measure& m) {
  ojson o;
  o["min"] = m.min;
  o["median"] = m.median;
  return o;
}

// Six significant digits: what the measurements carry, and a third of the file.
double short6(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return std::strtod(buf, nullptr);
}

ojson fit_json(const PostalFit& f) {
  ojson o;
  o["t0"] = f.t0;
  o["lambda"] = f.lambda;
  o["r2"] = f.r2;
  return o;
}

PostalFit read_fit(const Reader& r) {
  PostalFit f;
  f.t0 = r.at("t0").num(-kMaxSeconds, kMaxSeconds);
  f.lambda = r.at("lambda").num(-1e9, 1e9);
  f.r2 = r.at("r2").num(-1e9, 1e9);
  return f;
}

}  // namespace

std::string profile_to_json(const Profile& p) {
  ojson o;
  o["format"] = kProfileFormat;
  o["version"] = p.version;
  ojson m;
  m["created"] = p.created;
  m["tool"] = p.tool;
  m["mpi"] = p.mpi;
  m["mode"] = p.mode;
  m["ranks"] = p.ranks;
  m["repeats"] = p.repeats;
  m["budget_s"] = p.budget;
  m["seconds"] = p.seconds;
  m["budget_exhausted"] = p.budget_exhausted;
  ojson phases = ojson::object();
  for (const auto& [name, s] : p.phases) phases[name] = s;
  m["phases"] = phases;
  m["small_bytes"] = p.small_bytes;
  m["large_bytes"] = p.large_bytes;
  o["measured"] = m;
  ojson hosts = ojson::array();
  for (const HostProfile& h : p.hosts) {
    ojson x;
    x["name"] = h.name;
    x["ranks"] = h.ranks;
    x["subnet"] = h.subnet;
    x["Sc"] = measure_json(h.Sc);
    x["Sm"] = h.Sm;
    x["Rc"] = measure_json(h.Rc);
    x["Rm"] = h.Rm;
    x["gamma"] = h.gamma;
    x["copy"] = h.copy;
    hosts.push_back(std::move(x));
  }
  o["hosts"] = std::move(hosts);
  ojson pairs;
  auto flat = [&](const std::vector<Measure>& v, bool use_min) {
    ojson a = ojson::array();
    for (const Measure& x : v) a.push_back(short6(use_min ? x.min : x.median));
    return a;
  };
  pairs["small_min"] = flat(p.small, true);
  pairs["small_median"] = flat(p.small, false);
  pairs["large_min"] = flat(p.large, true);
  pairs["large_median"] = flat(p.large, false);
  o["pairs"] = std::move(pairs);
  ojson sub;
  sub["threshold"] = p.subnet_threshold;
  sub["count"] = p.subnet_count;
  sub["gap"] = p.subnet_gap;
  o["subnets"] = sub;
  ojson ring;
  ring["hosts"] = p.ring;
  ring["crossings"] = p.ring_crossings;
  o["ring"] = ring;
  if (p.backplane.flows > 0) {
    ojson bp;
    bp["flows"] = p.backplane.flows;
    bp["aggregate"] = p.backplane.aggregate;
    bp["expected"] = p.backplane.expected;
    bp["bandwidth"] = p.backplane.bandwidth;
    o["backplane"] = bp;
  }
  ojson classes = ojson::array();
  for (const PairClass& c : p.classes) {
    ojson x;
    x["name"] = c.name;
    x["a"] = c.a;
    x["b"] = c.b;
    x["pairs"] = c.pairs;
    x["latency"] = c.latency;
    x["bandwidth"] = c.bandwidth;
    x["bandwidth_alone"] = c.bandwidth_alone;
    x["slowdown"] = c.slowdown;
    x["bandwidth_both_ways"] = c.bandwidth_both_ways;
    x["bandwidth_same_pair"] = c.bandwidth_same_pair;
    x["alpha"] = c.alpha;
    x["beta"] = c.beta;
    x["Xc"] = c.Xc;
    x["Xm"] = c.Xm;
    classes.push_back(std::move(x));
  }
  o["classes"] = std::move(classes);
  ojson reds = ojson::array();
  for (const ReduceRate& r : p.reductions) {
    ojson x;
    x["op"] = r.op;
    x["type"] = r.type;
    x["gamma"] = measure_json(r.gamma);
    reds.push_back(std::move(x));
  }
  o["reductions"] = std::move(reds);
  ojson lam = ojson::array();
  for (const LambdaPoint& l : p.lambda) {
    ojson x;
    x["bytes"] = l.bytes;
    x["sends"] = l.nonblocking ? "nonblocking" : "blocking";
    x["k"] = l.ks;
    ojson e1 = ojson::array(), e2 = ojson::array();
    for (const Measure& t : l.exp1) e1.push_back(measure_json(t));
    for (const Measure& t : l.exp2) e2.push_back(measure_json(t));
    x["experiment1"] = std::move(e1);
    x["experiment2"] = std::move(e2);
    x["fit1"] = fit_json(l.fit1);
    x["fit2"] = fit_json(l.fit2);
    lam.push_back(std::move(x));
  }
  o["lambda"] = std::move(lam);
  ojson model;
  model["receives_use_cpu"] = p.receives_use_cpu;
  o["model"] = model;
  ojson tuned = ojson::array();
  for (const TunedLayout& t : p.tuned) {
    ojson x;
    x["hosts"] = t.hosts;
    x["created"] = t.created;
    x["repeats"] = t.repeats;
    ojson entries = ojson::array();
    for (const TunedEntry& e : t.entries) {
      ojson y;
      y["op"] = e.op;
      y["bytes"] = e.bytes;
      y["class_lo"] = e.class_lo;
      y["class_hi"] = e.class_hi;
      y["winner"] = e.winner;
      y["timing"] = e.timing;
      ojson times = ojson::array();
      for (const TunedTime& tt : e.times) {
        ojson z;
        z["algorithm"] = tt.algorithm;
        z["min"] = tt.time.min;
        z["median"] = tt.time.median;
        z["predicted"] = tt.predicted;
        times.push_back(std::move(z));
      }
      y["times"] = std::move(times);
      entries.push_back(std::move(y));
    }
    x["entries"] = std::move(entries);
    tuned.push_back(std::move(x));
  }
  o["tuned"] = std::move(tuned);
  return o.dump(1) + "\n";
}

namespace {

// The text as JSON, bounded in size and depth (without pairs: the matrices skipped).
njson parse_profile_json(const std::string& text, bool with_pairs) {
  if (text.size() > kMaxProfileFileBytes)
    throw InputError(cat("profile: larger than ", kMaxProfileFileBytes >> 20, " MiB: not a profile"));
  check_depth(text);
  njson doc;
  try {
    // Without pairs: the matrices are parsed but not stored.
    njson::parser_callback_t skip = [&](int depth, njson::parse_event_t ev, njson& parsed) {
      return !(with_pairs == false && depth == 1 && ev == njson::parse_event_t::key && parsed == "pairs");
    };
    doc = njson::parse(text, with_pairs ? njson::parser_callback_t(nullptr) : skip, true, false);
  } catch (const njson::exception& e) {
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0) what = what.substr(what.find(']') + 2);
    throw InputError(cat("profile: not valid JSON (", what, ")"));
  }
  return doc;
}

// "format", "version" and "measured": how and when the profile was measured.
void read_measured(const Reader& r, Profile& p) {
  if (!r.j.is_object()) throw InputError("profile: the top level is not an object");
  if (!r.has("format") || r.at("format").str() != kProfileFormat)
    throw InputError(cat("profile: \"format\" is not \"", kProfileFormat, "\": not a hetcoll profile"));
  const int64_t version = r.at("version").integer(INT64_MIN, INT64_MAX);
  if (version != kProfileVersion)
    throw InputError(cat("profile: schema version ", version, " is not one this hetcoll reads (", kProfileVersion,
                         "); probe again with this version"));
  Reader m = r.at("measured");
  p.created = m.at("created").str();
  p.tool = m.at("tool").str();
  p.mpi = m.at("mpi").str(4096);
  p.mode = m.at("mode").str();
  if (p.mode != "concurrent" && p.mode != "sequential")
    throw InputError(cat("profile: measured.mode '", p.mode, "' is not concurrent or sequential"));
  p.ranks = int(m.at("ranks").integer(1, int64_t(kMaxProfileRanks)));
  p.repeats = int(m.at("repeats").integer(0, 1 << 20));
  p.budget = m.at("budget_s").num(0, 1e9);
  p.seconds = m.at("seconds").num(0, 1e9);
  p.budget_exhausted = m.at("budget_exhausted").boolean();
  if (m.has("phases")) {
    Reader ph = m.at("phases");
    if (!ph.j.is_object() || ph.j.size() > 64) throw InputError("profile: measured.phases is not an object of at most 64 phases");
    for (auto it = ph.j.begin(); it != ph.j.end(); ++it) {
      if (it.key().size() > 64) throw InputError("profile: measured.phases has a name longer than 64 characters");
      p.phases.emplace_back(it.key(), Reader{it.value(), "profile.measured.phases." + it.key()}.num(0, 1e9));
    }
  }
  p.small_bytes = uint64_t(m.at("small_bytes").integer(0, int64_t(1) << 40));
  p.large_bytes = uint64_t(m.at("large_bytes").integer(1, int64_t(1) << 40));
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
    if (x.name.empty()) throw InputError(cat("profile: ", h.path, ".name is empty"));
    if (!names.insert(x.name).second) throw InputError(cat("profile: host '", x.name, "' appears twice"));
    Reader rk = h.at("ranks");
    const size_t nr = rk.size(kMaxProfileRanks);
    if (nr == 0) throw InputError(cat("profile: ", rk.path, " is empty"));
    for (size_t k = 0; k < nr; ++k) {
      int v = int(rk[k].integer(0, p.ranks - 1));
      if (rank_seen[size_t(v)]) throw InputError(cat("profile: rank ", v, " is on two hosts"));
      rank_seen[size_t(v)] = true;
      x.ranks.push_back(v);
    }
    x.subnet = int(h.at("subnet").integer(0, int64_t(n) - 1));
    x.Sc = h.at("Sc").measure(kMaxSeconds);
    x.Rc = h.at("Rc").measure(kMaxSeconds);
    x.Sm = h.at("Sm").num(0, kMaxPerByte);
    x.Rm = h.at("Rm").num(0, kMaxPerByte);
    x.gamma = h.at("gamma").num(0, kMaxPerByte);
    x.copy = h.at("copy").num(0, kMaxPerByte);
  }
  for (size_t k = 0; k < rank_seen.size(); ++k)
    if (!rank_seen[k]) throw InputError(cat("profile: rank ", k, " of measured.ranks is on no host"));
  return n;
}

// "subnets", "ring" and "backplane".
void read_structure(const Reader& r, Profile& p, size_t n) {
  Reader sub = r.at("subnets");
  p.subnet_threshold = sub.at("threshold").num(0, 10);
  p.subnet_count = int(sub.at("count").integer(1, int64_t(n)));
  p.subnet_gap = sub.at("gap").num(0, 1e12);
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
    Reader bp = r.at("backplane");
    p.backplane.flows = int(bp.at("flows").integer(1, int64_t(n)));
    p.backplane.aggregate = bp.at("aggregate").num(0, kMaxBandwidth);
    p.backplane.expected = bp.at("expected").num(0, kMaxBandwidth);
    p.backplane.bandwidth = bp.at("bandwidth").num(0, kMaxBandwidth);
  }
}

// "pairs": the per-pair matrices.
void read_pairs(const Reader& r, Profile& p, size_t n) {
  Reader pairs = r.at("pairs");
  auto matrix = [&](const char* key) {
    Reader a = pairs.at(key);
    if (a.size(n * n) != n * n)
      throw InputError(cat("profile: ", a.path, " has ", a.j.size(), " entries, ", n, " hosts need ", n * n));
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

// "classes": per class of host pairs, and every pair of hosts has one.
void read_classes(const Reader& r, Profile& p, size_t n) {
  Reader classes = r.at("classes");
  const size_t nc = classes.size(size_t(p.subnet_count) * size_t(p.subnet_count + 1) / 2 + 1);
  for (size_t i = 0; i < nc; ++i) {
    Reader c = classes[i];
    PairClass x;
    x.name = c.at("name").str(256);
    x.a = int(c.at("a").integer(-1, p.subnet_count - 1));
    x.b = int(c.at("b").integer(-1, p.subnet_count - 1));
    if ((x.a < 0) != (x.b < 0) || x.a > x.b)
      throw InputError(cat("profile: ", c.path, ": subnets (", x.a, ", ", x.b, ") are not a class"));
    for (const PairClass& y : p.classes)
      if (y.a == x.a && y.b == x.b) throw InputError(cat("profile: class '", x.name, "' appears twice"));
    x.pairs = int(c.at("pairs").integer(0, int64_t(kMaxProfileRanks) * int64_t(kMaxProfileRanks)));
    x.latency = c.at("latency").num(0, kMaxSeconds);
    x.bandwidth = c.at("bandwidth").num(1e-300, kMaxBandwidth);
    x.bandwidth_alone = c.at("bandwidth_alone").num(0, kMaxBandwidth);
    x.slowdown = c.at("slowdown").num(0, 1e9);
    // Absent in profiles written before the probe measured it: not measured.
    if (c.has("bandwidth_both_ways")) x.bandwidth_both_ways = c.at("bandwidth_both_ways").num(0, kMaxBandwidth);
    if (c.has("bandwidth_same_pair")) x.bandwidth_same_pair = c.at("bandwidth_same_pair").num(0, kMaxBandwidth);
    x.alpha = c.at("alpha").num(0, kMaxSeconds);
    x.beta = c.at("beta").num(0, kMaxPerByte);
    x.Xc = c.at("Xc").num(0, kMaxSeconds);
    x.Xm = c.at("Xm").num(0, kMaxPerByte);
    p.classes.push_back(std::move(x));
  }
  // Every pair of hosts needs its class.
  for (int a = 0; a < p.subnet_count; ++a)
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
  for (size_t i = 0; i < nred; ++i)
    p.reductions.push_back({reds[i].at("op").str(32), reds[i].at("type").str(32), reds[i].at("gamma").measure(kMaxPerByte)});

  Reader lam = r.at("lambda");
  const size_t nl = lam.size(256);
  for (size_t i = 0; i < nl; ++i) {
    Reader l = lam[i];
    LambdaPoint x;
    x.bytes = uint64_t(l.at("bytes").integer(0, int64_t(1) << 40));
    std::string sends = l.at("sends").str();
    if (sends != "blocking" && sends != "nonblocking")
      throw InputError(cat("profile: ", l.path, ".sends '", sends, "' is not blocking or nonblocking"));
    x.nonblocking = sends == "nonblocking";
    Reader k = l.at("k"), e1 = l.at("experiment1"), e2 = l.at("experiment2");
    const size_t nk = k.size(1024);
    if (e1.size(1024) != nk || e2.size(1024) != nk)
      throw InputError(cat("profile: ", l.path, ": k and the experiments' times differ in length"));
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
      if (nr == 0) throw InputError(cat("profile: ", hs.path, " is empty"));
      for (size_t k = 0; k < nr; ++k) x.hosts.push_back(int(hs[k].integer(0, int64_t(n) - 1)));
      x.created = t.at("created").str();
      x.repeats = int(t.at("repeats").integer(0, 1 << 20));
      Reader es = t.at("entries");
      const size_t ne = es.size(kMaxTunedEntries);
      for (size_t k = 0; k < ne; ++k) {
        Reader e = es[k];
        TunedEntry y;
        y.op = e.at("op").str(64);
        y.bytes = uint64_t(e.at("bytes").integer(0, int64_t(1) << 62));
        y.class_lo = int(e.at("class_lo").integer(0, 1 << 10));
        y.class_hi = int(e.at("class_hi").integer(0, 1 << 10));
        if (y.class_hi <= y.class_lo)
          throw InputError(cat("profile: ", e.path, ": size classes [", y.class_lo, ", ", y.class_hi, ") are empty"));
        y.winner = e.at("winner").str(256);
        if (e.has("timing")) {  // absent in profiles tuned before it was recorded: Fig. 2
          y.timing = e.at("timing").str(64);
          if (y.timing != "Fig. 2" && y.timing != "synchronized start")
            throw InputError(cat("profile: ", e.path, ".timing: '", y.timing,
                                 "' is not \"Fig. 2\" or \"synchronized start\""));
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
        if (!winner_timed) throw InputError(cat("profile: ", e.path, ": the winner '", y.winner, "' was not timed"));
        for (const TunedEntry& other : x.entries)
          if (other.op == y.op && other.class_lo < y.class_hi && y.class_lo < other.class_hi)
            throw InputError(cat("profile: ", e.path, ": size classes overlap another ", y.op, " entry"));
        x.entries.push_back(std::move(y));
      }
      p.tuned.push_back(std::move(x));
    }
  }
}

}  // namespace

Profile parse_profile(const std::string& text, bool with_pairs) {
  const njson doc = parse_profile_json(text, with_pairs);
  Reader r{doc, "profile"};
  Profile p;
  read_measured(r, p);
  const size_t n = read_hosts(r, p);
  read_structure(r, p, n);
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
