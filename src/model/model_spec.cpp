// parse_model(): "kind:key=value,key=value" → a MachineModel.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "model/cluster_model.hpp"
#include "model/heterogeneous_model.hpp"
#include "model/hockney_model.hpp"
#include "model/loggp_model.hpp"
#include "model/machine_model.hpp"
#include "model/postal_model.hpp"
#include "model/profile_model.hpp"
#include "model/profile.hpp"
#include "model/units.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace hetcoll {

double MachineModel::postal_lambda(uint64_t bytes, int src, int dst) const {
  MessageCost c = message(src, dst < 0 ? other_rank() : dst, bytes);
  if (c.send <= 0) return 1.0;
  double lam = c.total() / c.send;
  return lam < 1.0 ? 1.0 : lam;
}

uint64_t MachineModel::content_digest() const { return fnv1a(to_json().dump()); }

std::string model_spec_help() {
  return "postal:lambda=L[,t0=T]          (L >= 1, or a table 0:1.2;512:1.8;16k:1.05)\n"
         "hockney:alpha=A,beta=B[,gamma=G][,copy=C][,overlap=0][,ports=K]   (durations: 20us, 1ns; or bw=10GB/s for beta;\n"
         "                                overlap=0: receives use the CPU, as on shared memory;\n"
         "                                ports=K: K sends of a rank in flight at once, default 1)\n"
         "loggp:L=..,o=..|os=..,or=..,g=..,G=..[,gamma=..]\n"
         "hetero:nodes=FFSS[,gamma=G]     (Banikazemi's fast/slow nodes, one letter a rank)\n"
         "hetero:file=machine.json        (per-node Sc Sm Rc Rm gamma, per-pair Xc Xm)\n"
         "cluster:subnets=8+4+4[,ranks=R][,layout=block|round][,alpha=..,bw=..][,up_latency=..,up_bw=..]\n"
         "        [,duplex=shared|split][,o=..][,shm_alpha=..,shm_bw=..][,gamma=..][,sharing=A]\n"
         "                                (hosts per subnet, R ranks a host; interfaces bw, uplinks up_bw\n"
         "                                shared by the messages crossing them, in proportion to\n"
         "                                latency^-A: 0 equally (default), 1 as SimGrid's CM02)\n"
         "tree:levels=8x4,bw=B1:B2[,lat=L1:L2][,shared=1:0][,fabric=F0:F1][,ranks=R][,layout=block|round][,o=..]\n"
         "        [,shm_alpha=..,shm_bw=..][,gamma=..][,sharing=A]\n"
         "                                (a tree: fan-outs from the root down, hosts last; per level its edges'\n"
         "                                bandwidth and latency, shared=1 one link both ways; a fabric per level of\n"
         "                                switches, the root's first, 0 none; a message crosses its path)\n"
         "profile:PROFILE.json            (a machine profile written by 'hetcoll probe')\n"
         "file:MODEL.json                 (a model written by to_json / hetcoll, or a profile)";
}

namespace {

using Params = std::map<std::string, std::string>;

Params split_params(const std::string& kind, const std::string& rest) {
  Params p;
  if (rest.empty()) return p;
  std::stringstream ss(rest);
  std::string item;
  while (std::getline(ss, item, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw InputError(cat("model '", kind, "': parameter '", item, "' is not KEY=VALUE"));
    std::string key = item.substr(0, eq);
    if (p.count(key)) throw InputError(cat("model '", kind, "': parameter '", key, "' given twice"));
    p[key] = item.substr(eq + 1);
  }
  return p;
}

void reject_unknown(const std::string& kind, const Params& p, std::initializer_list<const char*> known) {
  for (auto& kv : p) {
    bool ok = false;
    for (auto* k : known) ok |= kv.first == k;
    if (!ok) {
      std::string list;
      for (auto* k : known) list += std::string(list.empty() ? "" : ", ") + k;
      throw InputError(cat("model '", kind, "': unknown parameter '", kv.first, "' (known: ", list, ")"));
    }
  }
}

std::string take(Params& p, const std::string& kind, const char* key) {
  auto it = p.find(key);
  if (it == p.end()) throw InputError(cat("model '", kind, "' needs ", key, "="));
  return it->second;
}

bool has_time_unit(const std::string& s) {
  return s.find_first_of("smunp") != std::string::npos && s.find_first_not_of("0123456789.eE+-") != std::string::npos &&
         s.back() == 's';
}

ModelPtr parse_postal(Params p) {
  reject_unknown("postal", p, {"lambda", "t0"});
  SizeTable lambda = SizeTable::parse(take(p, "postal", "lambda"), parse_number);
  SizeTable t0(1.0);
  bool seconds = false;
  if (p.count("t0")) {
    const std::string& s = p["t0"];
    seconds = has_time_unit(s);
    t0 = SizeTable::parse(s, seconds ? parse_duration : parse_number);
  }
  return std::make_shared<PostalModel>(lambda, t0, seconds);
}

ModelPtr parse_hockney(Params p) {
  reject_unknown("hockney", p, {"alpha", "beta", "bw", "gamma", "copy", "overlap", "ports"});
  double alpha = parse_duration(take(p, "hockney", "alpha"));
  double beta;
  if (p.count("beta") && p.count("bw")) throw InputError("model 'hockney': give beta= or bw=, not both");
  if (p.count("bw")) beta = 1.0 / parse_bandwidth(p["bw"]);
  else beta = parse_duration(take(p, "hockney", "beta"));
  double gamma = p.count("gamma") ? parse_duration(p["gamma"]) : 0.0;
  double copy = p.count("copy") ? parse_duration(p["copy"]) : 0.0;
  bool overlap = true;
  if (p.count("overlap")) {
    const std::string& o = p["overlap"];
    if (o != "0" && o != "1") throw InputError(cat("model 'hockney': overlap must be 0 or 1, got '", o, "'"));
    overlap = o == "1";
  }
  int ports = 1;
  if (p.count("ports")) {
    const std::string& v = p["ports"];
    char* end = nullptr;
    errno = 0;
    long k = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || errno || k < 1 || k > HockneyModel::kMaxPorts)
      throw InputError(cat("model 'hockney': ports must be a whole number from 1 to ", HockneyModel::kMaxPorts,
                           ", got '", v, "'"));
    ports = int(k);
  }
  return std::make_shared<HockneyModel>(alpha, beta, gamma, copy, overlap, ports);
}

ModelPtr parse_loggp(Params p) {
  reject_unknown("loggp", p, {"L", "o", "os", "or", "g", "G", "gamma"});
  double L = parse_duration(take(p, "loggp", "L"));
  double o = p.count("o") ? parse_duration(p["o"]) : 0.0;
  double os = p.count("os") ? parse_duration(p["os"]) : o;
  double orr = p.count("or") ? parse_duration(p["or"]) : o;
  if (!p.count("o") && !(p.count("os") && p.count("or")))
    throw InputError("model 'loggp' needs o= (or both os= and or=)");
  double g = parse_duration(take(p, "loggp", "g"));
  double G = parse_duration(take(p, "loggp", "G"));
  double gamma = p.count("gamma") ? parse_duration(p["gamma"]) : 0.0;
  return std::make_shared<LogGPModel>(L, os, orr, g, G, gamma);
}


// ranks= (per host) and layout= (block or round), as cluster and tree take them.
void read_placement(const char* kind, Params& p, long hosts, ClusterParams& c) {
  if (p.count("ranks")) {
    const std::string& v = p["ranks"];
    char* end = nullptr;
    errno = 0;
    const long r = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || errno || r < 1 || r > 1024 || r * hosts > (1L << 21))
      throw InputError(cat("model '", kind, "': ranks= takes ranks per host, 1 to 1024, got '", v, "'"));
    c.ranks_per_host = int(r);
  }
  if (p.count("layout")) {
    if (p["layout"] != "block" && p["layout"] != "round")
      throw InputError(cat("model '", kind, "': layout must be block or round, got '", p["layout"], "'"));
    c.round = p["layout"] == "round";
  }
}

ModelPtr parse_cluster(Params p, const std::string& spec) {
  reject_unknown("cluster", p, {"subnets", "ranks", "layout", "alpha", "bw", "up_latency", "up_bw", "duplex", "o",
                                "shm_alpha", "shm_bw", "gamma", "sharing"});
  ClusterParams c;
  const std::string subnets = take(p, "cluster", "subnets");
  long hosts = 0;
  for (size_t at = 0; at <= subnets.size();) {
    size_t plus = subnets.find('+', at);
    if (plus == std::string::npos) plus = subnets.size();
    const std::string item = subnets.substr(at, plus - at);
    char* end = nullptr;
    errno = 0;
    const long k = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end || errno || k < 1 || k > 4096)
      throw InputError(cat("model 'cluster': subnets= takes hosts per subnet joined by '+' (1 to 4096 each), got '",
                           subnets, "'"));
    hosts += k;
    c.subnets.push_back(int(k));
    at = plus + 1;
  }
  if (c.subnets.size() > 256 || hosts > 65536) throw InputError("model 'cluster': at most 256 subnets and 65536 hosts");
  read_placement("cluster", p, hosts, c);
  if (p.count("duplex")) {
    if (p["duplex"] != "shared" && p["duplex"] != "split")
      throw InputError(cat("model 'cluster': duplex must be shared or split, got '", p["duplex"], "'"));
    c.split_duplex = p["duplex"] == "split";
  }
  auto dur = [&](const char* k, double& v) {
    if (p.count(k)) v = parse_duration(p[k]);
  };
  auto bw = [&](const char* k, double& v) {
    if (!p.count(k)) return;
    v = parse_bandwidth(p[k]);
    if (!(v > 0)) throw InputError(cat("model 'cluster': ", k, " must be positive"));
  };
  if (p.count("sharing")) {
    const std::string& v = p["sharing"];
    char* end = nullptr;
    const double a = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || !(a >= 0 && a <= Topology::kMaxLatencySharing))
      throw InputError(cat("model 'cluster': sharing= takes the latency exponent, 0 to ", Topology::kMaxLatencySharing,
                           ", got '", v, "'"));
    c.latency_sharing = a;
  }
  dur("o", c.o);
  dur("alpha", c.alpha);
  dur("up_latency", c.up_latency);
  dur("shm_alpha", c.shm_alpha);
  dur("gamma", c.gamma);
  bw("bw", c.bw);
  bw("up_bw", c.up_bw);
  bw("shm_bw", c.shm_bw);
  return std::make_shared<ClusterModel>(c, spec);
}

// "a:b:c" → per level values (one value: every level).
std::vector<double> per_level(const std::string& kind, const char* key, const std::string& v, size_t levels,
                              double (*parse)(const std::string&)) {
  std::vector<double> out;
  for (size_t at = 0; at <= v.size();) {
    size_t colon = v.find(':', at);
    if (colon == std::string::npos) colon = v.size();
    out.push_back(parse(v.substr(at, colon - at)));
    at = colon + 1;
  }
  if (out.size() != 1 && out.size() != levels)
    throw InputError(cat("model '", kind, "': ", key, "= takes one value or one per level (", levels, "), got '", v, "'"));
  return out;
}

// tree:levels=8x4,bw=B1:B2,lat=L1:L2[,shared=1:0][,fabric=F0:F1][,ranks=R][,layout=..][,o=..]
//      [,shm_alpha=..,shm_bw=..][,gamma=..][,sharing=A]
ModelPtr parse_tree(Params p, const std::string& spec) {
  reject_unknown("tree", p, {"levels", "ranks", "layout", "bw", "lat", "shared", "fabric", "o", "shm_alpha", "shm_bw",
                             "gamma", "sharing"});
  ClusterParams c;
  const std::string levels = take(p, "tree", "levels");
  long hosts = 1;
  for (size_t at = 0; at <= levels.size();) {
    size_t x = levels.find('x', at);
    if (x == std::string::npos) x = levels.size();
    const std::string item = levels.substr(at, x - at);
    char* end = nullptr;
    errno = 0;
    const long k = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end || errno || k < 1 || k > 4096)
      throw InputError(cat("model 'tree': levels= takes each level's fan-out from the root down joined by 'x' "
                           "(1 to 4096 each), got '", levels, "'"));
    hosts *= k;
    if (hosts > 65536) throw InputError("model 'tree': at most 65536 hosts");
    c.fanout.push_back(int(k));
    at = x + 1;
  }
  if (c.fanout.size() > size_t(Topology::kMaxDepth))
    throw InputError(cat("model 'tree': at most ", Topology::kMaxDepth, " levels"));
  const size_t L = c.fanout.size();
  auto positive = [](const std::string& v) {
    const double b = parse_bandwidth(v);
    if (!(b > 0)) throw InputError(cat("model 'tree': bandwidth '", v, "' must be positive"));
    return b;
  };
  c.level_bw = per_level("tree", "bw", take(p, "tree", "bw"), L, positive);
  if (p.count("lat")) c.level_latency = per_level("tree", "lat", p["lat"], L, parse_duration);
  if (p.count("fabric"))
    c.level_fabric = per_level("tree", "fabric", p["fabric"], L, [](const std::string& v) {
      return v == "0" ? 0.0 : parse_bandwidth(v);
    });
  if (p.count("shared"))
    for (double x : per_level("tree", "shared", p["shared"], L, parse_number)) {
      if (x != 0 && x != 1) throw InputError(cat("model 'tree': shared= takes 0 or 1 per level, got '", p["shared"], "'"));
      c.level_shared.push_back(char(x));
    }
  read_placement("tree", p, hosts, c);
  if (p.count("sharing")) {
    const std::string& v = p["sharing"];
    char* end = nullptr;
    const double a = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || !(a >= 0 && a <= Topology::kMaxLatencySharing))
      throw InputError(cat("model 'tree': sharing= takes the latency exponent, 0 to ", Topology::kMaxLatencySharing,
                           ", got '", v, "'"));
    c.latency_sharing = a;
  }
  if (p.count("o")) c.o = parse_duration(p["o"]);
  if (p.count("shm_alpha")) c.shm_alpha = parse_duration(p["shm_alpha"]);
  if (p.count("gamma")) c.gamma = parse_duration(p["gamma"]);
  if (p.count("shm_bw")) c.shm_bw = positive(p["shm_bw"]);
  return std::make_shared<ClusterModel>(c, spec);
}

ModelPtr parse_hetero(Params p) {
  reject_unknown("hetero", p, {"nodes", "gamma", "file"});
  if (p.count("file")) {
    if (p.count("nodes")) throw InputError("model 'hetero': give nodes= or file=, not both");
    auto v = json::parse(read_model_file(p["file"]));
    return HeterogeneousModel::from_json(v, "hetero:file=" + p["file"]);
  }
  double gamma = p.count("gamma") ? parse_duration(p["gamma"]) : 0.0;
  return HeterogeneousModel::banikazemi(take(p, "hetero", "nodes"), gamma);
}

}  // namespace

ModelPtr model_from_json(const json::Value& v) {
  const std::string& kind = json::as_string(json::at(v, "model"), "model");
  if (kind == "postal") {
    SizeTable lambda = SizeTable::from_json(json::at(v, "lambda"), "lambda");
    SizeTable t0 = json::find(v, "t0") ? SizeTable::from_json(json::at(v, "t0"), "t0") : SizeTable(1.0);
    bool seconds = json::find(v, "unit") && json::as_string(json::at(v, "unit"), "unit") == "s";
    return std::make_shared<PostalModel>(lambda, t0, seconds);
  }
  if (kind == "hockney")
    return std::make_shared<HockneyModel>(json::as_double(json::at(v, "alpha"), "alpha"), json::as_double(json::at(v, "beta"), "beta"),
                                          json::find(v, "gamma") ? json::as_double(json::at(v, "gamma"), "gamma") : 0.0,
                                          json::find(v, "copy") ? json::as_double(json::at(v, "copy"), "copy") : 0.0,
                                          json::find(v, "overlap") ? json::as_bool(json::at(v, "overlap"), "overlap") : true,
                                          json::find(v, "ports") ? int(std::clamp<int64_t>(json::as_int(json::at(v, "ports"), "ports"), 0, HockneyModel::kMaxPorts + 1)) : 1);
  if (kind == "loggp")
    return std::make_shared<LogGPModel>(json::as_double(json::at(v, "L"), "L"), json::as_double(json::at(v, "os"), "os"),
                                        json::as_double(json::at(v, "or"), "or"), json::as_double(json::at(v, "g"), "g"),
                                        json::as_double(json::at(v, "G"), "G"),
                                        json::find(v, "gamma") ? json::as_double(json::at(v, "gamma"), "gamma") : 0.0);
  if (kind == "heterogeneous") return HeterogeneousModel::from_json(v, "heterogeneous");
  throw InputError(cat("unknown model kind '", kind, "' (postal, hockney, loggp, heterogeneous)"));
}

std::string read_model_file(const std::string& path, const char* kind) {
  // A FIFO would block, a device never end: model files are regular files.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw InputError(cat("cannot read '", path, "'"));
  if (!S_ISREG(st.st_mode)) throw InputError(cat("'", path, "' is not a regular file: not a ", kind));
  if (uint64_t(st.st_size) > kMaxModelFileBytes)
    throw InputError(cat("'", path, "' is larger than ", kMaxModelFileBytes >> 20, " MiB: not a ", kind));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(cat("cannot read '", path, "'"));
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, size_t(in.gcount()));
    if (text.size() > kMaxModelFileBytes)
      throw InputError(cat("'", path, "' is larger than ", kMaxModelFileBytes >> 20, " MiB: not a ", kind));
  }
  return text;
}

namespace {
// A file given as the model: a probe profile or a model's JSON.
ModelPtr model_file(const std::string& path) {
  const std::string text = read_model_file(path);
  if (looks_like_profile(text)) return ProfileModel::from_text(text, path);
  json::Value v;
  try {
    v = json::parse(text);
  } catch (const InputError& e) {
    throw InputError(cat(path, ": neither a profile nor a model file (", e.what(), ")"));
  }
  // A file of results names the model it was made with: that is not this
  // file's kind, and the message must name what the user passed.
  const json::Value* kind = json::find(v, "model");
  static const char* const kKinds[] = {"postal", "hockney", "loggp", "heterogeneous"};
  const bool known = kind && kind->is_string() &&
                     std::find(std::begin(kKinds), std::end(kKinds), kind->get<std::string>()) != std::end(kKinds);
  if (!known) {
    const json::Value* tool = json::find(v, "tool");
    std::string what = tool && tool->is_string() ? cat(" (it was written by ", tool->get<std::string>(), ")") : "";
    throw InputError(cat(path, ": neither a profile (hetcoll probe) nor a model file (postal, hockney, loggp, ",
                         "heterogeneous)", what, "; give the machine's profile or a model spec"));
  }
  try {
    return model_from_json(v);
  } catch (const InputError& e) {
    throw InputError(cat(path, ": ", e.what()));
  }
}
}  // namespace

ModelPtr load_model(const std::string& spec) {
  if (spec.find(':') == std::string::npos) return model_file(spec);
  return parse_model(spec);
}

ModelPtr parse_model(const std::string& spec) {
  auto colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  std::string rest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (kind == "file") {
    if (rest.empty()) throw InputError("model 'file' needs a path: file:MODEL.json");
    return model_file(rest);
  }
  if (kind == "profile") {
    if (rest.empty()) throw InputError("model 'profile' needs a path: profile:PROFILE.json");
    // spec() adds "@digest" of the text it was read from.
    auto at = rest.rfind('@');
    if (at != std::string::npos && rest.size() - at == 17 &&
        rest.find_first_not_of("0123456789abcdef", at + 1) == std::string::npos)
      rest = rest.substr(0, at);
    return ProfileModel::load(rest);
  }
  Params p = split_params(kind, rest);
  if (kind == "postal") return parse_postal(p);
  if (kind == "hockney") return parse_hockney(p);
  if (kind == "loggp") return parse_loggp(p);
  if (kind == "hetero" || kind == "heterogeneous") return parse_hetero(p);
  if (kind == "cluster") return parse_cluster(p, spec);
  if (kind == "tree") return parse_tree(p, spec);
  throw InputError(cat("unknown model '", kind.empty() ? spec : kind,
                       "' (expected postal:, hockney:, loggp:, hetero:, cluster:, profile: or file:)"));
}

}  // namespace hetcoll
