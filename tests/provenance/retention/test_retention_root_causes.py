"""Deleting an expired trace recomputes the stored root causes of the traces
downstream of it (issue 24): an answer whose cause lived in the deleted trace
no longer counts that cause in `GET /api/v1/root-causes`."""

from datetime import timedelta

import pytest

from tests.provenance.retention.retention_runs import apply_retention
from tests.support.events import BASE_TIME, fuse_event, node_event, review_event

pytestmark = pytest.mark.django_db(transaction=True)

DAY = 24 * 3600


def iso(seconds: float) -> str:
    return (BASE_TIME + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def causes_of_the_young_answers(api) -> dict:
    found = api.get("/api/v1/root-causes", {"start": iso(19 * DAY), "end": iso(21 * DAY)})
    assert found.status_code == 200, found.content
    return found.json()


def test_an_answer_downstream_of_a_deleted_trace_loses_the_cause_it_had_there(api, ingest):
    ingest(
        # An old trace whose fused fragment a young trace consumed.
        node_event("old-frag", "old", agent_id="retriever", step="retrieval"),
        fuse_event("old-frag", trace_id="old"),
        node_event("young-a", "young", parents=["old-frag"], seconds=20 * DAY, agent_id="reasoner"),
        node_event("young-final", "young", parents=["young-a"], seconds=20 * DAY + 1, source_type="final_answer"),
        # Young too, but downstream of nothing expired: untouched.
        node_event("other-frag", "other", seconds=20 * DAY, agent_id="tooler", step="tool_call", status="error"),
        node_event("other-final", "other", parents=["other-frag"], seconds=20 * DAY + 1, source_type="final_answer"),
    )
    ingest(review_event("young", "incorrect"), review_event("other", "incorrect"))
    before = causes_of_the_young_answers(api)
    assert (before["answers"], before["unexplained"]) == (2, 0)
    assert {(c["agent_id"], c["reason"]) for c in before["causes"]} == {("retriever", "fused"), ("tooler", "error")}
    assert api.patch("/api/v1/project", {"retention": {"trace_days": 30}}, format="json").status_code == 200

    apply_retention("--now", iso(31 * DAY))

    assert api.get("/api/v1/traces/old").status_code == 404
    after = causes_of_the_young_answers(api)
    assert (after["answers"], after["unexplained"]) == (2, 1)
    assert [(c["agent_id"], c["reason"], c["examples"]) for c in after["causes"]] == [("tooler", "error", ["other"])]
    # The same as the per-trace endpoint says now: no anomaly left upstream of the answer.
    walked = api.get("/api/v1/traces/young/nodes/young-final/root-cause").json()
    assert walked["root_causes"] == []
