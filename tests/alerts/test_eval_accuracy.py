"""The `eval_accuracy` metric in alert rules: the newest finished run of
`filters.dataset`, window ignored; relative against the finished run before."""

from unittest import mock

import pytest
from django.urls import reverse
from django.utils import timezone

from alerts.models import AlertRule
from tests.support.alerts import at_minute
from tests.support.evals import number_items


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


@pytest.fixture
def finished_run(api):
    def make(results: dict, minute: float) -> dict:
        run_id = api.post("/api/v1/runs", {"dataset": "ticket-stats"}, format="json").json()["id"]
        body = [{"item_id": k, "actual": v} for k, v in results.items()]
        assert api.post(f"/api/v1/runs/{run_id}/results", {"results": body}, format="json").status_code == 207
        with mock.patch.object(timezone, "now", return_value=at_minute(minute)):
            assert api.post(f"/api/v1/runs/{run_id}/finish").status_code == 200
        return api.get(f"/api/v1/runs/{run_id}").json()

    return make


@pytest.fixture
def truth_set(api):
    api.post("/api/v1/datasets", {"name": "ticket-stats"}, format="json")
    api.post("/api/v1/datasets/ticket-stats/items", {"items": number_items(10)}, format="json")


def all_right(n: int) -> dict:
    return {f"q-{i}": i * 10 for i in range(1, n + 1)}


def test_accuracy_below_a_threshold_fires(api, truth_set, finished_run, create_rule, evaluate, alert_events):
    rule = create_rule(conditions=[{"metric": "eval_accuracy", "window": "1h", "filters": {"dataset": "ticket-stats"},
                                    "op": "<", "threshold": 0.8}])
    assert rule["conditions"][0]["filters"] == {"dataset": "ticket-stats"}
    finished_run(all_right(10), minute=1)
    evaluate(2)
    assert alert_events() == []
    finished_run(all_right(7), minute=3)
    evaluate(4)
    events = alert_events()
    assert [(e["state"], e["values"]) for e in events] == [("firing", [{"metric": "eval_accuracy", "value": 0.7}])]


def test_relative_drop_against_the_run_before(api, truth_set, finished_run, create_rule, evaluate, alert_events):
    create_rule(conditions=[{"metric": "eval_accuracy", "window": "15m", "change": "relative",
                             "filters": {"dataset": "ticket-stats"}, "op": "<", "threshold": -0.05}])
    finished_run(all_right(10), minute=1)
    evaluate(2)  # one run: no change to compare
    finished_run(all_right(10), minute=3)
    evaluate(4)
    assert alert_events() == []
    finished_run(all_right(9), minute=5)
    evaluate(6)
    events = alert_events()
    assert events[0]["state"] == "firing"
    assert events[0]["values"][0]["value"] == pytest.approx(-0.1)


def test_the_window_may_be_left_out(api, truth_set, finished_run, create_rule):
    rule = create_rule(conditions=[{"metric": "eval_accuracy", "filters": {"dataset": "ticket-stats"},
                                    "op": "<", "threshold": 0.9}])
    assert "window" not in rule["conditions"][0]


@pytest.mark.parametrize(("condition", "field"), [
    ({"metric": "eval_accuracy", "window": "1h", "op": "<", "threshold": 0.9}, "conditions[0].filters.dataset"),
    ({"metric": "eval_accuracy", "window": "1h", "filters": {"dataset": "d", "step": "s"}, "op": "<",
      "threshold": 0.9}, "conditions[0].filters.step"),
    ({"metric": "fuse_rate", "window": "1h", "filters": {"dataset": "d"}, "op": "<", "threshold": 0.9},
     "conditions[0].filters.dataset"),
    ({"metric": "fuse_rate", "op": "<", "threshold": 0.9}, "conditions[0].window"),
])
def test_bad_eval_accuracy_conditions_name_the_field(api, condition, field):
    response = api.post("/api/v1/alert-rules", {"name": "r", "match": "all", "conditions": [condition],
                                                 "for": "0m", "destinations": []}, format="json")
    assert response.status_code == 400
    assert field in response.json()["fields"], response.json()


def test_the_rule_builder_offers_eval_accuracy_with_its_dataset(member, project):
    url = reverse("alerts:rule-new", args=[project.slug])
    page = member.get(url).content.decode()
    assert '<option value="eval_accuracy"' in page and 'name="condition_dataset"' in page
    response = member.post(url, {"name": "accuracy dropped", "match": "all", "for": "0m",
                                 "condition_metric": "eval_accuracy", "condition_window": "",
                                 "condition_change": "relative", "condition_agent_id": "", "condition_step": "",
                                 "condition_source_type": "", "condition_dataset": "ticket-stats",
                                 "condition_op": "<", "condition_threshold": "-0.05"})
    assert response.status_code == 302, response.content.decode()[:2000]
    rule = AlertRule.objects.get(project=project)
    assert rule.conditions == [{"metric": "eval_accuracy", "change": "relative",
                                "filters": {"dataset": "ticket-stats"}, "op": "<", "threshold": -0.05}]

