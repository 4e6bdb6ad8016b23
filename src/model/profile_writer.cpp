#include "model/profile.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "model/machine_model.hpp"
#include "model/profile_fields.hpp"
#include "util/error.hpp"
#include "util/json_document.hpp"

namespace hetcoll {

namespace {

using namespace profile_io;

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
}  // namespace hetcoll
