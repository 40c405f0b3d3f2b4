"""Truth drift: the recheck endpoint marks items whose source of truth moved."""

from tests.support.evals import number_items


def test_recheck_marks_drifted_items_until_they_are_updated(api, dataset, run):
    dataset("ds", number_items(3) + [{"id": "lab", "expected": "refund", "kind": "label"}])
    answer = api.post("/api/v1/datasets/ds/recheck", {"values": [
        {"item_id": "q-1", "current": 10.2}, {"item_id": "q-2", "current": 25},
        {"item_id": "lab", "current": "Return"}]}, format="json")
    assert answer.status_code == 200
    assert answer.json() == {"drifted": ["q-2", "lab"], "checked": 3}

    shown = api.get("/api/v1/datasets/ds").json()
    assert shown["version"] == 1  # a recheck is not a change of the truth set
    assert {i["id"]: i["drifted"] for i in shown["items"]} == {"q-1": False, "q-2": True, "q-3": False, "lab": True}
    summary = run("ds", {"q-1": 10})
    assert summary["drifted"] == ["lab", "q-2"]
    assert next(r for r in summary["results"] if r["item_id"] == "q-1")["drifted"] is False

    api.post("/api/v1/datasets/ds/items", {"items": [{"id": "q-2", "expected": 25}]}, format="json")
    updated = {i["id"]: i["drifted"] for i in api.get("/api/v1/datasets/ds").json()["items"]}
    assert updated == {"q-1": False, "q-2": False, "q-3": False, "lab": True}
    # The run keeps its version's marks; a run on the new version sees only what is still drifted.
    assert api.get(f"/api/v1/runs/{summary['id']}").json()["drifted"] == ["lab", "q-2"]
    assert run("ds", {})["drifted"] == ["lab"]


def test_a_value_that_passes_again_clears_the_mark(api, dataset):
    dataset("ds", number_items(1))
    api.post("/api/v1/datasets/ds/recheck", {"values": [{"item_id": "q-1", "current": 50}]}, format="json")
    again = api.post("/api/v1/datasets/ds/recheck", {"values": [{"item_id": "q-1", "current": 10}]}, format="json")
    assert again.json() == {"drifted": [], "checked": 1}
    assert api.get("/api/v1/datasets/ds").json()["items"][0]["drifted"] is False


def test_bad_recheck_bodies_name_the_field_and_mark_nothing(api, dataset):
    dataset("ds", number_items(2))
    for body, field in [({}, "values"), ({"values": [{"item_id": "q-1"}]}, "values[0].current"),
                        ({"values": [{"item_id": "q-1", "current": 99}, {"item_id": "zz", "current": 1}]},
                         "values[1].item_id"),
                        ({"values": [5]}, "values[0]")]:
        response = api.post("/api/v1/datasets/ds/recheck", body, format="json")
        assert response.status_code == 400 and field in response.json()["fields"], (body, response.json())
    assert not any(i["drifted"] for i in api.get("/api/v1/datasets/ds").json()["items"])
