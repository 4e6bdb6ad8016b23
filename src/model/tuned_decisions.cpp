#include "model/tuned_decisions.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <stdexcept>

#include "schedule/collective.hpp"

namespace hetcoll {

void assign_size_classes(std::vector<TunedEntry>& entries) {
  std::vector<std::string> order;
  for (const TunedEntry& e : entries)
    if (std::find(order.begin(), order.end(), e.op) == order.end()) order.push_back(e.op);
  auto rank = [&](const std::string& op) { return std::find(order.begin(), order.end(), op) - order.begin(); };
  std::stable_sort(entries.begin(), entries.end(), [&](const TunedEntry& a, const TunedEntry& b) {
    return a.op != b.op ? rank(a.op) < rank(b.op) : a.bytes < b.bytes;
  });
  std::vector<TunedEntry> kept;
  for (size_t i = 0; i < entries.size(); ++i) {
    const bool first = i == 0 || entries[i - 1].op != entries[i].op;
    const bool last = i + 1 == entries.size() || entries[i + 1].op != entries[i].op;
    const int c = size_class(entries[i].bytes);
    entries[i].class_lo = first ? 0 : (size_class(entries[i - 1].bytes) + c + 1) / 2;
    entries[i].class_hi = last ? c + 1 : (c + size_class(entries[i + 1].bytes) + 1) / 2;
    // A decision learned in a job was measured at one size class (its
    // site's): it decides that class alone, not the sizes around it.
    if (entries[i].timing == kTimingLearned) {
      entries[i].class_lo = std::max(entries[i].class_lo, c);
      entries[i].class_hi = std::min(entries[i].class_hi, c + 1);
    }
  }
  for (TunedEntry& e : entries)
    if (e.class_hi > e.class_lo) kept.push_back(std::move(e));
  entries = std::move(kept);
}

size_t merge_tuned(Profile& p, TunedLayout layout) {
  std::vector<TunedEntry> all;
  for (const TunedLayout& t : p.tuned)
    if (t.hosts == layout.hosts)
      for (const TunedEntry& old : t.entries)
        if (std::none_of(layout.entries.begin(), layout.entries.end(),
                         [&](const TunedEntry& e) { return e.op == old.op && e.bytes == old.bytes; }))
          all.push_back(old);
  const size_t kept = all.size();
  for (TunedEntry& e : layout.entries) all.push_back(std::move(e));
  assign_size_classes(all);
  layout.entries = std::move(all);
  p.tuned.erase(std::remove_if(p.tuned.begin(), p.tuned.end(),
                               [&](const TunedLayout& t) { return t.hosts == layout.hosts; }),
                p.tuned.end());
  if (p.tuned.size() >= kMaxTunedLayouts) p.tuned.erase(p.tuned.begin());
  p.tuned.push_back(std::move(layout));
  return kept;
}

namespace {
std::string temporary_of(const std::string& path) { return path + ".tmp"; }
}  // namespace

void check_profile_writable(const std::string& path) {
  const std::string tmp = temporary_of(path);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::app);
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::remove(tmp.c_str());
}

void write_profile_file(const Profile& p, const std::string& path) {
  const std::string text = profile_to_json(p);
  parse_profile(text);  // what we write, we can read
  const std::string tmp = temporary_of(path);
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot replace " + path);
  }
}

std::string utc_now() {
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

}  // namespace hetcoll
