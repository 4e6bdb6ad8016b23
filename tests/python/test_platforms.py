"""Generated SimGrid platforms (testbed/smpi/generate.py) and truth.py's tree
(issue 39): for every family, a few small platforms from a fresh seed; the
tree each was meant to have must be the one testbed/smpi/truth.py derives
from its routes, and truth.py's --tree check must accept a profile network
built from that tree and reject one with a host moved or a link 20 % off.
Pure Python (no SimGrid), a few seconds.

    pytest tests/python/test_platforms.py -s      # prints the seed
    HETCOLL_PLATFORM_SEED=1234 pytest tests/python/test_platforms.py
"""
import copy
import importlib.util
import json
import os
import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SMPI = ROOT / "testbed" / "smpi"
SEED = int(os.environ.get("HETCOLL_PLATFORM_SEED") or random.SystemRandom().randrange(1 << 31))
PER_FAMILY = 3


def _module(name):
    spec = importlib.util.spec_from_file_location("smpi_" + name, SMPI / (name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


truth = _module("truth")
generate = _module("generate")
FAMILIES = list(generate.FAMILIES)


@pytest.fixture(autouse=True)
def _say_seed():
    print("HETCOLL_PLATFORM_SEED=%d" % SEED)


def _platforms(family, tmp_path):
    """PER_FAMILY small platforms of the family, written to tmp_path: (generated, base path)."""
    rng = random.Random("%d %s" % (SEED, family))
    out = []
    for _ in range(PER_FAMILY):
        seed = rng.randrange(1 << 20)
        p = generate.generate(family, seed, rng.randint(8, 24))
        out.append((p, generate.write(p, str(tmp_path))))
    return out


def _profile(tree):
    """A version 2 profile whose network is the tree, as the probe writes one."""
    return {"format": "hetcoll-profile", "version": 2, "hosts": [{"name": h} for h in tree["hosts"]],
            "network": truth.to_profile_network(tree)}


def _check(truth_tree, profile):
    return truth.check_tree(truth_tree, truth.profile_tree(profile), 0.10)[0]


def _hosts_under(net):
    under = [set() for _ in net]
    for k in range(len(net) - 1, -1, -1):
        if "host" in net[k]:
            under[k].add(net[k]["host"])
        if net[k]["parent"] >= 0:
            under[net[k]["parent"]] |= under[k]
    return under


def _reparent(net, leaf, parent):
    """The network with node leaf (a host) moved under node parent, parents still first."""
    net = copy.deepcopy(net)
    node = net.pop(leaf)
    for nd in net:
        if nd["parent"] > leaf:
            nd["parent"] -= 1
    node["parent"] = parent - (parent > leaf)
    net.append(node)
    return net


def _scale(node, factor):
    for k in ("up", "down", "both"):
        if k in node:
            node[k]["bandwidth"] *= factor


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_tree_is_the_routes_tree(family, tmp_path):
    for p, base in _platforms(family, tmp_path):
        with open(base + ".tree.json") as f:
            meant = json.load(f)
        where = "%s (HETCOLL_PLATFORM_SEED=%d)" % (p["name"], SEED)
        assert meant["platform"] == p["name"] and meant["family"] == family and meant["params"]["hosts"] > 0
        with open(base + ".hosts") as f:
            assert f.read().split() == meant["hosts"], where
        nodes = meant["nodes"]
        assert nodes[0]["parent"] == -1 and all(0 <= nd["parent"] < k for k, nd in enumerate(nodes) if k), where
        assert sorted(nd["host"] for nd in nodes if "host" in nd) == list(range(len(meant["hosts"]))), where
        # every host computes, and the XML is what truth.py reads
        root = ET.parse(base + ".xml").getroot()
        hosts = root.iter("host")
        assert all(h.get("speed") for h in hosts) and all(c.get("speed") for c in root.iter("cluster")), where
        derived = truth.tree(base + ".xml")
        assert derived["hosts"] == meant["hosts"], where
        assert truth.diff_trees(meant, derived) == [], where
        # and the comparison is not blind: a link's bandwidth or two hosts' places changed show
        other = copy.deepcopy(meant)
        leaves = [nd for nd in other["nodes"] if "host" in nd]
        leaves[0]["up"]["bandwidth"] *= 1.001
        assert truth.diff_trees(other, derived), where
        apart = [nd for nd in leaves if nd["parent"] != leaves[0]["parent"]]
        if apart:
            other = copy.deepcopy(meant)
            a, b = [nd for nd in other["nodes"] if nd["name"] in (leaves[0]["name"], apart[0]["name"])]
            a["host"], b["host"] = b["host"], a["host"]
            assert truth.diff_trees(other, derived), where


@pytest.mark.parametrize("family", FAMILIES)
def test_tree_check_accepts_the_truth_and_rejects_a_moved_host_or_a_link_off(family, tmp_path, capsys):
    rng = random.Random("%d %s check" % (SEED, family))
    for p, base in _platforms(family, tmp_path):
        where = "%s (HETCOLL_PLATFORM_SEED=%d)" % (p["name"], SEED)
        tt = truth.tree(base + ".xml")
        prof = _profile(tt)
        path = str(tmp_path / (p["name"] + ".profile.json"))
        with open(path, "w") as f:
            json.dump(prof, f)
        capsys.readouterr()
        assert truth.main([base + ".xml", path, "--tree"]) == 0, where + capsys.readouterr().out
        assert "PASS" in capsys.readouterr().out
        net = prof["network"]
        under = _hosts_under(net)
        names = tt["hosts"]

        # a host moved to another switch
        racks = [k for k, nd in enumerate(net) if "host" not in nd and any(
            m["parent"] == k and "host" in m for m in net)]
        leaves = [k for k, nd in enumerate(net) if "host" in nd]
        if len(racks) > 1:
            leaf = rng.choice(leaves)
            target = rng.choice([k for k in racks if k != net[leaf]["parent"]])
            moved = dict(prof, network=_reparent(net, leaf, target))
            bad = _check(tt, moved)
            # The moved host, or one it left (a rack of two: the two differ in
            # their groups alike, and the check names whichever it meets first).
            left = [names[m["host"]] for m in net if m.get("parent") == net[leaf]["parent"] and "host" in m]
            assert any(line.startswith("host %s:" % h) for h in left for line in bad), (where, bad)
        else:  # one switch: two hosts of different NICs swapped
            rate = {nd["host"]: nd["up"]["bandwidth"] for nd in net if "host" in nd}
            a = min(rate, key=rate.get)
            b = max(rate, key=rate.get)
            assert rate[a] < rate[b], where  # mixed_nics' first subnet always mixes
            swapped = copy.deepcopy(prof)
            for nd in swapped["network"]:
                if nd.get("host") in (a, b):
                    nd["host"] = b if nd["host"] == a else a
            assert _check(tt, swapped), where

        # a NIC 20 % slower, one that limits what its host exchanges with the others (a NIC faster than the
        # rest of the platform can take or give does not show)
        view = truth._TreeView(tt, names[0])
        leaf = rng.choice([k for k in leaves if all(view.flow({names[net[k]["host"]]}, w)[1] for w in ("out", "in"))])
        off = copy.deepcopy(prof)
        _scale(off["network"][leaf], 0.8)
        bad = _check(tt, off)
        assert any("{%s}" % names[net[leaf]["host"]] in line for line in bad), (where, bad)

        # a limiting uplink 20 % off fails; a link that never limits may be anything above
        groups = [(view.group[k], view.cut_edges[k]) for k in view.cut_edges
                  if 1 < len(view.group[k]) < len(names) - 1]
        for group, _ in groups:
            edges = [k for k, u in enumerate(under) if {names[h] for h in u} in (set(group), set(names) - set(group))
                     and k > 0]
            limited = [view.flow(group, way)[1] for way in ("out", "in")]
            off = copy.deepcopy(prof)
            for k in edges:
                _scale(off["network"][k], 0.8 if any(limited) else 4.0)
            bad = _check(tt, off)
            if any(limited):
                assert any(truth._TreeView.describe(group) in line for line in bad), (where, sorted(group), bad)
            else:
                assert bad == [], (where, sorted(group), bad)
        # a switch's fabric (a rack's backbone: twice its NICs, as much as its ports can bring it) may be any
        # faster; at 0.4 of it, below what its hosts' NICs alone move, it limits
        for factor in (4.0, 0.4):
            changed = copy.deepcopy(prof)
            for nd in changed["network"]:
                if "fabric" in nd:
                    nd["fabric"]["bandwidth"] *= factor
            bad = _check(tt, changed)
            if factor > 1 or not any("fabric" in nd for nd in net):
                assert bad == [], (where, factor, bad)
            else:
                assert any(line.startswith("switch of") for line in bad), (where, factor, bad)

        # one link both ways where the platform has one link each way (or the reverse), where it limits
        for group, _ in groups:
            if all(view.flow(group, way)[1] for way in ("out", "in")):
                flipped = copy.deepcopy(prof)
                for k, u in enumerate(under):
                    if k and {names[h] for h in u} in (set(group), set(names) - set(group)):
                        nd = flipped["network"][k]
                        if "both" in nd:
                            nd["up"] = nd["down"] = nd.pop("both")
                        else:
                            nd["both"] = nd.pop("up")
                            nd.pop("down")
                bad = _check(tt, flipped)
                assert any("both directions" in line for line in bad), (where, sorted(group), bad)
                break


def test_generation_is_deterministic(tmp_path):
    rng = random.Random(SEED)
    for family in FAMILIES:
        seed = rng.randrange(1 << 20)
        a = generate.generate(family, seed)
        assert a == generate.generate(family, seed)
        assert a == generate.generate(family, seed, len(a["hosts"]))
        assert a["name"].startswith(family + "_") and a["name"].endswith("_%dh_s%d" % (len(a["hosts"]), seed))
        assert 8 <= len(a["hosts"]) <= 128


def test_generate_all_writes_every_family_and_checks(tmp_path):
    out = subprocess.run([sys.executable, str(SMPI / "generate.py"), "--all", "--seed", str(SEED % 1000),
                          "--count", str(len(FAMILIES)), "--max-hosts", "12", "-o", str(tmp_path), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    written = sorted(p.name for p in tmp_path.iterdir())
    assert len(written) == 4 * len(FAMILIES)  # .xml, .hosts, .tree.json, .topology.conf
    assert {f for f in FAMILIES for n in written if n.startswith(f + "_") and n.endswith(".xml")} == set(FAMILIES)
    listed = subprocess.run([sys.executable, str(SMPI / "generate.py"), "--list"], capture_output=True, text=True)
    assert [ln.split()[0] for ln in listed.stdout.splitlines()] == FAMILIES


@pytest.mark.parametrize("platform", sorted(p.stem for p in (SMPI / "platforms").glob("*.xml")))
def test_the_shipped_platforms_are_trees(platform):
    xml = str(SMPI / "platforms" / (platform + ".xml"))
    tt = truth.tree(xml)
    assert len(tt["hosts"]) == len(dict.fromkeys(truth.load(xml).hosts))
    assert truth.check_tree(tt, truth.profile_tree(_profile(tt)))[0] == []
    if platform in ("two_subnets", "cluster64_4subnets"):  # a root, one switch per subnet behind its shared uplink
        kids = [nd for nd in tt["nodes"] if nd["parent"] == 0]
        assert all(nd["shared"] and nd["up"]["bandwidth"] == 12.5e6 and "fabric" in nd for nd in kids)
        assert len(kids) == {"two_subnets": 2, "cluster64_4subnets": 4}[platform]


def test_a_profile_network_from_a_tree_is_valid():
    jsonschema = pytest.importorskip("jsonschema")
    with open(ROOT / "docs" / "profile.schema.json") as f:
        schema = json.load(f)
    sub = dict(schema["properties"]["network"], **{"$defs": schema["$defs"]})
    p = generate.generate("wan_sites", SEED % 1000, 12)
    jsonschema.validate(truth.to_profile_network(p["tree"]), sub)


def test_routes_that_are_no_tree_are_refused(tmp_path):
    # link X on the routes A-B and C-D only: no edge and no switch of a tree
    clusters = "".join('<cluster id="%s" prefix="%s" suffix="" radical="0-1" speed="1Gf" bw="1Gbps" lat="1us" '
                       'router_id="%s_r"/>' % (c, c.lower(), c) for c in "ABCD")
    links = '<link id="X" bandwidth="1Gbps" latency="1us"/>' + "".join(
        '<link id="%s_up" bandwidth="1Gbps" latency="1us"/>' % c for c in "ABCD")
    routes = ""
    for a, b in ("AB", "AC", "AD", "BC", "BD", "CD"):
        extra = '<link_ctn id="X"/>' if a + b in ("AB", "CD") else ""
        routes += ('<zoneRoute src="%s" dst="%s" gw_src="%s_r" gw_dst="%s_r"><link_ctn id="%s_up"/>%s'
                   '<link_ctn id="%s_up"/></zoneRoute>' % (a, b, a, b, a, extra, b))
    xml = tmp_path / "crossed.xml"
    xml.write_text('<?xml version="1.0"?><platform version="4.1"><zone id="z" routing="Full">%s%s%s</zone>'
                   '</platform>' % (clusters, links, routes))
    with pytest.raises(ValueError, match="not a tree"):
        truth.tree(str(xml))


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_topology_conf_declares_the_platforms_switches(family, tmp_path):
    """NAME.topology.conf (for hetcoll probe --topology): every host under
    one switch, a switch's hosts the hosts of one leaf of the tree, and the
    probe's own parser takes it (hetcoll-probe --check)."""
    probe = ROOT / "build" / "py" / "hetcoll-probe"
    for p, base in _platforms(family, tmp_path):
        where = "%s (HETCOLL_PLATFORM_SEED=%d)" % (p["name"], SEED)
        with open(base + ".tree.json") as f:
            meant = json.load(f)
        parent = {meant["hosts"][nd["host"]]: nd["parent"] for nd in meant["nodes"] if "host" in nd}
        declared = []
        for line in open(base + ".topology.conf").read().splitlines():
            if line.startswith("#") or not line.strip():
                continue
            keys = dict(w.split("=", 1) for w in line.split())
            if "Nodes" in keys:
                declared.append(keys["Nodes"].split(","))
        assert sorted(h for hs in declared for h in hs) == sorted(meant["hosts"]), where
        for hs in declared:
            assert len({parent[h] for h in hs}) == 1, where + ": %s are not one leaf's" % hs
        if probe.exists():
            out = subprocess.run([str(probe), "--check", "--topology", base + ".topology.conf", "-o",
                                  str(tmp_path / "x.json")], capture_output=True, text=True)
            assert out.returncode == 0, where + ": " + out.stderr
