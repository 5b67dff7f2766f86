"""The field experiments' quick profiles for real (docs/field.md): coexist's shares cross
over between 1 and 8 BDP. cellular's key claims are asserted on lab 4's LTE run, the same
points (tests/integration/test_labs.py)."""

import os

import pytest
from conftest import RESULTS, by_point, fresh_quick

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def test_coexist_shares_cross_over_between_1_and_8_bdp():
    points = by_point(fresh_quick("coexist", RESULTS / "field"))
    share = {p["params"]["buffer"]: p["metrics"]["by_cc"] for p in points.values()}
    assert share["1bdp"]["bbr"]["share"] > share["1bdp"]["cubic"]["share"], share["1bdp"]
    assert share["8bdp"]["cubic"]["share"] > share["8bdp"]["bbr"]["share"], share["8bdp"]
    assert all(not p["metrics"]["cpu_bound"] for p in points.values())
