"""Traces whose last activity is older than `trace_days` are deleted with all
that belongs to them; nothing of another project, nothing younger."""

from datetime import timedelta

import pytest

from provenance.models import Edge, Escalation, Fuse, HealthFinding, IngestedEvent, Node, Review, Trace
from tests.provenance.health.health_runs import run_check
from tests.provenance.ingest.test_ingest_fuse_loop import escalation_event
from tests.provenance.retention.retention_runs import apply_retention
from tests.support.events import BASE_TIME, fuse_event, node_event, review_event

pytestmark = pytest.mark.django_db

DAY = 24 * 3600


@pytest.fixture
def history(api, other_api, ingest):
    old = [
        node_event("o-frag", "old", confidence=0.4),
        node_event("o-final", "old", parents=["o-frag", "o-missing"], seconds=1, confidence=0.9),
        fuse_event("o-frag", trace_id="old"),
        fuse_event("o-never-arrived", trace_id="old", event_id="fuse-never"),
        review_event("old", "incorrect"),
        escalation_event("o-final", "old"),
    ]
    young = [node_event("y-1", "young", seconds=20 * DAY), node_event("y-2", "young", parents=["y-1"],
                                                                       seconds=20 * DAY + 1)]
    ingest(*old, *young)
    ingest(node_event("g-old", "their-old", confidence=0.9), client=other_api)
    run_check("--now", (BASE_TIME + timedelta(days=1)).isoformat())
    assert HealthFinding.objects.filter(trace_id="old").exists()
    api.patch("/api/v1/project", {"retention": {"trace_days": 30}}, format="json")
    other_api.patch("/api/v1/project", {"retention": {"trace_days": 365}}, format="json")
    return old, young


def test_an_expired_trace_goes_with_everything_that_is_its(api, history):
    out = apply_retention("--now", (BASE_TIME + timedelta(days=31)).isoformat())
    assert "acme: summarized 0 nodes; deleted 1 traces (2 nodes)" in out
    assert api.get("/api/v1/traces/old").status_code == 404
    assert not Node.objects.filter(product_id__startswith="o-").exists()
    assert not Edge.objects.filter(child_product_id="o-final").exists()
    assert not Fuse.objects.filter(trace_id="old").exists()
    assert not Review.objects.filter(trace__trace_id="old").exists()
    assert not Escalation.objects.filter(product_id="o-final").exists()
    assert not HealthFinding.objects.filter(trace_id="old").exists()
    assert api.get("/api/v1/traces/young").status_code == 200


def test_other_projects_keep_their_traces(api, other_api, history):
    apply_retention("--now", (BASE_TIME + timedelta(days=31)).isoformat())
    assert other_api.get("/api/v1/traces/their-old").status_code == 200


def test_a_trace_is_kept_while_it_is_younger_than_trace_days(api, history):
    apply_retention("--now", (BASE_TIME + timedelta(days=29)).isoformat())
    assert api.get("/api/v1/traces/old").status_code == 200


def test_events_sent_again_after_deletion_create_the_trace_again(api, ingest, history):
    old, _ = history
    apply_retention("--now", (BASE_TIME + timedelta(days=31)).isoformat())
    result = ingest(*old)
    assert result["errors"] == []
    assert {s["status"] for s in result["successes"]} == {201}
    nodes = api.get("/api/v1/traces/old").json()["nodes"]
    assert {n["product_id"] for n in nodes} == {"o-frag", "o-final"}
    assert Trace.objects.filter(trace_id="old").count() == 1


def test_the_dry_run_says_what_it_would_delete_and_deletes_nothing(api, history):
    out = apply_retention("--now", (BASE_TIME + timedelta(days=31)).isoformat(), "--dry-run")
    assert "acme: would summarize 0 nodes; would delete 1 traces (2 nodes)" in out
    assert api.get("/api/v1/traces/old").status_code == 200
    assert IngestedEvent.objects.filter(event_id="fuse-never").exists()


def test_one_project_can_be_run_alone(api, other_api, history):
    out = apply_retention("--now", (BASE_TIME + timedelta(days=400)).isoformat(), "--project", "globex")
    assert out.startswith("globex: summarized 0 nodes; deleted 1 traces")
    assert api.get("/api/v1/traces/old").status_code == 200


def test_an_unknown_project_is_refused(db):
    from django.core.management import CommandError

    with pytest.raises(CommandError, match="--project: no project 'nope'"):
        apply_retention("--project", "nope")
