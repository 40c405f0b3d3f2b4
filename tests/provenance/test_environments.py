"""Every trace has one environment, set by its first node (`production` unless
told); a later node naming another is refused for that event alone."""

import pytest

from provenance.models import Node, Trace
from tests.provenance.stored import error_for, statuses
from tests.support.events import node_event, review_event

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_smoke]


def environment_of(api, trace_id):
    return api.get(f"/api/v1/traces/{trace_id}").json()["environment"]


def test_a_trace_is_in_production_unless_its_first_node_says_otherwise(api, ingest):
    ingest(node_event("p1", "plain"), node_event("e1", "eval", environment="evaluation"))
    assert environment_of(api, "plain") == "production"
    assert environment_of(api, "eval") == "evaluation"


def test_later_nodes_that_name_no_environment_or_the_same_one_join_the_trace(api, ingest):
    ingest(node_event("e1", "eval", environment="evaluation"))
    result = ingest(node_event("e2", "eval", seconds=1), node_event("e3", "eval", seconds=2, environment="evaluation"))
    assert not result["errors"]
    assert environment_of(api, "eval") == "evaluation"
    assert Trace.objects.get(trace_id="eval").node_count == 3


def test_a_later_node_naming_another_environment_is_a_400_and_nothing_is_stored_for_it(api, project, ingest):
    ingest(node_event("e1", "eval", environment="evaluation", confidence=0.9))
    result = ingest(node_event("bad", "eval", seconds=5, environment="staging", confidence=0.1, status="error"),
                    node_event("fine", "eval", seconds=1))

    error = error_for(result, "ev-bad")
    assert error["status"] == 400 and error["message"].startswith("environment:")
    assert statuses(result)["ev-fine"] == 201
    assert set(Node.objects.filter(project=project).values_list("product_id", flat=True)) == {"e1", "fine"}
    trace = Trace.objects.get(trace_id="eval")
    # The refused node's counters are not kept either.
    assert (trace.environment, trace.node_count, trace.error_count, trace.min_confidence) == ("evaluation", 2, 0, 0.9)
    assert trace.ended_at.isoformat() == Node.objects.get(product_id="fine").timestamp.isoformat()


def test_within_one_batch_the_first_node_sets_the_environment(api, project, ingest):
    result = ingest(node_event("a", "t"), node_event("b", "t", seconds=1, environment="evaluation"),
                    node_event("c", "t", seconds=2, environment="production"))
    assert error_for(result, "ev-b")["message"].startswith("environment:")
    assert statuses(result)["ev-c"] == 201
    trace = Trace.objects.get(trace_id="t")
    assert (trace.environment, trace.node_count) == ("production", 2)


def test_a_trace_a_review_created_takes_its_first_nodes_environment(api, ingest):
    ingest(review_event("early", "correct"))
    ingest(node_event("n1", "early", environment="evaluation"))
    assert environment_of(api, "early") == "evaluation"


def test_a_resent_batch_with_a_conflict_takes_the_conflict_safe_path_and_agrees(api, project, ingest):
    ingest(node_event("e1", "eval", environment="evaluation"))
    # e1 again is a resend (200): the batch goes down the conflict-safe insert.
    result = ingest(node_event("e1", "eval", environment="evaluation"),
                    node_event("bad", "eval", seconds=1, environment="production"))
    assert statuses(result) == {"ev-e1": 200, "ev-bad": 400}
    assert Trace.objects.get(trace_id="eval").node_count == 1


@pytest.mark.parametrize("bad", ["", "a" * 51, "has space", "ünïcode", 7, ["evaluation"], "semi;colon"])
def test_a_bad_environment_name_is_a_400(ingest, bad):
    result = ingest(node_event("p1", environment=bad))
    assert error_for(result, "ev-p1")["message"].startswith("environment:")


def test_the_trace_list_filters_by_environment(api, ingest):
    ingest(node_event("p1", "prod-1"), node_event("p2", "prod-2", environment="production"),
           node_event("e1", "eval-1", environment="evaluation"))
    listed = api.get("/api/v1/traces?environment=evaluation").json()["results"]
    assert [(t["trace_id"], t["environment"]) for t in listed] == [("eval-1", "evaluation")]
    production = {t["trace_id"] for t in api.get("/api/v1/traces?environment=production").json()["results"]}
    assert production == {"prod-1", "prod-2"}
    assert api.get("/api/v1/traces").json()["count"] == 3
    answer = api.get("/api/v1/traces?environment=no%20such")
    assert answer.status_code == 400 and "environment" in answer.json()["fields"]


def test_a_refused_nodes_id_stays_free_so_its_corrected_resend_is_stored(api, project, ingest):
    ingest(node_event("e1", "eval", environment="evaluation"))
    assert statuses(ingest(node_event("late", "eval", seconds=1, environment="staging")))["ev-late"] == 400
    assert statuses(ingest(node_event("late", "eval", seconds=1, environment="evaluation")))["ev-late"] == 201
    assert Trace.objects.get(trace_id="eval").node_count == 2
