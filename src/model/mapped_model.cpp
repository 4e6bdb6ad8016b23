// map_model: a machine model seen through a rank map (machine_model.hpp).
#include <cstdio>

#include "model/machine_model.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"

namespace hetcoll {

namespace {

class MappedModel : public MachineModel {
 public:
  MappedModel(ModelPtr base, std::vector<int> map) : base_(std::move(base)), map_(std::move(map)) {
    const int n = base_->ranks();
    uint64_t h = kFnvOffset;  // FNV-1a of the map: part of the identity
    for (int r : map_) {
      if (r < 0 || (n > 0 && r >= n))
        throw InputError(cat("rank map entry ", r, " is not a rank of the model (", n, " ranks)"));
      h = fnv1a_u32(uint32_t(r), h);
    }
    char digest[17];
    std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(h));
    spec_ = cat(base_->spec(), "#map=", map_.size(), ":", digest);
    if (TopologyPtr t = base_->topology()) topo_ = t->mapped(map_);
  }
  std::string kind() const override { return base_->kind(); }
  std::string spec() const override { return spec_; }
  std::string unit() const override { return base_->unit(); }
  MessageCost message(int src, int dst, uint64_t bytes) const override {
    return base_->message(map_[size_t(src)], map_[size_t(dst)], bytes);
  }
  double reduce_time(int rank, uint64_t bytes) const override { return base_->reduce_time(map_[size_t(rank)], bytes); }
  double copy_time(int rank, uint64_t bytes) const override { return base_->copy_time(map_[size_t(rank)], bytes); }
  int ranks() const override { return int(map_.size()); }
  bool receive_uses_cpu() const override { return base_->receive_uses_cpu(); }
  int send_ports() const override { return base_->send_ports(); }
  uint64_t eager_bytes() const override { return base_->eager_bytes(); }
  TopologyPtr topology() const override { return topo_; }
  json::Value to_json() const override {
    json::Value v = base_->to_json();
    v["mapped_ranks"] = int(map_.size());
    return v;
  }

 private:
  ModelPtr base_;
  std::vector<int> map_;
  std::string spec_;
  TopologyPtr topo_;
};

}  // namespace

ModelPtr map_model(ModelPtr base, std::vector<int> map) {
  if (map.empty()) return base;
  return std::make_shared<MappedModel>(std::move(base), std::move(map));
}

ModelPtr group_model(ModelPtr base, const std::vector<int>& rank_map, int n) {
  if (!rank_map.empty()) return map_model(std::move(base), rank_map);
  if (base->maps_hosts()) {
    std::vector<int> map = base->default_rank_map(n);
    return map_model(std::move(base), std::move(map));
  }
  return base;
}

}  // namespace hetcoll
