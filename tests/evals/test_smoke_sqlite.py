"""The embedded default (SQLite): a truth set, a run judged and replaced, its
summary and a comparison, on the portable SQL paths."""

import pytest
from django.db import connection

from tests.support.evals import number_items

pytestmark = pytest.mark.sqlite_smoke


def test_embedded_default_stores_judges_and_compares(api, dataset, run):
    if connection.vendor != "sqlite":
        pytest.skip("runs on the embedded default only (make test-sqlite)")
    dataset("ds", number_items(3) + [{"id": "p", "expected": {"a": 50, "b": 50}, "kind": "percentages"}])
    before = run("ds", {"q-1": 10, "q-2": 0, "p": {"a": 48.5, "b": 48.5}})
    after = run("ds", [{"item_id": "q-1", "actual": 0}, {"item_id": "q-1", "actual": 10.4, "escalated": True},
                       {"item_id": "q-2", "actual": 20}, {"item_id": "p", "actual": {"a": 51, "b": 49}}])
    assert (after["passed"], after["missing"], after["intervention_rate"]) == (3, 1, 1 / 3)
    assert before["results"][0]["detail"] == "total: |100 - 97| = 3 > 2"
    compared = api.get(f"/api/v1/runs/{after['id']}/compare?to={before['id']}").json()
    assert (compared["fixed"], compared["broken"], compared["still_failing"]) == (["p", "q-2"], [], ["q-3"])
