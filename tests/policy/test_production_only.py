"""The escalation inbox and Calibration count production traces only: an
evaluation run's escalations and reviews stay out of both."""

from datetime import timedelta

import pytest

from tests.policy.calibration_data import reviewed_nodes
from tests.support.events import BASE_TIME, node_event

pytestmark = pytest.mark.django_db

RANGE = {"start": BASE_TIME.replace(hour=0).strftime("%Y-%m-%dT%H:%M:%S"),
         "end": BASE_TIME.replace(hour=23).strftime("%Y-%m-%dT%H:%M:%S")}


def escalation(product_id, trace_id, seconds=0):
    return {"id": f"esc-{product_id}", "type": "escalation",
            "timestamp": (BASE_TIME + timedelta(seconds=seconds)).isoformat(),
            "body": {"trace_id": trace_id, "product_id": product_id, "reason": "fused three times"}}


def in_environment(events, environment):
    for event in events:
        if event["type"] == "node":
            event["body"]["environment"] = environment
    return events


def test_the_inbox_and_calibration_leave_evaluation_traces_out(member, ingest, api):
    ingest(node_event("p", "prod-t", confidence=0.2), escalation("p", "prod-t"))
    ingest(*in_environment([node_event("e", "eval-t", confidence=0.2)], "evaluation"), escalation("e", "eval-t"))
    ingest(*reviewed_nodes(40, prefix="prod"))
    ingest(*in_environment(reviewed_nodes(25, prefix="eval"), "evaluation"))

    inbox = member.get("/policy/acme/inbox/").content.decode()
    assert 'data-escalation=' in inbox and inbox.count('class="card escalation"') == 1
    assert "prod-t" in inbox and "eval-t" not in inbox
    body = api.get("/api/v1/metrics/calibration", RANGE).json()
    assert body["count"] == 40
