#include "model/declared_topology.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "util/error.hpp"

namespace hetcoll {

namespace {

constexpr size_t kMaxHosts = size_t(1) << 20;
constexpr size_t kMaxSwitches = size_t(1) << 16, kMaxLevels = 64;

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string short_name(const std::string& s) { return s.substr(0, s.find('.')); }

// A word of the file as a message may show it: printable ASCII, at most 40 characters.
std::string shown(const std::string& w) {
  std::string out;
  for (unsigned char c : w.substr(0, 40)) out += (c >= 0x20 && c < 0x7f) ? char(c) : '?';
  return w.size() > 40 ? out + "..." : out;
}

// One bracket's ranges ("0-3,7,09-11") as zero-padded numbers.
std::vector<std::string> expand_ranges(const std::string& inside, const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(inside);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const size_t dash = part.find('-');
    const std::string a = part.substr(0, dash), b = dash == std::string::npos ? a : part.substr(dash + 1);
    auto digits = [](const std::string& x) {
      return !x.empty() && x.size() <= 9 &&
             std::all_of(x.begin(), x.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    };
    if (!digits(a) || !digits(b))
      throw InputError(cat("hostlist '", list, "': '", part, "' is not a number or a range of numbers (0-3)"));
    const long lo = std::stol(a), hi = std::stol(b);
    if (hi < lo) throw InputError(cat("hostlist '", list, "': the range '", part, "' runs backwards"));
    if (size_t(hi - lo) + out.size() >= kMaxHosts)
      throw InputError(cat("hostlist '", list, "': more than ", kMaxHosts, " hosts"));
    const size_t width = a.size();
    for (long v = lo; v <= hi; ++v) {
      std::string num = std::to_string(v);
      if (num.size() < width) num.insert(0, width - num.size(), '0');
      out.push_back(num);
    }
  }
  if (out.empty()) throw InputError(cat("hostlist '", list, "': an empty bracket"));
  return out;
}

// One term ("rack[1-2]n[01-04]"): every bracket multiplied out.
void expand_term(const std::string& term, const std::string& list, std::vector<std::string>& out) {
  std::vector<std::string> names{""};
  size_t i = 0;
  while (i < term.size()) {
    const size_t open = term.find('[', i);
    const std::string text = term.substr(i, open == std::string::npos ? std::string::npos : open - i);
    if (text.find(']') != std::string::npos) throw InputError(cat("hostlist '", list, "': a ']' without its '['"));
    for (auto& n : names) n += text;
    if (open == std::string::npos) break;
    const size_t close = term.find(']', open);
    if (close == std::string::npos) throw InputError(cat("hostlist '", list, "': a '[' without its ']'"));
    const std::vector<std::string> nums = expand_ranges(term.substr(open + 1, close - open - 1), list);
    if (names.size() * nums.size() + out.size() > kMaxHosts)
      throw InputError(cat("hostlist '", list, "': more than ", kMaxHosts, " hosts"));
    std::vector<std::string> next;
    next.reserve(names.size() * nums.size());
    for (const auto& n : names)
      for (const auto& v : nums) next.push_back(n + v);
    names.swap(next);
    i = close + 1;
  }
  for (auto& n : names)
    if (!n.empty()) out.push_back(std::move(n));
}

}  // namespace

std::vector<std::string> expand_hostlist(const std::string& list) {
  std::vector<std::string> out;
  std::string term;
  int depth = 0;
  for (size_t i = 0; i <= list.size(); ++i) {
    const char c = i < list.size() ? list[i] : ',';
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) throw InputError(cat("hostlist '", list, "': a ']' without its '['"));
    if (depth > 1) throw InputError(cat("hostlist '", list, "': a bracket inside a bracket"));
    if (c == ',' && depth == 0) {
      if (!term.empty()) expand_term(term, list, out);
      term.clear();
    } else if (!std::isspace(static_cast<unsigned char>(c))) {
      term += c;
    }
  }
  if (depth != 0) throw InputError(cat("hostlist '", list, "': a '[' without its ']'"));
  return out;
}

int DeclaredTopology::switch_of(const std::string& name) const {
  if (auto it = by_name.find(name); it != by_name.end()) return it->second;
  if (auto it = by_short_name.find(short_name(name)); it != by_short_name.end()) return it->second;
  return -1;
}

std::vector<std::string> DeclaredTopology::hosts_below(int s) const {
  std::vector<std::string> out = switches[size_t(s)].hosts;
  for (int c : switches[size_t(s)].switches) {
    const std::vector<std::string> more = hosts_below(c);
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

int DeclaredTopology::level(int s) const {
  int l = 0;
  for (int c : switches[size_t(s)].switches) l = std::max(l, 1 + level(c));
  return l;
}

DeclaredTopology parse_declared_topology(const std::string& text, const std::string& source) {
  DeclaredTopology t;
  t.source = source;
  struct Row {
    int line;
    std::string name, nodes, switches;
    bool has_nodes = false, has_switches = false;
    double speed = 0;
  };
  std::vector<Row> rows;
  std::istringstream in(text);
  std::string raw, line;
  int number = 0, first = 0;
  auto fail = [&](int at, const std::string& what) -> InputError {
    return InputError(cat(source, ":", at, ": ", what));
  };
  while (std::getline(in, raw)) {
    ++number;
    if (line.empty()) first = number;
    const size_t hash = raw.find('#');
    if (hash != std::string::npos) raw.erase(hash);
    while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.pop_back();
    if (!raw.empty() && raw.back() == '\\') {
      raw.pop_back();
      line += raw + " ";
      continue;
    }
    line += raw;
    std::istringstream words(line);
    line.clear();
    std::string word;
    Row r;
    r.line = first;
    bool any = false;
    while (words >> word) {
      const size_t eq = word.find('=');
      if (eq == std::string::npos || eq == 0)
        throw fail(first, cat("'", shown(word), "' is not KEY=VALUE (SwitchName=s0 Nodes=n[0-3])"));
      const std::string key = lower(word.substr(0, eq)), value = word.substr(eq + 1);
      any = true;
      if (key == "switchname") r.name = value;
      else if (key == "nodes") r.nodes = value, r.has_nodes = true;
      else if (key == "switches") r.switches = value, r.has_switches = true;
      else if (key == "linkspeed") {
        char* end = nullptr;
        r.speed = std::strtod(value.c_str(), &end);
        if (value.empty() || *end || !(r.speed >= 0) || r.speed > 1e18)
          throw fail(first, cat("LinkSpeed='", value, "' is not a number"));
      }
    }
    if (!any) continue;
    if (r.name.empty()) throw fail(first, "a line without SwitchName=");
    if (!r.has_nodes && !r.has_switches) throw fail(first, cat("switch ", r.name, " holds neither Nodes= nor Switches="));
    rows.push_back(r);
  }
  if (!line.empty()) throw fail(first, "the last line ends with '\\', joining nothing");
  if (rows.empty()) throw InputError(cat(source, ": no switch (SwitchName=... Nodes=... lines)"));
  if (rows.size() > kMaxSwitches) throw InputError(cat(source, ": more than ", kMaxSwitches, " switches"));
  std::map<std::string, int> index;
  for (const Row& r : rows) {
    if (index.count(r.name))
      throw fail(r.line, cat("switch ", r.name, " declared twice (first at line ", rows[size_t(index[r.name])].line, ")"));
    index[r.name] = int(t.switches.size());
    DeclaredSwitch s;
    s.name = r.name;
    s.line = r.line;
    s.link_speed = r.speed;
    t.switches.push_back(s);
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    DeclaredSwitch& s = t.switches[i];
    try {
      if (r.has_switches)
        for (const std::string& c : expand_hostlist(r.switches)) {
          auto it = index.find(c);
          if (it == index.end()) throw fail(r.line, cat("switch ", r.name, " holds switch ", c, ", declared nowhere"));
          DeclaredSwitch& child = t.switches[size_t(it->second)];
          if (child.parent >= 0)
            throw fail(r.line, cat("switch ", c, " is held by ", r.name, " and by ", t.switches[size_t(child.parent)].name));
          if (it->second == int(i)) throw fail(r.line, cat("switch ", c, " holds itself"));
          child.parent = int(i);
          s.switches.push_back(it->second);
        }
      if (r.has_nodes && !r.has_switches) {
        for (std::string& h : expand_hostlist(r.nodes)) {
          auto [it, fresh] = t.by_name.emplace(h, int(i));
          if (!fresh) throw fail(r.line, cat("host ", h, " is under switch ", r.name, " and switch ", rows[size_t(it->second)].name));
          t.by_short_name.emplace(short_name(h), int(i));  // the first declared of a short name
          s.hosts.push_back(std::move(h));
        }
        if (s.hosts.empty()) throw fail(r.line, cat("switch ", r.name, ": Nodes= names no host"));
      }
    } catch (const InputError& e) {
      const std::string msg = e.what();
      if (msg.rfind(source + ":", 0) == 0) throw;
      throw fail(r.line, msg);
    }
  }
  // A cycle: a switch that reaches itself going up; a tree deeper than
  // any site's (which also bounds this walk).
  for (size_t i = 0; i < t.switches.size(); ++i) {
    int at = t.switches[i].parent;
    for (size_t steps = 0; at >= 0; ++steps, at = t.switches[size_t(at)].parent) {
      if (at == int(i))
        throw fail(t.switches[i].line, cat("switch ", t.switches[i].name, " holds itself through other switches"));
      if (steps >= kMaxLevels)
        throw fail(t.switches[i].line, cat("switch ", t.switches[i].name, " is more than ", kMaxLevels, " levels down"));
    }
  }
  // scontrol's upper switches name every host below them: the same hosts.
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!(rows[i].has_nodes && rows[i].has_switches)) continue;
    std::vector<std::string> said;
    try {
      said = expand_hostlist(rows[i].nodes);
    } catch (const InputError& e) {
      throw fail(rows[i].line, e.what());
    }
    std::vector<std::string> below = t.hosts_below(int(i));
    std::sort(said.begin(), said.end());
    std::sort(below.begin(), below.end());
    if (said != below)
      throw fail(rows[i].line, cat("switch ", rows[i].name, ": Nodes= (", said.size(), " hosts) are not the hosts of its switches (",
                                   below.size(), ")"));
  }
  return t;
}

DeclaredTopology read_declared_topology(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(cat(path, ": cannot read the topology file"));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_declared_topology(ss.str(), path);
}

}  // namespace hetcoll

namespace hetcoll {

int DeclaredLayout::levels() const {
  int l = 0;
  for (const DeclaredGroup& g : groups) l = std::max(l, g.level + 1);
  return l;
}

DeclaredLayout place_declared(const DeclaredTopology& t, const std::vector<std::string>& hosts,
                              const std::vector<int>& subnet_of) {
  DeclaredLayout out;
  const size_t n = hosts.size(), ns = t.switches.size();
  // Per switch, the job's hosts below it.
  std::vector<std::vector<int>> below(ns);
  std::vector<std::string> missing;
  for (size_t h = 0; h < n; ++h) {
    int s = t.switch_of(hosts[h]);
    if (s < 0) missing.push_back(hosts[h]);
    for (; s >= 0; s = t.switches[size_t(s)].parent) below[size_t(s)].push_back(int(h));
  }
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < std::min<size_t>(missing.size(), 5); ++i) list += (i ? ", " : "") + missing[i];
    if (missing.size() > 5) list += cat(" and ", missing.size() - 5, " more");
    out.notes.push_back({true, cat(missing.size(), " of the job's ", n, " hosts in no declared switch (", list,
                                   "): placed by measurement alone")});
  }
  int subnets = 0;
  for (int s : subnet_of) subnets = std::max(subnets, s + 1);
  std::vector<int> subnet_size(size_t(subnets), 0);
  for (int s : subnet_of) ++subnet_size[size_t(s)];
  // Which switches are groups: top-down (parents first), so that `within`
  // points back.
  std::vector<int> order;
  for (size_t s = 0; s < ns; ++s)
    if (t.switches[s].parent < 0) order.push_back(int(s));
  for (size_t i = 0; i < order.size(); ++i)
    for (int c : t.switches[size_t(order[i])].switches) order.push_back(c);
  std::vector<int> group_of_switch(ns, -1);
  for (int s : order) {
    const DeclaredSwitch& sw = t.switches[size_t(s)];
    const std::vector<int>& mine = below[size_t(s)];
    // The nearest group above (a switch left out passes its parent's on).
    int within = -1;
    for (int a = sw.parent; a >= 0 && within < 0; a = t.switches[size_t(a)].parent) within = group_of_switch[size_t(a)];
    if (mine.empty()) continue;
    // The same hosts as a switch it holds: that switch is the level.
    bool same_as_child = false;
    for (int c : sw.switches) same_as_child = same_as_child || below[size_t(c)].size() == mine.size();
    if (same_as_child) continue;
    std::vector<int> count(size_t(subnets), 0);
    for (int h : mine) ++count[size_t(subnet_of[size_t(h)])];
    int touched = 0, whole = 0, subnet = -1;
    for (int k = 0; k < subnets; ++k)
      if (count[size_t(k)] > 0) {
        ++touched;
        whole += count[size_t(k)] == subnet_size[size_t(k)];
        subnet = k;
      }
    if (touched == 1 && count[size_t(subnet)] < subnet_size[size_t(subnet)]) {
      DeclaredGroup g;
      g.sw = s;
      g.subnet = subnet;
      g.hosts = mine;
      std::sort(g.hosts.begin(), g.hosts.end());
      if (within >= 0 && out.groups[size_t(within)].subnet != subnet) within = -1;
      g.within = within;
      group_of_switch[size_t(s)] = int(out.groups.size());
      out.groups.push_back(std::move(g));
    } else if (touched > 1 && whole < touched) {
      std::string list;
      for (int k = 0, said = 0; k < subnets; ++k)
        if (count[size_t(k)] > 0) list += cat(said++ ? ", " : "", k, " (", count[size_t(k)], " of ", subnet_size[size_t(k)], ")");
      out.notes.push_back({true, cat("switch ", sw.name, " (", t.source, ":", sw.line, ") holds hosts of subnets ", list,
                                     " that latency tells apart, not all of them: not one switch by latency, left out")});
    }
    // One whole subnet or whole subnets: the subnet's switch or above it.
  }
  // Levels from the bottom.
  for (size_t i = out.groups.size(); i-- > 0;) {
    const DeclaredGroup& g = out.groups[i];
    if (g.within >= 0) out.groups[size_t(g.within)].level = std::max(out.groups[size_t(g.within)].level, g.level + 1);
  }
  return out;
}

}  // namespace hetcoll
