"""hetcoll predict (Banikazemi eqs. 6-12 beside the simulator) and hetcoll
whatif (Fig. 8: time as the fast nodes vary), and the topology the runtime
builds from a profile."""
import json

import pytest

from hetcoll import _core


def test_predict_equations_match_the_simulator_on_the_same_tree(run_cli):
    # On Banikazemi's model without contention, eq. 7 is what the simulator
    # computes for the same tree, any tree.
    for tree in ("binomial", "star", "chain", "knomial:3"):
        code, out, err = run_cli("predict", "bcast", "-m", "hetero:nodes=FSSFSF", "--root", "1", "--tree", tree,
                                 "-b", "8,4k,64k", "--json")
        assert code == 0, err
        rec = json.loads(out)
        assert rec["ranks"] == 6 and rec["root"] == 1
        for r in rec["rows"]:
            assert r["equations_s"] == pytest.approx(r["simulated_s"], rel=1e-9), (tree, r)
            assert r["planner_s"] <= r["simulated_s"] * (1 + 1e-9)


def test_predict_gather_serialises_the_root_link(run_cli):
    # Eqs. 10-12 serialise the transmissions into the root: never below the
    # simulator without a topology, above it for large blocks.
    code, out, err = run_cli("predict", "gather", "-m", "hetero:nodes=FFSS", "-b", "8,8k", "--json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    assert rows[0]["equations_s"] == pytest.approx(rows[0]["simulated_s"], rel=1e-9)
    assert rows[1]["equations_s"] > rows[1]["simulated_s"]


def test_predict_errors(run_cli):
    code, _, err = run_cli("predict", "allreduce", "-m", "hetero:nodes=FS")
    assert code == 2 and "invalid choice" in err
    code, _, err = run_cli("predict", "bcast", "-m", "hetero:nodes=FS", "--tree", "weird")
    assert code == 2 and "unknown tree" in err
    code, _, err = run_cli("predict", "bcast")
    assert code == 2 and "-m PROFILE" in err
    code, _, err = run_cli("predict", "bcast", "-m", "hetero:nodes=FS", "--root", "5")
    assert code == 2 and "root" in err


def test_whatif_reproduces_figure_8(run_cli, tmp_path):
    # Gather on 8 and 16 nodes over MPICH's reverse sequential tree, as in
    # the paper: more fast nodes help, and beyond about four they help
    # little (Banikazemi Fig. 8).
    for n in (8, 16):
        png = tmp_path / f"w{n}.png"
        code, out, err = run_cli("whatif", "gather", "-n", str(n), "-b", "1k", "--algorithm", "star_gather",
                                 "--png", str(png), "--json")
        assert code == 0, err
        rows = json.loads(out)["rows"]
        t = {r["fast"]: r["predicted_s"] for r in rows}
        assert [r["fast"] for r in rows] == list(range(1, n + 1))
        assert all(t[k + 1] <= t[k] * (1 + 1e-9) for k in range(1, n))
        assert t[1] > t[n]
        assert t[4] - t[n] < 0.25 * (t[1] - t[n])
        assert png.stat().st_size > 1000
        # The planner's choice (a greedy tree may win) is never slower than
        # the paper's tree; it need not improve with every fast node (the
        # greedy tree is a heuristic).
        code, out, err = run_cli("whatif", "gather", "-n", str(n), "-b", "1k", "--json")
        assert code == 0, err
        best = {r["fast"]: r["predicted_s"] for r in json.loads(out)["rows"]}
        assert all(best[k] <= t[k] * (1 + 1e-9) for k in t)


def test_whatif_on_a_profile_and_errors(run_cli, tmp_path, two_host_profile):
    code, out, err = run_cli("whatif", "bcast", "--profile", str(two_host_profile), "-n", "4", "--fast", "1,4")
    assert code == 0, err
    assert "fast" in out
    code, _, err = run_cli("whatif", "bcast", "-n", "4", "--fast", "0,2")
    assert code == 2 and "between 1" in err
    code, _, err = run_cli("whatif", "bcast", "-n", "1")
    assert code == 2


@pytest.fixture
def two_host_profile():
    """A profile the probe wrote in SimGrid on testbed/smpi/platforms/two_subnets.xml:
    two subnets of 4 hosts, 125 MB/s interfaces, 12.5 MB/s shared uplinks."""
    from pathlib import Path
    return Path(__file__).resolve().parent / "data" / "smpi_two_subnets.json"


def test_profile_topology_has_shared_uplinks(two_host_profile):
    m = _core.parse_model(str(two_host_profile))
    t = _core.topology(m)
    assert t["group_of_host"] == [0, 0, 0, 0, 1, 1, 1, 1]
    names = {l["name"]: l["bandwidth"] for l in t["links"]}
    # Interfaces at the subnet's own rate; the slowed class gives each
    # subnet a shared uplink at what a pair got alone.
    assert names["nic_up(a0)"] == pytest.approx(125e6, rel=0.01)
    assert names["uplink(subnet 0)"] == pytest.approx(12.5e6, rel=0.01)
    switches = [n for n in t["nodes"] if n["parent"] == 0 and n["host"] < 0]
    assert len(switches) == 2 and all(n["up"] == n["down"] >= 0 for n in switches)  # one link both ways
    # A 1 MB message alone across: latency + m / 12.5 MB/s.
    gm2 = _core.group_model(m, [0, 4], 2)
    one = _core.collective("bcast", 2, 1_000_000, 0, 1)
    t1 = _core.generate("binomial_tree", one, gm2).simulate(gm2, False).makespan
    assert t1 == pytest.approx(2.1e-3 + 1_000_000 / 12.5e6, rel=0.02)
    # Two messages across at once (a0 -> b0, a1 -> b1) share the uplinks:
    # twice as long; two inside a subnet do not.
    g = _core.group_model(m, [0, 1, 4, 5], 4)
    sched = _core.schedule_from_text(_pairs_text([(0, 2), (1, 3)], 1_000_000))
    t2 = sched.simulate(g, False).makespan
    assert t2 == pytest.approx(2.1e-3 + 2 * 1_000_000 / 12.5e6, rel=0.02)
    inside = _core.schedule_from_text(_pairs_text([(0, 1), (2, 3)], 1_000_000))
    assert inside.simulate(g, False).makespan < 0.1 * t2


def _pairs_text(pairs, nbytes):
    """A schedule in hetcoll's text form (an alltoall's buffers): each pair (s, d) sends nbytes."""
    lines = ["# hetcoll schedule v1", "algorithm pairs",
             f'collective {{"op":"alltoall","nranks":4,"elem_size":1,"count":{nbytes}}}']
    ops = {r: [] for r in range(4)}
    for s, d in pairs:
        ops[s].append(f"send to {d} in[{d * nbytes}:{(d + 1) * nbytes}]")
        ops[d].append(f"recv from {s} out[{s * nbytes}:{(s + 1) * nbytes}]")
    for r in range(4):
        lines.append(f"rank {r} tmp=0")
        lines += [f"  {i}: {o}" for i, o in enumerate(ops[r])]
    return "\n".join(lines) + "\n"
