#include "model/cluster_model.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace hetcoll {

ClusterModel::ClusterModel(ClusterParams p, std::string spec)
    : p_(std::move(p)), spec_(std::move(spec)), tree_(!p_.fanout.empty()) {
  auto t = std::make_shared<Topology>();
  if (tree_) build_tree(*t);
  else build_subnets(*t);
  const int H = t->hosts(), R = p_.ranks_per_host;
  for (int r = 0; r < H * R; ++r) t->host_of_rank.push_back(p_.round ? r % H : r / R);
  t->latency_sharing = p_.latency_sharing;
  t->check();
  t->settle();
  topo_ = t;
}

void ClusterModel::build_subnets(Topology& t) const {
  for (size_t s = 0; s < p_.subnets.size(); ++s) {
    const std::string subnet = cat(char('A' + s % 26));
    const int sw = t.add_switch(0, subnet);
    for (int k = 0; k < p_.subnets[s]; ++k) {
      const std::string host = cat(char('a' + s % 26), k);
      const int up = t.add_link(cat("nic_up(", host, ")"), p_.bw);
      const int down = t.add_link(cat("nic_down(", host, ")"), p_.bw);
      t.add_host(sw, host, up, down);
    }
    NetNode& x = t.nodes[size_t(sw)];
    x.up = x.down = t.add_link(cat("uplink(", subnet, ")"), p_.up_bw);
    if (p_.split_duplex) x.down = t.add_link(cat("uplink_in(", subnet, ")"), p_.up_bw);
  }
}

// Level by level from the root: switches "s3", "s3.1", … named by their
// path, hosts "h0", "h1", … in order.
void ClusterModel::build_tree(Topology& t) const {
  const size_t levels = p_.fanout.size();
  auto at = [](const std::vector<double>& v, size_t k) { return v.empty() ? 0.0 : v[std::min(k, v.size() - 1)]; };
  auto fabric = [&](size_t level, const std::string& name) {
    const double f = at(p_.level_fabric, level);
    return f > 0 ? t.add_link(cat("fabric(", name, ")"), f) : -1;
  };
  t.nodes[0].fabric = fabric(0, "root");
  std::vector<std::pair<int, std::string>> parents{{0, "s"}};
  for (size_t k = 0; k < levels; ++k) {
    const bool hosts = k + 1 == levels;
    const bool shared = !p_.level_shared.empty() && p_.level_shared[std::min(k, p_.level_shared.size() - 1)];
    const double bw = at(p_.level_bw, k), lat = at(p_.level_latency, k);
    std::vector<std::pair<int, std::string>> next;
    for (auto& [parent, path] : parents)
      for (int i = 0; i < p_.fanout[k]; ++i) {
        const std::string name = hosts ? cat("h", t.hosts()) : cat(path, k ? "." : "", i);
        const int up = t.add_link(cat(hosts ? "nic" : "uplink", shared ? "" : "_up", "(", name, ")"), bw, lat);
        const int down = shared ? up : t.add_link(cat(hosts ? "nic_down(" : "uplink_down(", name, ")"), bw, lat);
        if (hosts) {
          t.add_host(parent, name, up, down);
        } else {
          next.push_back({t.add_switch(parent, name, up, down, fabric(k + 1, name)), name});
        }
      }
    parents = std::move(next);
  }
}

MessageCost ClusterModel::message(int src, int dst, uint64_t bytes) const {
  if (src < 0 || dst < 0 || src >= ranks() || dst >= ranks())
    throw InputError(cat("the cluster has ", ranks(), " ranks; rank ", std::max(src, dst), " is not one of them"));
  double a, b;
  const int hs = topo_->host_of(src), hd = topo_->host_of(dst);
  if (hs == hd) a = p_.shm_alpha, b = p_.shm_bw;
  else if (tree_) a = topo_->path_latency(hs, hd), b = topo_->path_bandwidth(hs, hd);
  else if (topo_->group_of(src) == topo_->group_of(dst)) a = p_.alpha, b = p_.bw;
  else a = p_.alpha + p_.up_latency, b = std::min(p_.bw, p_.up_bw);
  const double wire = double(bytes) / b;
  return {p_.o + wire, p_.o + wire + a, p_.o, wire};
}

json::Value ClusterModel::to_json() const {
  json::Value v = json::Value::object();
  v["model"] = "cluster";
  v["spec"] = spec_;
  v["ranks"] = ranks();
  return v;
}

}  // namespace hetcoll
