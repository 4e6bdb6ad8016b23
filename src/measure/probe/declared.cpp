// A declared topology (--topology FILE) as a start: its switches measured
// level by level, and what of it held said line by line.
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "measure/probe/probe.hpp"

namespace hetcoll::probe {

namespace {

// A rate for the topology's lines; one of them.
std::string rate_text(double bytes_per_s) {
  char b[32];
  if (bytes_per_s >= 1e9) std::snprintf(b, sizeof b, "%.3g GB/s", bytes_per_s / 1e9);
  else std::snprintf(b, sizeof b, "%.3g MB/s", bytes_per_s / 1e6);
  return b;
}
void say(bool disagrees, const std::string& text) {
  std::printf("hetcoll-probe: topology: %s%s\n", disagrees ? "DISAGREES: " : "", text.c_str());
}

}  // namespace

// 4e. A declared topology (--topology FILE, topology.conf's form:
// model/declared_topology.hpp) as a start: laid over the job's hosts and
// the subnets latency found, then each level's switches measured like
// racks (group_links), from the bottom level up, each switch against its
// next sibling (same switch above, same subnet). Rank 0 says, line by
// line, each switch's links, and where measurement and declaration
// disagree: hosts in no switch, a switch across subnets latency tells
// apart, a switch whose hosts' flows inside are not one switch's, racks
// the shifts found that the declaration does not hold. What holds becomes
// the profile's racks (nested: the declared levels), in place of the
// racks the shifts found.
void Probe::declared() {
  if (opt.topology.empty()) return;
  DeclaredTopology t;
  DeclaredLayout lay;
  int ok = 1;
  if (g_rank == 0) {
    try {
      t = read_declared_topology(opt.topology);
      lay = place_declared(t, hosts.names, subnet_of);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "hetcoll-probe: --topology: %s (not used)\n", e.what());
      ok = 0;
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, g_comm);
  if (!ok) return;
  if (g_rank == 0) {
    int levels_declared = 0;
    for (size_t s = 0; s < t.switches.size(); ++s) levels_declared = std::max(levels_declared, t.level(int(s)) + 1);
    say(false, cat(opt.topology, ": ", t.switches.size(), " switches in ", levels_declared, " level",
                   levels_declared == 1 ? "" : "s", "; ", lay.groups.size(), " of them inside this job's ", S,
                   " subnet", S == 1 ? "" : "s", " (", lay.levels(), " level", lay.levels() == 1 ? "" : "s", ")"));
    for (const DeclaredNote& n : lay.notes) say(n.disagrees, n.text);
  }
  // Every rank: the groups (level, within, subnet, hosts).
  std::vector<int> flat;
  if (g_rank == 0)
    for (const DeclaredGroup& g : lay.groups) {
      flat.insert(flat.end(), {g.level, g.within, g.subnet, int(g.hosts.size())});
      flat.insert(flat.end(), g.hosts.begin(), g.hosts.end());
    }
  int words = int(flat.size());
  MPI_Bcast(&words, 1, MPI_INT, 0, g_comm);
  flat.resize(size_t(words));
  MPI_Bcast(flat.data(), words, MPI_INT, 0, g_comm);
  std::vector<DeclaredGroup> groups;
  for (size_t i = 0; i < flat.size();) {
    DeclaredGroup g;
    g.level = flat[i], g.within = flat[i + 1], g.subnet = flat[i + 2];
    g.hosts.assign(flat.begin() + long(i) + 4, flat.begin() + long(i) + 4 + flat[i + 3]);
    i += 4 + size_t(flat[i + 3]);
    groups.push_back(std::move(g));
  }
  if (groups.empty()) return;
  if (opt.sequential) {
    if (g_rank == 0) say(false, "sequential mode measures one pair at a time: the declared switches' links not measured");
    return;
  }
  int levels = 0;
  for (const DeclaredGroup& g : groups) levels = std::max(levels, g.level + 1);
  const uint64_t bytes = std::min<uint64_t>(large * 16, uint64_t(16) << 20);
  if (!affords(levels * 5 * flows_estimate(bytes), 0.87)) {
    exhausted = true;
    if (g_rank == 0) say(false, "the budget does not pay for the declared switches' links: not measured");
    return;
  }
  bar.phase("declared", 0.5, 0.5);
  std::vector<RackProfile> links(groups.size());
  std::vector<double> ratio(groups.size(), 1.0);
  for (int level = 0; level < levels; ++level) {
    std::vector<int> ids;
    for (size_t i = 0; i < groups.size(); ++i)
      if (groups[i].level == level) ids.push_back(int(i));
    GroupSet g;
    g.inside = level == 0;  // flows inside an upper switch cross the links of those it holds
    for (int id : ids) {
      std::vector<int> sib;  // the same switch above, the same subnet, the same level
      for (int o : ids)
        if (groups[size_t(o)].within == groups[size_t(id)].within && groups[size_t(o)].subnet == groups[size_t(id)].subnet)
          sib.push_back(o);
      const size_t at = size_t(std::find(sib.begin(), sib.end(), id) - sib.begin());
      const int nx = sib.size() >= 2 ? sib[(at + 1) % sib.size()] : -1;
      g.hosts.push_back(groups[size_t(id)].hosts);
      g.next.push_back(nx < 0 ? -1 : int(std::find(ids.begin(), ids.end(), nx) - ids.begin()));
      g.index.push_back(int(at));
      g.vote.push_back(groups[size_t(id)].subnet);
    }
    std::vector<double> inside;
    std::vector<RackProfile> l = group_links(g, bytes, cat("declared (", opt.topology, "), level ", level, ": switch to next switch "), inside);
    // Each switch of three or more of its subnet's at this level to all
    // the others and back (a switch's link faster than the next one's
    // reads as the next's), where the budget affords it.
    std::vector<int> which;
    for (size_t k = 0; k < ids.size(); ++k)
      if (std::count(g.vote.begin(), g.vote.end(), g.vote[k]) >= 3) which.push_back(int(k));
    if (!which.empty() && affords(double(which.size()) * 2 * flows_estimate(bytes), 0.87))
      fan_links(g, which, bytes, l);
    if (g_rank == 0)
      for (size_t k = 0; k < ids.size(); ++k) links[size_t(ids[k])] = l[k], ratio[size_t(ids[k])] = inside[k];
  }
  if (g_rank == 0) hold_declared(t, lay, links, ratio);
}

// Rank 0: what of a declared topology held, line by line (each switch's
// links; where measurement disagrees), and the profile's racks from it.
void Probe::hold_declared(const DeclaredTopology& t, const DeclaredLayout& lay, const std::vector<RackProfile>& links,
                          const std::vector<double>& ratio) {
  const std::vector<DeclaredGroup>& groups = lay.groups;
  auto nic = [&](int h) { return h < int(rack_nic.size()) && rack_nic[size_t(h)] > 0 ? rack_nic[size_t(h)] : 0.0; };
  std::vector<int> kept(groups.size(), -1);
  std::vector<RackProfile> declared_racks;
  for (size_t i = 0; i < groups.size(); ++i) {
    const DeclaredGroup& g = groups[i];
    const std::string name = t.switches[size_t(g.sw)].name;
    if (g.level == 0 && g.hosts.size() >= 2 && ratio[i] < kRackSlow) {
      say(true, cat("switch ", name, ": a flow between two of its hosts moved ", int(100 * ratio[i]),
                    " % of the best such flow: not one switch's hosts by bandwidth, left out"));
      continue;
    }
    RackProfile r = links[i];
    r.subnet = g.subnet;
    r.name = name;
    int w = g.within;
    while (w >= 0 && kept[size_t(w)] < 0) w = lay.groups[size_t(w)].within;
    r.within = w >= 0 ? kept[size_t(w)] : -1;
    double hosts_sum = 0;
    for (int h : g.hosts) hosts_sum += nic(h);
    const bool measured = r.up.how.find("not measured") == std::string::npos;
    std::string line = cat("switch ", name, " (", g.hosts.size(), " host", g.hosts.size() == 1 ? "" : "s", ", level ", g.level, "): ");
    if (!measured) line += "no switch beside it in this job to measure against";
    else
      line += cat("link out ", rate_text(r.up.bandwidth), ", in ", rate_text(r.down.bandwidth), r.shared ? " (one link both ways)" : "",
                  hosts_sum > 0 ? cat("; its hosts ", rate_text(hosts_sum), " together (",
                                      int(10 * hosts_sum / std::max(r.up.bandwidth, 1.0) + 0.5) / 10.0, ":1)")
                                : std::string());
    // An upper switch as fast as the switches below it together: no limit of its own.
    double below = 0;
    for (size_t j = i + 1; j < groups.size(); ++j)
      if (groups[j].within == int(i) && (groups[j].level > 0 || ratio[j] >= kRackSlow)) below += links[j].up.bandwidth;
    if (measured && g.level > 0 && below > 0 && r.up.bandwidth >= 0.9 * below)
      line += cat("; as fast as the links of the switches it holds together (", rate_text(below), "): no limit of its own");
    say(false, line);
    kept[i] = int(declared_racks.size());
    declared_racks.push_back(std::move(r));
  }
  // The racks the shifts found against the declared switches: one no
  // switch that held holds alone is said; where it overlaps none of them,
  // it stays (measurement where the declaration did not hold).
  const size_t held = declared_racks.size();
  for (const RackProfile& f : found_racks) {
    bool same = false, overlaps = false;
    int within = -1;  // the innermost switch that held holding all of it
    for (size_t i = 0; i < groups.size(); ++i) {
      if (kept[i] < 0) continue;
      same = same || groups[i].hosts == f.hosts;
      int in = 0;
      for (int h : f.hosts) in += std::binary_search(groups[i].hosts.begin(), groups[i].hosts.end(), h);
      if (groups[i].level == 0) overlaps = overlaps || in > 0;
      if (in == int(f.hosts.size()) && groups[i].level > 0) within = kept[i];
    }
    if (same) continue;
    say(true, cat("the shifts measured a rack of ", f.hosts.size(), " hosts (", hosts.names[size_t(f.hosts.front())], " ... ",
                  hosts.names[size_t(f.hosts.back())], ", its link ", rate_text(f.up.bandwidth),
                  ") that no declared switch holds alone", overlaps ? "" : ": kept, as measured"));
    if (!overlaps) {
      declared_racks.push_back(f);
      declared_racks.back().within = within;
    }
  }
  if (!declared_racks.empty())
    say(false, cat("the profile's racks: ", held, " declared switch", held == 1 ? "" : "es", " that held, ",
                   declared_racks.size() - held, " rack", declared_racks.size() - held == 1 ? "" : "s", " measured alone"));
  found_racks = std::move(declared_racks);
}

}  // namespace hetcoll::probe
