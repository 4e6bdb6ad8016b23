// A declared topology (model/declared_topology.hpp): Slurm's topology.conf
// and scontrol's form parsed to the tree it names, hostlists expanded as
// Slurm does, every malformed declaration refused with its file and line,
// and the declaration laid over a job's hosts and latency subnets.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/declared_topology.hpp"
#include "model/profile.hpp"
#include "model/profile_model.hpp"
#include "util/error.hpp"
#include "../support/sample_profile.hpp"

using namespace hetcoll;

namespace {

std::vector<std::string> names(const std::string& prefix, int from, int to) {
  std::vector<std::string> out;
  for (int i = from; i <= to; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

std::string refusal(const std::string& text) {
  try {
    parse_declared_topology(text, "topo.conf");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Hostlist, ExpandsAsSlurmDoes) {
  EXPECT_EQ(expand_hostlist("n[0-3]"), names("n", 0, 3));
  EXPECT_EQ(expand_hostlist("n[08-11]"), (std::vector<std::string>{"n08", "n09", "n10", "n11"}));
  EXPECT_EQ(expand_hostlist("a,b[1,3-4],c"), (std::vector<std::string>{"a", "b1", "b3", "b4", "c"}));
  EXPECT_EQ(expand_hostlist("r[1-2]n[1-2]"), (std::vector<std::string>{"r1n1", "r1n2", "r2n1", "r2n2"}));
  EXPECT_EQ(expand_hostlist("gpu[1-2]-ib"), (std::vector<std::string>{"gpu1-ib", "gpu2-ib"}));
  EXPECT_EQ(expand_hostlist(" x , y "), (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(expand_hostlist("n[98-101]"), (std::vector<std::string>{"n98", "n99", "n100", "n101"}));
  EXPECT_TRUE(expand_hostlist("").empty());
}

TEST(Hostlist, RefusesWhatDoesNotParse) {
  for (const char* bad : {"n[0-3", "n0-3]", "n[3-1]", "n[a-b]", "n[]", "n[[1]]", "n[0-99999999]", "n[0-1023]m[0-1023]x[0-3]"})
    EXPECT_THROW(expand_hostlist(bad), InputError) << bad;
}

TEST(DeclaredTopology, ReadsTopologyConf) {
  const DeclaredTopology t = parse_declared_topology(
      "# a fat tree of two pods\n"
      "SwitchName=r0 Nodes=n[0-3] LinkSpeed=10\n"
      "switchname=r1 nodes=n[4-7]   # keys in any case\n"
      "SwitchName=r2 \\\n  Nodes=n[8-11]\n"
      "SwitchName=pod0 Switches=r[0-1]\n"
      "SwitchName=pod1 Switches=r2\n"
      "\n"
      "SwitchName=top Switches=pod[0-1]\n",
      "topo.conf");
  ASSERT_EQ(t.switches.size(), 6u);
  EXPECT_EQ(t.switches[0].link_speed, 10);
  EXPECT_EQ(t.switches[2].line, 4);  // the line a continued declaration starts on
  EXPECT_EQ(t.switch_of("n5"), 1);
  EXPECT_EQ(t.switch_of("n10.cluster.example"), 2);  // without the domain
  EXPECT_EQ(t.switch_of("m0"), -1);
  EXPECT_EQ(t.switches[1].parent, 3);
  EXPECT_EQ(t.switches[5].parent, -1);
  EXPECT_EQ(t.level(0), 0);
  EXPECT_EQ(t.level(3), 1);
  EXPECT_EQ(t.level(5), 2);
  EXPECT_EQ(t.hosts_below(5).size(), 12u);
}

TEST(DeclaredTopology, ReadsScontrolShowTopology) {
  // scontrol prints every switch with its level, and an upper switch's
  // Nodes= as all hosts below it.
  const DeclaredTopology t = parse_declared_topology(
      "SwitchName=s0 Level=0 LinkSpeed=1 Nodes=dev[0-1]\n"
      "SwitchName=s1 Level=0 LinkSpeed=1 Nodes=dev[2-3]\n"
      "SwitchName=s2 Level=1 LinkSpeed=1 Nodes=dev[0-3] Switches=s[0-1]\n",
      "scontrol");
  ASSERT_EQ(t.switches.size(), 3u);
  EXPECT_TRUE(t.switches[2].hosts.empty());
  EXPECT_EQ(t.switches[2].switches, (std::vector<int>{0, 1}));
  EXPECT_NE(refusal("SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=b\nSwitchName=s2 Nodes=a,c Switches=s[0-1]\n")
                .find("not the hosts of its switches"),
            std::string::npos);
}

TEST(DeclaredTopology, RefusesWithFileAndLine) {
  struct Case {
    const char* text;
    const char* says;
  };
  for (const Case& c : std::vector<Case>{
           {"SwitchName=s0 Nodes=a\nSwitchName=s0 Nodes=b\n", "topo.conf:2: switch s0 declared twice"},
           {"SwitchName=s0 Switches=s9\n", "topo.conf:1: switch s0 holds switch s9, declared nowhere"},
           {"SwitchName=s0 Nodes=a\nSwitchName=s1 Nodes=a\n", "topo.conf:2: host a is under switch s1 and switch s0"},
           {"SwitchName=s0 Switches=s0\n", "holds itself"},
           {"SwitchName=s0 Switches=s1\nSwitchName=s1 Switches=s0\n", "holds itself"},
           {"SwitchName=s0 Switches=s2\nSwitchName=s1 Switches=s2\nSwitchName=s2 Nodes=a\n", "is held by"},
           {"Nodes=a\n", "topo.conf:1: a line without SwitchName="},
           {"SwitchName=s0\n", "holds neither"},
           {"SwitchName=s0 Nodes\n", "is not KEY=VALUE"},
           {"SwitchName=s0 Nodes=a LinkSpeed=fast\n", "LinkSpeed='fast'"},
           {"SwitchName=s0 Nodes=n[1-\n", "topo.conf:1: hostlist"},
           {"# nothing\n\n", "no switch"},
           {"SwitchName=s0 Nodes=a \\\n", "joining nothing"},
       }) {
    const std::string msg = refusal(c.text);
    EXPECT_NE(msg.find(c.says), std::string::npos) << c.text << " -> '" << msg << "'";
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
  }
  EXPECT_THROW(read_declared_topology("/nonexistent/topology.conf"), InputError);
  // A chain of 70 switches: deeper than any site's tree (and the walk bounded).
  std::string chain = "SwitchName=s0 Nodes=a\n";
  for (int k = 1; k < 70; ++k) chain += "SwitchName=s" + std::to_string(k) + " Switches=s" + std::to_string(k - 1) + "\n";
  EXPECT_NE(refusal(chain).find("more than 64 levels down"), std::string::npos) << refusal(chain);
}

TEST(DeclaredTopology, LaidOverTheJob) {
  const DeclaredTopology t = parse_declared_topology(
      "SwitchName=r0 Nodes=n[0-3]\nSwitchName=r1 Nodes=n[4-7]\nSwitchName=r2 Nodes=n[8-11]\n"
      "SwitchName=r3 Nodes=n[12-15]\nSwitchName=pod0 Switches=r[0-1]\nSwitchName=pod1 Switches=r[2-3]\n"
      "SwitchName=top Switches=pod[0-1]\nSwitchName=idle Nodes=x[0-9]\n",
      "topo.conf");
  // One subnet of 16: pods and racks inside it, top the subnet's switch.
  {
    const DeclaredLayout l = place_declared(t, names("n", 0, 15), std::vector<int>(16, 0));
    ASSERT_EQ(l.groups.size(), 6u);
    EXPECT_TRUE(l.notes.empty());
    EXPECT_EQ(l.levels(), 2);
    EXPECT_EQ(t.switches[size_t(l.groups[0].sw)].name, "pod0");
    EXPECT_EQ(l.groups[0].level, 1);
    EXPECT_EQ(l.groups[0].within, -1);
    EXPECT_EQ(l.groups[0].hosts.size(), 8u);
    for (size_t i = 2; i < 6; ++i) {
      EXPECT_EQ(l.groups[i].level, 0);
      EXPECT_EQ(l.groups[i].hosts.size(), 4u);
      EXPECT_EQ(l.groups[size_t(l.groups[i].within)].level, 1);
    }
  }
  // Two subnets that are the pods: the pods are the subnets' switches,
  // the racks inside them.
  {
    std::vector<int> sub(16, 0);
    for (int h = 8; h < 16; ++h) sub[size_t(h)] = 1;
    const DeclaredLayout l = place_declared(t, names("n", 0, 15), sub);
    ASSERT_EQ(l.groups.size(), 4u);
    for (const DeclaredGroup& g : l.groups) {
      EXPECT_EQ(g.within, -1);
      EXPECT_EQ(g.subnet, g.hosts[0] >= 8 ? 1 : 0);
    }
  }
  // Subnets across the racks: latency disagrees with the declaration; a
  // job host in no switch; only 2 hosts of a rack in the job (still a rack).
  {
    std::vector<std::string> hosts = names("n", 0, 9);
    hosts.push_back("stranger");
    std::vector<int> sub(11, 0);
    sub[2] = sub[3] = sub[4] = 1;
    const DeclaredLayout l = place_declared(t, hosts, sub);
    int disagreements = 0;
    for (const DeclaredNote& n : l.notes) disagreements += n.disagrees;
    EXPECT_GE(disagreements, 2);
    bool names_stranger = false, names_r0 = false;
    for (const DeclaredNote& n : l.notes) {
      names_stranger = names_stranger || n.text.find("stranger") != std::string::npos;
      names_r0 = names_r0 || n.text.find("switch r0 ") != std::string::npos;
    }
    EXPECT_TRUE(names_stranger);
    EXPECT_TRUE(names_r0);
    for (const DeclaredGroup& g : l.groups) EXPECT_NE(t.switches[size_t(g.sw)].name, "r0");
  }
}

TEST(DeclaredTopology, NestedRacksBecomeTheProfilesTree) {
  // 16 hosts in two subnets of 8; in subnet 0 racks of 2 inside pods of 4.
  Profile p = hetcoll::testing::sample_profile(16, false);
  std::vector<RackProfile> racks;
  for (int pod = 0; pod < 2; ++pod) {
    RackProfile r;
    r.name = "pod" + std::to_string(pod);
    for (int h = 4 * pod; h < 4 * pod + 4; ++h) r.hosts.push_back(h);
    r.up = r.down = {1e9, 0, "test"};
    racks.push_back(r);
  }
  for (int k = 0; k < 4; ++k) {
    RackProfile r;
    r.name = "rack" + std::to_string(k);
    r.within = k / 2;
    r.hosts = {2 * k, 2 * k + 1};
    r.up = r.down = {1e6, 0, "test"};  // 1 MB/s: slower than anything else
    racks.push_back(r);
  }
  Profile q = p;
  q.version = 2;
  q.network = network_from_classes(p, racks);
  int pod0 = -1, rack1 = -1;
  for (size_t i = 0; i < q.network.size(); ++i) {
    if (q.network[i].name == "pod0") pod0 = int(i);
    if (q.network[i].name == "rack1") rack1 = int(i);
  }
  ASSERT_GE(pod0, 0);
  ASSERT_GE(rack1, 0);
  EXPECT_EQ(q.network[size_t(rack1)].parent, pod0);
  for (const NodeProfile& n : q.network) {
    if (n.host == 3) {
      EXPECT_EQ(n.parent, rack1);
    }
  }
  // What the probe writes, the runtime reads and routes: a message leaving
  // a rack takes its link's time; one inside it does not.
  const Profile back = parse_profile(profile_to_json(q));
  const ProfileModel m(back, "declared");
  const uint64_t mib = uint64_t(1) << 20;
  // (one rank per host)
  EXPECT_GT(m.message(0, 2, mib).wire, 0.9 * double(mib) / 1e6);  // out of rack 0
  EXPECT_GT(m.message(0, 5, mib).wire, 0.9 * double(mib) / 1e6);  // out of pod 0
  EXPECT_LT(m.message(0, 1, mib).wire, 0.1 * double(mib) / 1e6);  // inside rack 0
}
