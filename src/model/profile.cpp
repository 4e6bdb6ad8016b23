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
}  // namespace hetcoll
