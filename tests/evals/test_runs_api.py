"""Runs through the API: results judged on arrival, the summary, finish, comparison."""

import pytest

from tests.support.evals import number_items, part

ITEMS = [
    {"id": "q-1", "input": "total refunds?", "expected": 3, "tags": ["refunds"]},
    {"id": "q-2", "input": "tickets in 2025?", "expected": 10000, "tags": ["volume"]},
    {"id": "q-3", "input": "share per channel", "expected": {"mail": 50, "chat": 50}, "kind": "percentages",
     "tags": ["volume"], "origin": "production"},
    {"id": "q-4", "input": "intent of #17", "expected": "Refund", "kind": "label", "tags": ["refunds"]},
    {"id": "q-5", "input": "entities of #17", "expected": {"order": "A-1", "items": [1, 2]}},
]


def test_open_post_finish_and_read_the_summary(api, dataset):
    dataset("ticket-stats", ITEMS)
    opened = api.post("/api/v1/runs", {"dataset": "ticket-stats", "name": "prompt-v7", "metadata": {"model": "m"}},
                      format="json")
    assert opened.status_code == 201
    assert part(opened.json(), {"dataset": "ticket-stats", "dataset_version": 1, "status": "open"}) == {
        "dataset": "ticket-stats", "dataset_version": 1, "status": "open"}
    run_id = opened.json()["id"]
    results = [
        {"item_id": "q-1", "actual": 3.5, "trace_id": "eval-1-q-1", "latency_ms": 100, "escalated": True},
        {"item_id": "q-2", "actual": 10051, "trace_id": "eval-1-q-2", "latency_ms": 300},
        {"item_id": "q-3", "actual": {"mail": 48.5, "chat": 48.5}},
        {"item_id": "q-4", "actual": " refund ", "product_id": "final-4"},
        {"item_id": "nope", "actual": 1},
        {"item_id": "q-1", "actual": 3},
    ]
    answer = api.post(f"/api/v1/runs/{run_id}/results", {"results": results}, format="json")
    assert answer.status_code == 207
    entries = answer.json()
    assert [(e["item_id"], e["status"], e["passed"]) for e in entries] == [
        ("q-1", 201, True), ("q-2", 201, False), ("q-3", 201, False), ("q-4", 201, True), ("nope", 404, False),
        ("q-1", 200, True)]
    assert "nope" in entries[4]["message"]

    finished = api.post(f"/api/v1/runs/{run_id}/finish")
    assert finished.status_code == 200 and finished.json()["status"] == "finished"
    summary = api.get(f"/api/v1/runs/{run_id}").json()
    assert part(summary, {"id": run_id, "dataset": "ticket-stats", "dataset_version": 1, "name": "prompt-v7",
                          "status": "finished", "total": 5, "judged": 4, "passed": 2, "failed": 2, "missing": 1,
                          "accuracy": 0.4, "mean_latency_ms": 300.0}) == {
        "id": run_id, "dataset": "ticket-stats", "dataset_version": 1, "name": "prompt-v7", "status": "finished",
        "total": 5, "judged": 4, "passed": 2, "failed": 2, "missing": 1, "accuracy": 0.4, "mean_latency_ms": 300.0}
    # The replacement of q-1 carried no escalation: none of the four judged needed a person.
    assert summary["intervention_rate"] == 0.0
    assert summary["by_tag"] == {"refunds": {"total": 2, "passed": 2, "accuracy": 1.0},
                                 "volume": {"total": 2, "passed": 0, "accuracy": 0.0}}
    by_item = {r["item_id"]: r for r in summary["results"]}
    assert part(by_item["q-2"], {"expected": 10000, "actual": 10051, "passed": False,
                                 "detail": "|10000 - 10051| = 51 > 50", "trace_id": "eval-1-q-2"}) == {
        "expected": 10000, "actual": 10051, "passed": False, "detail": "|10000 - 10051| = 51 > 50",
        "trace_id": "eval-1-q-2"}
    assert by_item["q-3"]["detail"] == "total: |100 - 97| = 3 > 2"
    assert by_item["q-4"]["product_id"] == "final-4"
    assert summary["missing_items"] == ["q-5"]

    late = api.post(f"/api/v1/runs/{run_id}/results", {"results": [{"item_id": "q-5", "actual": 1}]}, format="json")
    assert late.status_code == 409
    assert api.get(f"/api/v1/runs/{run_id}").json()["judged"] == 4


def test_intervention_rate_is_escalated_over_judged(api, dataset, run):
    dataset("ds", number_items(4))
    summary = run("ds", [{"item_id": "q-1", "actual": 10, "escalated": True},
                         {"item_id": "q-2", "actual": 20, "escalated": False},
                         {"item_id": "q-3", "actual": 0, "error": "timeout", "escalated": True}])
    assert (summary["judged"], summary["passed"], summary["missing"]) == (3, 2, 1)
    assert summary["intervention_rate"] == pytest.approx(2 / 3)
    assert summary["accuracy"] == 0.5
    assert summary["mean_latency_ms"] is None
    failed = next(r for r in summary["results"] if r["item_id"] == "q-3")
    assert failed["passed"] is False and failed["detail"] == "error: timeout"


def test_a_run_reads_its_own_version_even_after_the_dataset_changes(api, dataset, run):
    dataset("ds", number_items(2))
    api.post("/api/v1/datasets/ds/items", {"items": [{"id": "q-1", "expected": 999}]}, format="json")
    old = run("ds", {"q-1": 10, "q-2": 20}, dataset_version=1)
    new = run("ds", {"q-1": 10, "q-2": 20})
    assert (old["dataset_version"], old["accuracy"]) == (1, 1.0)
    assert (new["dataset_version"], new["accuracy"]) == (2, 0.5)


@pytest.mark.parametrize(("body", "field", "code"), [
    ({"name": "x"}, "dataset", 400),
    ({"dataset": "ds", "dataset_version": 5}, "dataset_version", 400),
    ({"dataset": "ds", "dataset_version": "1"}, "dataset_version", 400),
    ({"dataset": "ds", "metadata": [1]}, "metadata", 400),
    ({"dataset": "ds", "name": 5}, "name", 400),
])
def test_bad_run_bodies_name_the_field(api, dataset, body, field, code):
    dataset("ds", number_items(1))
    response = api.post("/api/v1/runs", body, format="json")
    assert response.status_code == code and field in response.json()["fields"]


def test_unknown_dataset_for_a_run_is_404(api):
    assert api.post("/api/v1/runs", {"dataset": "nope"}, format="json").status_code == 404


@pytest.mark.parametrize(("result", "field"), [
    ({"actual": 1}, "results[0].item_id"),
    ({"item_id": "q-1", "actual": 1, "latency_ms": "fast"}, "results[0].latency_ms"),
    ({"item_id": "q-1", "actual": 1, "escalated": "yes"}, "results[0].escalated"),
    ({"item_id": "q-1", "actual": 1, "error": 5}, "results[0].error"),
    ({"item_id": "q-1", "actual": 1, "mood": "ok"}, "results[0].mood"),
])
def test_a_bad_result_is_a_400_entry_and_the_others_are_stored(api, dataset, result, field):
    dataset("ds", number_items(2))
    run_id = api.post("/api/v1/runs", {"dataset": "ds"}, format="json").json()["id"]
    answer = api.post(f"/api/v1/runs/{run_id}/results",
                      {"results": [result, {"item_id": "q-2", "actual": 20}]}, format="json")
    assert answer.status_code == 207
    bad, good = answer.json()
    assert bad["status"] == 400 and bad["message"].startswith(field)
    assert (good["status"], good["passed"]) == (201, True)
    assert api.get(f"/api/v1/runs/{run_id}").json()["judged"] == 1


@pytest.mark.parametrize("body", [{}, {"results": {}}, [], {"results": [{"item_id": "q-1"}] * 1001}])
def test_a_malformed_results_body_is_refused(api, dataset, body):
    dataset("ds", number_items(1))
    run_id = api.post("/api/v1/runs", {"dataset": "ds"}, format="json").json()["id"]
    response = api.post(f"/api/v1/runs/{run_id}/results", body, format="json")
    assert response.status_code == 400 and "results" in response.json()["fields"]


def test_runs_are_listed_newest_first_with_their_figures(api, dataset, run):
    dataset("ds", number_items(2))
    dataset("other", number_items(1))
    first = run("ds", {"q-1": 10}, name="old")
    second = run("ds", {"q-1": 10, "q-2": 20}, name="new")
    run("other", {"q-1": 10})
    listed = api.get("/api/v1/runs?dataset=ds").json()
    assert [(r["id"], r["name"], r["accuracy"], r["total"]) for r in listed] == [
        (second["id"], "new", 1.0, 2), (first["id"], "old", 0.5, 2)]
    assert len(api.get("/api/v1/runs").json()) == 3
    assert api.get("/api/v1/runs?dataset=nope").status_code == 404
    paged = api.get("/api/v1/runs?dataset=ds&limit=1")
    assert len(paged.json()) == 1 and 'rel="next"' in paged["Link"]


def test_finish_twice_is_harmless(api, dataset, run):
    dataset("ds", number_items(1))
    done = run("ds", {"q-1": 10})
    again = api.post(f"/api/v1/runs/{done['id']}/finish")
    assert again.status_code == 200 and again.json()["finished_at"] == done["finished_at"]


def test_compare_two_runs(api, dataset, run):
    dataset("ds", number_items(5))
    before = run("ds", {"q-1": 10, "q-2": 20, "q-3": 0, "q-4": 0})
    # Version 2 drops q-5 and adds q-6.
    api.delete("/api/v1/datasets/ds/items/q-5")
    api.post("/api/v1/datasets/ds/items", {"items": [{"id": "q-6", "expected": 60}]}, format="json")
    after = run("ds", {"q-1": 0, "q-2": 20, "q-3": 30, "q-6": 60})
    compared = api.get(f"/api/v1/runs/{after['id']}/compare?to={before['id']}")
    assert compared.status_code == 200
    body = compared.json()
    assert body["accuracy_delta"] == pytest.approx(3 / 5 - 2 / 5)
    assert part(body, {"fixed": ["q-3"], "broken": ["q-1"], "still_failing": ["q-4"], "only_here": ["q-6"],
                       "only_there": ["q-5"]}) == {
        "fixed": ["q-3"], "broken": ["q-1"], "still_failing": ["q-4"], "only_here": ["q-6"], "only_there": ["q-5"]}
    reverse = api.get(f"/api/v1/runs/{before['id']}/compare?to={after['id']}").json()
    assert (reverse["fixed"], reverse["broken"]) == (["q-1"], ["q-3"])


def test_compare_needs_a_run_of_the_same_dataset(api, other_api, dataset, run):
    dataset("ds", number_items(1))
    dataset("other", number_items(1))
    a, b = run("ds", {"q-1": 10}), run("other", {"q-1": 10})
    assert api.get(f"/api/v1/runs/{a['id']}/compare").status_code == 400
    assert "to" in api.get(f"/api/v1/runs/{a['id']}/compare?to={b['id']}").json()["fields"]
    assert api.get(f"/api/v1/runs/{a['id']}/compare?to=999999").status_code == 404
    assert other_api.get(f"/api/v1/runs/{a['id']}/compare?to={a['id']}").status_code == 404


def test_another_projects_run_is_not_found(api, other_api, dataset, run):
    dataset("ds", number_items(1))
    opened = run("ds", finish=False)
    run_id = opened["id"]
    assert other_api.get(f"/api/v1/runs/{run_id}").status_code == 404
    assert other_api.post(f"/api/v1/runs/{run_id}/results", {"results": []}, format="json").status_code == 404
    assert other_api.post(f"/api/v1/runs/{run_id}/finish").status_code == 404
    assert other_api.post("/api/v1/runs", {"dataset": "ds"}, format="json").status_code == 404
    assert other_api.get("/api/v1/runs").json() == []
    assert api.get(f"/api/v1/runs/{run_id}").json()["status"] == "open"


def test_a_large_batch_takes_the_bulk_path_and_replaces_in_place(api, dataset):
    dataset("big", number_items(300))
    run_id = api.post("/api/v1/runs", {"dataset": "big"}, format="json").json()["id"]
    first = [{"item_id": f"q-{i}", "actual": i * 10 if i % 3 else 0, "latency_ms": 5.5, "trace_id": f"t-{i}"}
             for i in range(1, 301)]
    answer = api.post(f"/api/v1/runs/{run_id}/results", {"results": first}, format="json").json()
    assert {e["status"] for e in answer} == {201}
    again = [{"item_id": f"q-{i}", "actual": i * 10, "escalated": True} for i in range(1, 301)]
    answer = api.post(f"/api/v1/runs/{run_id}/results", {"results": again}, format="json").json()
    assert {e["status"] for e in answer} == {200} and all(e["passed"] for e in answer)
    summary = api.get(f"/api/v1/runs/{run_id}").json()
    assert (summary["passed"], summary["judged"], summary["intervention_rate"]) == (300, 300, 1.0)
    assert summary["results"][0]["trace_id"] == "" and summary["mean_latency_ms"] is None
