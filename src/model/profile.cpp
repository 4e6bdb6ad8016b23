#include "model/profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "model/machine_model.hpp"
#include "util/error.hpp"
#include "util/json_document.hpp"

namespace hetcoll {

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

// Typed access with the path of the field in every message. The path is
// built only for a message: a reader knows its parent (alive while it is:
// readers are locals and temporaries of the reading functions) and its key
// or index — a 10 000-host profile reads a million fields.
struct Reader {
  json::Node j;
  std::string name;                // a root's path
  const Reader* parent = nullptr;  // else: the parent's, then
  const char* key = nullptr;       // ".key", or
  size_t index = 0;                // "[index]"

  Reader(json::Node v, std::string root) : j(v), name(std::move(root)) {}
  Reader(json::Node v, const Reader* up, const char* k, size_t i) : j(v), parent(up), key(k), index(i) {}

  std::string path() const {
    if (!parent) return name;
    return key ? cat(parent->path(), ".", key) : cat(parent->path(), "[", index, "]");
  }
  Reader at(const char* k) const {
    if (!j.is_object()) throw InputError(cat("profile: ", path(), " is not an object"));
    const json::Node v = j.find(k);
    if (!v.found()) throw InputError(cat("profile: ", path(), " has no \"", k, "\""));
    return Reader(v, this, k, 0);
  }
  bool has(const char* key) const { return j.is_object() && j.find(key).found(); }
  Reader operator[](size_t i) const { return Reader(j[i], this, nullptr, i); }
  size_t size(size_t limit) const {
    if (!j.is_array()) throw InputError(cat("profile: ", path(), " is not an array"));
    if (j.size() > limit) throw InputError(cat("profile: ", path(), " has ", j.size(), " entries (at most ", limit, ")"));
    return j.size();
  }
  double num(double lo = 0, double hi = 1e300) const {
    if (!j.is_number()) throw InputError(cat("profile: ", path(), " is not a number"));
    double v = j.number();
    if (!std::isfinite(v) || v < lo || v > hi)
      throw InputError(cat("profile: ", path(), " = ", v, " is outside [", lo, ", ", hi, "]"));
    return v;
  }
  int64_t integer(int64_t lo, int64_t hi) const {
    if (!j.is_whole()) throw InputError(cat("profile: ", path(), " is not a whole number"));
    int64_t v = j.is_unsigned() ? int64_t(std::min<uint64_t>(j.unsigned_value(), uint64_t(INT64_MAX))) : j.integer();
    if (v < lo || v > hi) throw InputError(cat("profile: ", path(), " = ", v, " is outside [", lo, ", ", hi, "]"));
    return v;
  }
  std::string str(size_t max_len = 1024) const {
    if (!j.is_string()) throw InputError(cat("profile: ", path(), " is not a string"));
    const std::string_view s = j.string();
    if (s.size() > max_len) throw InputError(cat("profile: ", path(), " is longer than ", max_len, " characters"));
    return std::string(s);
  }
  bool boolean() const {
    if (!j.is_boolean()) throw InputError(cat("profile: ", path(), " is not true or false"));
    return j.boolean();
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

// The profile's fields, described once: each with its key, where it lives,
// its kind and the range a reader accepts (a bound that depends on what was
// read before — the hosts, the subnets — as a function of the profile).
// write_fields and read_fields go through the same tables, so a field is
// added in one line (docs/architecture.md: a profile field).
template <class T>
struct Field {
  const char* key;
  double T::*real = nullptr;
  int T::*whole = nullptr;
  uint64_t T::*big = nullptr;
  std::string T::*text = nullptr;
  bool T::*flag = nullptr;
  Measure T::*measure = nullptr;
  double lo = 0, hi = 0;                          // numbers: the range; text: the longest
  double (*hi_of)(const Profile&) = nullptr;      // the range's top, from what was read before
  bool optional = false;                          // absent in profiles older than it: left as it is
};
template <class T>
Field<T> real(const char* key, double T::*m, double lo, double hi, bool optional = false) {
  Field<T> f{key};
  f.real = m, f.lo = lo, f.hi = hi, f.optional = optional;
  return f;
}
template <class T>
Field<T> whole(const char* key, int T::*m, double lo, double hi, double (*hi_of)(const Profile&) = nullptr) {
  Field<T> f{key};
  f.whole = m, f.lo = lo, f.hi = hi, f.hi_of = hi_of;
  return f;
}
template <class T>
Field<T> big(const char* key, uint64_t T::*m, double lo, double hi) {
  Field<T> f{key};
  f.big = m, f.lo = lo, f.hi = hi;
  return f;
}
template <class T>
Field<T> text(const char* key, std::string T::*m, size_t longest, bool optional = false) {
  Field<T> f{key};
  f.text = m, f.hi = double(longest), f.optional = optional;
  return f;
}
template <class T>
Field<T> flag(const char* key, bool T::*m) {
  Field<T> f{key};
  f.flag = m;
  return f;
}
template <class T>
Field<T> measure(const char* key, Measure T::*m, double hi) {
  Field<T> f{key};
  f.measure = m, f.hi = hi;
  return f;
}

template <class T>
void write_fields(ojson& o, const T& x, const std::vector<Field<T>>& fields) {
  for (const Field<T>& f : fields) {
    if (f.real) o[f.key] = x.*f.real;
    else if (f.whole) o[f.key] = x.*f.whole;
    else if (f.big) o[f.key] = x.*f.big;
    else if (f.text) o[f.key] = x.*f.text;
    else if (f.flag) o[f.key] = x.*f.flag;
    else o[f.key] = measure_json(x.*f.measure);
  }
}

template <class T>
void read_fields(const Reader& r, T& x, const std::vector<Field<T>>& fields, const Profile& p) {
  for (const Field<T>& f : fields) {
    if (f.optional && !r.has(f.key)) continue;
    const Reader v = r.at(f.key);
    const double hi = f.hi_of ? f.hi_of(p) : f.hi;
    if (f.real) x.*f.real = v.num(f.lo, hi);
    else if (f.whole) x.*f.whole = int(v.integer(int64_t(f.lo), int64_t(hi)));
    else if (f.big) x.*f.big = uint64_t(v.integer(int64_t(f.lo), int64_t(hi)));
    else if (f.text) x.*f.text = v.str(size_t(hi));
    else if (f.flag) x.*f.flag = v.boolean();
    else x.*f.measure = v.measure(hi);
  }
}

// Bounds from what was read before.
double last_host(const Profile& p) { return double(p.hosts.size()) - 1; }
double host_count(const Profile& p) { return double(p.hosts.size()); }
double last_subnet(const Profile& p) { return double(p.subnet_count) - 1; }

const std::vector<Field<Profile>>& measured_fields() {  // "measured", before its "phases"
  static const std::vector<Field<Profile>> f = {
      text("created", &Profile::created, 1024),       text("tool", &Profile::tool, 1024),
      text("mpi", &Profile::mpi, 4096),               text("mode", &Profile::mode, 1024),
      whole("ranks", &Profile::ranks, 1, double(kMaxProfileRanks)),
      whole("repeats", &Profile::repeats, 0, 1 << 20),
      real("budget_s", &Profile::budget, 0, 1e9),     real("seconds", &Profile::seconds, 0, 1e9),
      flag("budget_exhausted", &Profile::budget_exhausted)};
  return f;
}
const std::vector<Field<Profile>>& message_fields() {  // "measured", after its "phases"
  static const std::vector<Field<Profile>> f = {big("small_bytes", &Profile::small_bytes, 0, double(int64_t(1) << 40)),
                                                big("large_bytes", &Profile::large_bytes, 1, double(int64_t(1) << 40))};
  return f;
}
const std::vector<Field<HostProfile>>& host_fields() {  // after "name" and "ranks"
  static const std::vector<Field<HostProfile>> f = {
      whole("subnet", &HostProfile::subnet, 0, 0, last_host),
      measure("Sc", &HostProfile::Sc, kMaxSeconds),   real("Sm", &HostProfile::Sm, 0, kMaxPerByte),
      measure("Rc", &HostProfile::Rc, kMaxSeconds),   real("Rm", &HostProfile::Rm, 0, kMaxPerByte),
      real("gamma", &HostProfile::gamma, 0, kMaxPerByte), real("copy", &HostProfile::copy, 0, kMaxPerByte),
      // Absent in profiles written before the probe measured them: not measured.
      real("nic_up", &HostProfile::nic_up, 0, kMaxBandwidth, true),
      real("nic_down", &HostProfile::nic_down, 0, kMaxBandwidth, true)};
  return f;
}
const std::vector<Field<Profile>>& subnet_fields() {
  static const std::vector<Field<Profile>> f = {real("threshold", &Profile::subnet_threshold, 0, 10),
                                                whole("count", &Profile::subnet_count, 1, 0, host_count),
                                                real("gap", &Profile::subnet_gap, 0, 1e12)};
  return f;
}
const std::vector<Field<Profile::Backplane>>& backplane_fields() {
  using B = Profile::Backplane;
  static const std::vector<Field<B>> f = {whole("flows", &B::flows, 1, 0, host_count),
                                          real("aggregate", &B::aggregate, 0, kMaxBandwidth),
                                          real("expected", &B::expected, 0, kMaxBandwidth),
                                          real("bandwidth", &B::bandwidth, 0, kMaxBandwidth)};
  return f;
}
const std::vector<Field<Profile::Sharing>>& sharing_fields() {
  using X = Profile::Sharing;
  static const std::vector<Field<X>> f = {whole("measured", &X::measured, 0, 1),
                                          whole("receiver", &X::receiver, -1, 0, last_host),
                                          whole("near", &X::near, -1, 0, last_host),
                                          whole("far", &X::far, -1, 0, last_host),
                                          real("near_latency", &X::near_latency, 0, kMaxSeconds),
                                          real("far_latency", &X::far_latency, 0, kMaxSeconds),
                                          real("near_alone", &X::near_alone, 0, kMaxBandwidth),
                                          real("far_alone", &X::far_alone, 0, kMaxBandwidth),
                                          real("far_shared", &X::far_shared, 0, kMaxBandwidth)};
  return f;
}
const std::vector<Field<PairClass>>& class_fields() {
  static const std::vector<Field<PairClass>> f = {
      text("name", &PairClass::name, 256),
      whole("a", &PairClass::a, -1, 0, last_subnet),
      whole("b", &PairClass::b, -1, 0, last_subnet),
      whole("pairs", &PairClass::pairs, 0, double(int64_t(kMaxProfileRanks) * int64_t(kMaxProfileRanks))),
      real("latency", &PairClass::latency, 0, kMaxSeconds),
      real("bandwidth", &PairClass::bandwidth, 1e-300, kMaxBandwidth),
      real("bandwidth_alone", &PairClass::bandwidth_alone, 0, kMaxBandwidth),
      real("slowdown", &PairClass::slowdown, 0, 1e9),
      // Absent in profiles written before the probe measured them: not measured.
      real("bandwidth_both_ways", &PairClass::bandwidth_both_ways, 0, kMaxBandwidth, true),
      real("bandwidth_same_pair", &PairClass::bandwidth_same_pair, 0, kMaxBandwidth, true),
      real("alpha", &PairClass::alpha, 0, kMaxSeconds),
      real("beta", &PairClass::beta, 0, kMaxPerByte),
      real("Xc", &PairClass::Xc, 0, kMaxSeconds),
      real("Xm", &PairClass::Xm, 0, kMaxPerByte)};
  return f;
}
const std::vector<Field<ReduceRate>>& reduction_fields() {
  static const std::vector<Field<ReduceRate>> f = {text("op", &ReduceRate::op, 32), text("type", &ReduceRate::type, 32),
                                                   measure("gamma", &ReduceRate::gamma, kMaxPerByte)};
  return f;
}
const std::vector<Field<TunedEntry>>& tuned_entry_fields() {  // before "times"
  static const std::vector<Field<TunedEntry>> f = {
      text("op", &TunedEntry::op, 64),
      big("bytes", &TunedEntry::bytes, 0, double(int64_t(1) << 62)),
      whole("class_lo", &TunedEntry::class_lo, 0, 1 << 10),
      whole("class_hi", &TunedEntry::class_hi, 0, 1 << 10),
      text("winner", &TunedEntry::winner, 256),
      // Absent in profiles tuned before it was recorded: Fig. 2.
      text("timing", &TunedEntry::timing, 64, true)};
  return f;
}

const std::vector<Field<LinkProfile>>& link_fields() {
  static const std::vector<Field<LinkProfile>> f = {real("bandwidth", &LinkProfile::bandwidth, 0, kMaxBandwidth),
                                                    real("latency", &LinkProfile::latency, 0, kMaxSeconds),
                                                    text("how", &LinkProfile::how, 512, true)};
  return f;
}

ojson link_json(const LinkProfile& l) {
  ojson o;
  write_fields(o, l, link_fields());
  if (l.how.empty()) o.erase("how");
  return o;
}

// "network": the tree, node by node.
ojson network_json(const Profile& p) {
  ojson nodes = ojson::array();
  for (const NodeProfile& n : p.network) {
    ojson x;
    x["name"] = n.name;
    x["parent"] = n.parent;
    if (n.host >= 0) x["host"] = n.host;
    if (n.parent >= 0) {
      if (n.shared) {
        x["both"] = link_json(n.up);
      } else {
        x["up"] = link_json(n.up);
        x["down"] = link_json(n.down);
      }
    }
    if (n.fabric_as >= 0) {
      ojson as;
      as["as"] = n.fabric_as;
      x["fabric"] = as;
    } else if (n.fabric.bandwidth > 0) {
      x["fabric"] = link_json(n.fabric);
    }
    nodes.push_back(std::move(x));
  }
  return nodes;
}

}  // namespace

std::string profile_to_json(const Profile& p) {
  ojson o;
  o["format"] = kProfileFormat;
  o["version"] = p.version;
  ojson m;
  write_fields(m, p, measured_fields());
  ojson phases = ojson::object();
  for (const auto& [name, s] : p.phases) phases[name] = s;
  m["phases"] = phases;
  write_fields(m, p, message_fields());
  o["measured"] = m;
  ojson hosts = ojson::array();
  for (const HostProfile& h : p.hosts) {
    ojson x;
    x["name"] = h.name;
    x["ranks"] = h.ranks;
    write_fields(x, h, host_fields());
    hosts.push_back(std::move(x));
  }
  o["hosts"] = std::move(hosts);
  if (!p.network.empty()) o["network"] = network_json(p);
  if (!p.small.empty()) {
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
  }
  ojson sub;
  write_fields(sub, p, subnet_fields());
  o["subnets"] = sub;
  ojson ring;
  ring["hosts"] = p.ring;
  ring["crossings"] = p.ring_crossings;
  o["ring"] = ring;
  if (p.backplane.flows > 0) {
    ojson bp;
    write_fields(bp, p.backplane, backplane_fields());
    o["backplane"] = bp;
  }
  if (p.sharing.measured) {
    ojson sh;
    write_fields(sh, p.sharing, sharing_fields());
    o["sharing"] = sh;
  }
  ojson classes = ojson::array();
  for (const PairClass& c : p.classes) {
    ojson x;
    write_fields(x, c, class_fields());
    classes.push_back(std::move(x));
  }
  o["classes"] = std::move(classes);
  ojson reds = ojson::array();
  for (const ReduceRate& r : p.reductions) {
    ojson x;
    write_fields(x, r, reduction_fields());
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
      write_fields(y, e, tuned_entry_fields());
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
        if (y.timing != "Fig. 2" && y.timing != "synchronized start")
          throw InputError(cat("profile: ", e.path(), ".timing: '", y.timing,
                               "' is not \"Fig. 2\" or \"synchronized start\""));
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
