"""testbed/netns/cluster.py: topology files are checked before anything is
built (no root needed for these), and the delay forwarder compiles."""
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def cluster():
    spec = importlib.util.spec_from_file_location("netns_cluster", ROOT / "testbed/netns/cluster.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["netns_cluster"] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_the_shipped_topologies_load():
    c = cluster()
    t = c.load_topology(str(ROOT / "testbed/netns/topologies/demo8.toml"))
    assert [s.name for s in t.subnets] == ["A", "B", "C"]
    assert len(t.hosts) == 8 and sum(h.ranks for h in t.hosts) == 11
    assert [h.name for h in t.hosts if h.cpu < 1] == ["b2"]
    assert t.delay[1][2] == pytest.approx(3e-3) and t.delay[2][1] == pytest.approx(3e-3)
    assert t.subnets[2].uplink == 50e6 and t.address(t.hosts[3]) == "10.77.1.1"
    small = c.load_topology(str(ROOT / "testbed/netns/topologies/small4.toml"))
    assert len(small.hosts) == 4 and len(small.subnets) == 2
    racks = c.load_topology(str(ROOT / "testbed/netns/topologies/racks8.toml"))
    assert len(racks.subnets) == 1 and racks.subnets[0].racks[3] == ["r3a", "r3b"]
    assert racks.subnets[0].rack_uplink == 100e6


@pytest.mark.parametrize("text, why", [
    ('prefix = "8.8"\n[[subnet]]\nhosts=["a"]', "private range"),
    ('[[subnet]]\nhosts=["a","a"]', "used twice"),
    ('[[subnet]]\nhosts=["A0"]', "lower-case"),
    ('[[subnet]]\nhosts=["a; rm -rf /"]', "lower-case"),
    ('[[subnet]]\nhosts=["a"]\nrate="fast"', "not a rate"),
    ('[[subnet]]\nhosts=["a"]\nrate="1000gbit"', "outside"),
    ('[[subnet]]\nname="A"\nhosts=["a"]\n[[subnet]]\nname="B"\nhosts=["b"]\n[delay]\n"A-C"="1ms"', "two different subnet"),
    ('[[subnet]]\nname="A"\nhosts=["a"]\n[[subnet]]\nname="B"\nhosts=["b"]\n[delay]\n"A-B"="5s"', "more than 1 s"),
    ('[[subnet]]\nhosts=["a"]\n[ranks]\nz = 2', "unknown host"),
    ('[[subnet]]\nhosts=["a"]\n[ranks]\na = 0', "1 … 64"),
    ('[[subnet]]\nhosts=["a"]\n[slow]\na = 0.001', "0.05 … 1"),
    ('[[subnet]]\nhosts=["a"]\nbogus = 1', "unknown key"),
    ('hosts = 3', "unknown key"),
    ('[[subnet]]\nhosts = [', "not valid TOML"),
    ('', "at least one [[subnet]]"),
    ('[[subnet]]\nhosts=["a","b"]\nracks=[["a"]]\nrack_uplink="1mbit"', "each of its hosts once"),
    ('[[subnet]]\nhosts=["a","b"]\nracks=[["a"],["b","a"]]\nrack_uplink="1mbit"', "each of its hosts once"),
    ('[[subnet]]\nhosts=["a","b"]\nracks=[["a"],["b"]]', "need a 'rack_uplink'"),
    ('[[subnet]]\nhosts=["a","b"]\nrack_uplink="1mbit"', "without 'racks'"),
    ('[[subnet]]\nhosts=["a","b"]\nracks=[["a"],[]]\nrack_uplink="1mbit"', "lists of host names"),
])
def test_bad_topologies_are_refused_with_a_reason(tmp_path, text, why):
    c = cluster()
    f = tmp_path / "t.toml"
    f.write_text(text)
    with pytest.raises(c.TopologyError, match=why.replace("[", r"\[").replace("]", r"\]")):
        c.load_topology(str(f))


def test_too_many_hosts(tmp_path):
    c = cluster()
    f = tmp_path / "t.toml"  # pytest's directory: nothing left in /tmp
    f.write_text("[[subnet]]\nhosts = [" + ",".join(f'"h{i}"' for i in range(65)) + "]\n")
    with pytest.raises(c.TopologyError, match="at most 64 hosts"):
        c.load_topology(str(f))


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_delayd_builds_and_checks_its_arguments(tmp_path):
    exe = tmp_path / "delayd"
    r = subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                        str(ROOT / "testbed/netns/delayd.c")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for args, why in ((["x"], "usage"), (["t0", "300.1", "0"], "PREFIX"), (["t0", "10.77", "0,1,2"], "S*S"),
                      (["t0", "10.77", "0,-1,1,0"], "S*S")):
        r = subprocess.run([str(exe), *args], capture_output=True, text=True)
        assert r.returncode == 2 and why in r.stderr, (args, r.stderr)
