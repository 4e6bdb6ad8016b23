#include "model/cluster_model.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace hetcoll {

ClusterModel::ClusterModel(ClusterParams p, std::string spec) : p_(std::move(p)), spec_(std::move(spec)) {
  auto t = std::make_shared<Topology>();
  int H = 0;
  for (int k : p_.subnets) H += k;
  const int R = p_.ranks_per_host;
  for (size_t s = 0; s < p_.subnets.size(); ++s) {
    for (int k = 0; k < p_.subnets[s]; ++k) {
      const int h = int(t->subnet_of_host.size());
      t->subnet_of_host.push_back(int(s));
      t->host_names.push_back(cat(char('a' + s % 26), k));
      t->nic_up.push_back(int(t->links.size()));
      t->links.push_back({cat("nic_up(", t->host_names.back(), ")"), p_.bw});
      t->nic_down.push_back(int(t->links.size()));
      t->links.push_back({cat("nic_down(", t->host_names.back(), ")"), p_.bw});
      (void)h;
    }
    t->subnet_names.push_back(cat(char('A' + s % 26)));
    t->uplink_out.push_back(int(t->links.size()));
    t->links.push_back({cat("uplink(", t->subnet_names.back(), ")"), p_.up_bw});
    if (p_.split_duplex) t->links.push_back({cat("uplink_in(", t->subnet_names.back(), ")"), p_.up_bw});
    t->uplink_in.push_back(int(t->links.size()) - 1);
  }
  for (int r = 0; r < H * R; ++r) t->host_of_rank.push_back(p_.round ? r % H : r / R);
  t->latency_sharing = p_.latency_sharing;
  t->check();
  t->settle();
  topo_ = t;
}

MessageCost ClusterModel::message(int src, int dst, uint64_t bytes) const {
  if (src < 0 || dst < 0 || src >= ranks() || dst >= ranks())
    throw InputError(cat("the cluster has ", ranks(), " ranks; rank ", std::max(src, dst), " is not one of them"));
  double a, b;
  if (topo_->host_of(src) == topo_->host_of(dst)) a = p_.shm_alpha, b = p_.shm_bw;
  else if (topo_->subnet_of(src) == topo_->subnet_of(dst)) a = p_.alpha, b = p_.bw;
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
