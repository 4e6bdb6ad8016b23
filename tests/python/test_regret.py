"""No regret (issue 24): the planner's choice against the candidates it listed, forced and simulated.

scripts/regret.py samples calls up to 4096 ranks on postal, Hockney, LogGP and cluster models and a
probed profile (the SimGrid harness's 64 hosts in 4 subnets, measured by hetcoll's probe), and
always includes issue 24's four regression calls; the choice must never be more than 5 % slower
than the best of the top candidates simulated in full.
"""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load():
    spec = importlib.util.spec_from_file_location("regret", ROOT / "scripts" / "regret.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sampled_calls_have_no_regret(tmp_path):
    regret = load()
    out = tmp_path / "regret.json"
    profile = ROOT / "bench" / "results" / "smpi_harness" / "profiles" / "cluster64_4subnets.json"
    rc = regret.main(["--samples", "40", "--seed", "24", "--top", "4", "--profile", str(profile), "--json", str(out)])
    import json
    data = json.loads(out.read_text())
    assert data["above_1_05"] == 0, [r for r in data["rows"] if r.get("regret", 1) > 1.05]
    assert rc == 0
    # the four regression calls are in every sample
    calls = {(r["op"], r["ranks"], r["model"]) for r in data["rows"]}
    assert any(r["model"].startswith("profile:") and "regret" in r for r in data["rows"])  # the probed profile is sampled
    for op, p, _, model in regret.REGRESSIONS:
        assert (op, p, model) in calls


def test_generated_platforms_have_no_regret_and_each_choice_is_priced_by_what_it_runs(tmp_path):
    """Issue 39, item 5: the property on the generated families (fat trees of 2 and 3 levels, racks
    of equal latency, slow and mixed NICs, asymmetric uplinks, WAN sites), each platform as the
    profile an exact probe would write (its tree of links). No choice more than 5 % slower than the
    best of the top candidates, and the choice's price never more than 15 % below its own schedule's
    simulation (a composite ranked at its phases' 15.8 ms ran 57 ms before the candidate ranked
    first was simulated: regret 1.72, price -72 %). Above it, it may be: where the choice's
    simulation is beyond the decision's steps it keeps its phases' price (bcast 64 KiB on
    mixed_nics_2sub_23h_s39004, hierarchical[pieces=16]: 1.72 ms priced, 1.27 simulated)."""
    regret = load()
    out = tmp_path / "generated.json"
    rc = regret.main(["--generated", "14", "--platform-seed", "39", "--max-hosts", "48", "--only-profiles",
                      "--samples", "150", "--seed", "39", "--top", "4", "--json", str(out)])
    import json
    data = json.loads(out.read_text())
    rows = [r for r in data["rows"] if "regret" in r]
    assert len(rows) >= 140, "the choice was simulated on too few calls to say anything"
    families = {r["model"].rsplit("/", 1)[-1].split("_")[0] for r in rows}
    assert families >= {"fat2", "fat3", "equal", "slow", "mixed", "asymmetric", "wan"}, families
    assert data["above_1_05"] == 0 and rc == 0, [r for r in rows if r["regret"] > 1.05]
    off = [r for r in rows if r["price_error"] < -0.15]
    assert not off, off


# Issue 39's planner fault, on the three profiles of seed 39 where SimGrid showed it: a composite
# of many pieces ranked first on its phases' price while its own simulation was beyond the steps a
# decision may spend (allreduce 1 MiB on the fat tree: hierarchical[pieces=16] ranked at 7.11 ms,
# simulated 19.2, run by SMPI in 20.8; bcast 64 KiB on slow NICs 21.2 / 33.7 / 36.0; on mixed NICs
# 1.26 / 1.64 / 1.89).
PIECES_FAULT = [
    ("allreduce", 28, 1 << 20, "fat3_os4x2_28h_s39015"),
    ("bcast", 21, 1 << 16, "slow_nics_5sub_21h_s39010"),
    ("bcast", 15, 1 << 16, "mixed_nics_2sub_15h_s39004"),
]


def test_a_composite_of_many_pieces_is_not_chosen_on_a_price_its_siblings_contradict():
    """The choice within 5 % of the best of the top six candidates simulated in full, and priced
    within 15 % of its own simulation: a composite's setting the decision could not simulate is
    priced on the scale its simulated siblings showed, and the candidates ranked first are simulated
    with the steps they need (kVerifyWork)."""
    regret = load()
    for op, p, nbytes, name in PIECES_FAULT:
        spec = f"profile:{ROOT / 'bench' / 'results' / 'smpi_generated' / 'profiles_seed39' / (name + '.json')}"
        row = regret.one(op, p, nbytes, spec, 6, {})
        assert "regret" in row, row
        assert row["regret"] <= 1.05, row
        assert abs(row["price_error"]) <= 0.15, row
