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
