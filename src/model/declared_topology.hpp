// A topology a site declares: Slurm's topology.conf (or what
// `scontrol show topology` prints), the tree of switches its scheduler
// places jobs by —
//
//   SwitchName=s0 Nodes=node[00-15]
//   SwitchName=s1 Nodes=node[16-31]
//   SwitchName=top Switches=s[0-1]
//
// one switch per line, keys without regard to case, `#` a comment, `\` at a
// line's end joining the next; a switch holds hosts (Nodes=, a hostlist:
// prefix[0-3,7]suffix, ranges zero-padded as written, several brackets
// multiplied out) or switches (Switches=), and where it holds both (as
// scontrol prints an upper switch, Nodes= every host below it) the hosts
// must be those of its switches. Level= and LinkSpeed= (a number without a
// unit, relative) are kept; other keys are ignored. Several roots are
// several trees (a job spans them only through the network above, which
// the probe measures like any other level).
//
// The probe (`hetcoll probe --topology FILE|slurm`) takes it as a start:
// its leaf switches as racks, its upper switches as levels, each one's
// capacities measured and every place where measurement and declaration
// disagree said (measure/probe/declared.cpp). Pure parsing: no MPI.
#pragma once
#include <string>
#include <unordered_map>
#include <vector>

namespace hetcoll {

struct DeclaredSwitch {
  std::string name;
  int line = 0;                    // where it was declared
  int parent = -1;                 // index of the switch holding it, -1: a root
  std::vector<int> switches;       // the switches it holds
  std::vector<std::string> hosts;  // the hosts it holds directly (leaf switches)
  double link_speed = 0;           // LinkSpeed= (relative, no unit), 0: none
};

struct DeclaredTopology {
  std::string source;  // the file's name, for messages
  std::vector<DeclaredSwitch> switches;

  // The switch holding host `name` directly (also matched without a domain:
  // "n1.cluster" is "n1"), -1 for none.
  int switch_of(const std::string& name) const;
  // (the parser's index for it: host name, and name without its domain, to switch)
  std::unordered_map<std::string, int> by_name, by_short_name;
  // Every host below switch s.
  std::vector<std::string> hosts_below(int s) const;
  // 0 for a leaf switch, 1 + the highest of its switches otherwise.
  int level(int s) const;
};

// The declaration laid over a job's hosts and the subnets latency found
// (ECO's partition) — what the probe measures:
//  - a switch holding no host of the job, or the same hosts as a switch
//    it holds, is not a level of this job (left out, silently);
//  - a switch whose hosts are whole subnets is above them (its links are
//    the subnets' uplinks, measured as such);
//  - a switch holding part of two subnets or more disagrees with latency
//    (left out, said);
//  - a job host in no switch is said, and stays where measurement put it.
struct DeclaredGroup {
  int sw = -1;             // the declared switch
  int level = 0;           // 0: holds no other group; else 1 + the highest it holds
  int within = -1;         // the group holding it (index in `groups`, before it), -1: none
  int subnet = 0;
  std::vector<int> hosts;  // the job's hosts below it, ascending
};
struct DeclaredNote {
  bool disagrees = false;  // with the job's hosts or with latency
  std::string text;
};
struct DeclaredLayout {
  std::vector<DeclaredGroup> groups;  // outer before inner
  std::vector<DeclaredNote> notes;
  int levels() const;
};
DeclaredLayout place_declared(const DeclaredTopology& t, const std::vector<std::string>& hosts,
                              const std::vector<int>& subnet_of);

// Parses topology.conf text (or scontrol's); InputError naming the source
// and line for anything it cannot take: an unknown switch named, a switch
// declared twice or holding itself, a host under two switches, a hostlist
// that does not parse or names more than 2^20 hosts, more than 2^16
// switches or 64 levels.
DeclaredTopology parse_declared_topology(const std::string& text, const std::string& source);
DeclaredTopology read_declared_topology(const std::string& path);

// A Slurm hostlist ("n[0-3,7],gpu[01-02]x") as its names, in order.
std::vector<std::string> expand_hostlist(const std::string& list);

}  // namespace hetcoll
