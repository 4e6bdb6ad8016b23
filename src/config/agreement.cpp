#include "config/agreement.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "util/hash.hpp"

namespace hetcoll {

namespace {

std::string hex(uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

// A value as one field of a line: no tabs or line breaks, at most kShownChars.
std::string clean(std::string_view s) {
  std::string out;
  for (char c : s) out += (c == '\t' || c == '\n' || c == '\r') ? ' ' : c;
  if (out.size() > kShownChars) out = out.substr(0, kShownChars - 3) + "...";
  return out;
}

std::string name_ranks(const std::vector<int>& ranks, const std::vector<int>& world_ranks) {
  std::string s = (ranks.size() == 1 ? "rank " : "ranks ") + rank_ranges(ranks);
  if (world_ranks.empty()) return s;
  std::vector<int> w;
  bool same = true;
  for (int r : ranks) {
    const int x = size_t(r) < world_ranks.size() ? world_ranks[size_t(r)] : -1;
    w.push_back(x);
    same &= x == r;
  }
  return same ? s : s + " (world " + rank_ranges(w) + ")";
}

}  // namespace

uint64_t Fingerprint::digest() const {
  uint64_t h = kFnvOffset;
  for (const ConfigPart& p : parts) h = fnv1a_u64(p.digest, fnv1a(p.name, h));
  return h;
}

std::string Fingerprint::encode() const {
  std::string s;
  for (const ConfigPart& p : parts) s += clean(p.name) + "\t" + hex(p.digest) + "\t" + clean(p.shown) + "\n";
  return s;
}

Fingerprint Fingerprint::decode(std::string_view text) {
  Fingerprint f;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const size_t t1 = line.find('\t'), t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 == std::string_view::npos || t2 - t1 != 17) continue;
    const std::string digits(line.substr(t1 + 1, 16));
    if (digits.find_first_not_of("0123456789abcdef") != std::string::npos) continue;
    f.parts.push_back({std::string(line.substr(0, t1)), std::strtoull(digits.c_str(), nullptr, 16),
                       std::string(line.substr(t2 + 1))});
  }
  return f;
}

std::string rank_ranges(const std::vector<int>& ranks) {
  std::vector<int> r = ranks;
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  std::string s;
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    if (!s.empty()) s += ",";
    s += std::to_string(r[i]);
    if (j > i) s += "-" + std::to_string(r[j]);
    i = j + 1;
  }
  return s;
}

std::string describe_disagreement(const std::vector<Fingerprint>& by_rank, const std::vector<int>& world_ranks) {
  // Every part's name, in the order the ranks list them (rank 0's first).
  std::vector<std::string> names;
  for (const Fingerprint& f : by_rank)
    for (const ConfigPart& p : f.parts)
      if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  std::string out;
  for (const std::string& name : names) {
    // The ranks' values of this part, grouped by digest, in order of their first rank.
    struct Group {
      bool known;
      uint64_t digest;
      std::string shown;
      std::vector<int> ranks;
    };
    std::vector<Group> groups;
    for (size_t r = 0; r < by_rank.size(); ++r) {
      const auto& parts = by_rank[r].parts;
      auto it = std::find_if(parts.begin(), parts.end(), [&](const ConfigPart& p) { return p.name == name; });
      const bool known = it != parts.end();
      const uint64_t d = known ? it->digest : 0;
      auto g = std::find_if(groups.begin(), groups.end(),
                            [&](const Group& x) { return x.known == known && x.digest == d; });
      if (g == groups.end()) {
        groups.push_back({known, d, known ? clean(it->shown) : std::string(), {}});
        g = groups.end() - 1;
      }
      g->ranks.push_back(int(r));
    }
    if (groups.size() < 2) continue;
    // Values that read alike but differ (one path, two contents) show their digests.
    std::map<std::string, int> readings;
    for (const Group& g : groups) ++readings[g.shown];
    auto value = [&](const Group& g) {
      if (!g.known) return std::string("unknown to that hetcoll version");
      std::string v = "'" + g.shown + "'";
      if (readings[g.shown] > 1) v += " (content " + hex(g.digest) + ")";
      return v;
    };
    constexpr size_t kListed = 3;  // values named one by one; the rest summed up
    std::string s = name + " is ";
    for (size_t i = 0; i < groups.size(); ++i) {
      if (i == kListed && groups.size() > kListed + 1) {
        std::vector<int> rest;
        for (size_t j = i; j < groups.size(); ++j) rest.insert(rest.end(), groups[j].ranks.begin(), groups[j].ranks.end());
        s += ", and " + std::to_string(groups.size() - i) + " other values on " + name_ranks(rest, world_ranks);
        break;
      }
      if (i > 0) s += groups.size() == 2 ? " but " : i + 1 == groups.size() ? " and " : ", ";
      s += value(groups[i]) + " on " + name_ranks(groups[i].ranks, world_ranks);
    }
    out += (out.empty() ? "" : "; ") + s;
  }
  return out;
}

}  // namespace hetcoll
