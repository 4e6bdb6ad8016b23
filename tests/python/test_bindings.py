"""The Python bindings agree with the postal closed forms and raise typed errors."""
import pytest

import hetcoll
from hetcoll import _core


@pytest.mark.parametrize("lam", [1.0, 1.3, 1.8, 2.0, 2.5, 4.0])
@pytest.mark.parametrize("n", [1, 2, 7, 8, 13, 100, 999])
def test_lambda_tree_prediction_is_T(lam, n):
    model = hetcoll.parse_model(f"postal:lambda={lam}")
    s = hetcoll.generate("lambda_tree", hetcoll.collective("bcast", n, 4, n // 2), model)
    assert s.validate()["ok"]
    assert s.simulate(model).makespan == pytest.approx(_core.postal.T(lam, n), abs=1e-9)


def test_errors_are_typed():
    with pytest.raises(hetcoll.InputError):
        hetcoll.parse_model("postal:lambda=0.1")
    assert issubclass(hetcoll.InputError, ValueError)
    with pytest.raises(hetcoll.InputError, match="unknown algorithm"):
        hetcoll.generate("nope", hetcoll.collective("bcast", 4, 1), hetcoll.parse_model("postal:lambda=2"))


def test_schedule_round_trip():
    model = hetcoll.parse_model("postal:lambda=2")
    s = hetcoll.generate("bks_combine", hetcoll.collective("allreduce", 9, 2, 0, 8), model)
    t = hetcoll.schedule_from_text(s.to_text())
    j = hetcoll.schedule_from_json(s.to_json())
    assert t.to_text() == s.to_text() == j.to_text()
    assert t.simulate(model).makespan == s.simulate(model).makespan


def test_plan_sorted():
    cands = hetcoll.plan(hetcoll.collective("bcast", 100, 8), hetcoll.parse_model("postal:lambda=3"))
    times = [c["predicted"] for c in cands]
    assert times == sorted(times)
    assert times[0] == pytest.approx(_core.postal.T(3, 100))
