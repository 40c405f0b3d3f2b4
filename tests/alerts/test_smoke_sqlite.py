"""The embedded default (SQLite): a rule fires, its webhook is delivered, and a
retry is scheduled and made, on the portable paths."""

import io

import pytest
from django.core.management import call_command
from django.db import connection

from tests.support.alerts import SECRET
from tests.support.events import node_event

pytestmark = pytest.mark.sqlite_smoke


def test_embedded_default_evaluates_and_delivers(create_rule, ingest, evaluate, alert_events, receiver):
    if connection.vendor != "sqlite":
        pytest.skip("runs on the embedded default only (make test-sqlite)")
    receiver.script = [500]
    create_rule(conditions=[{"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.5}],
                destinations=[{"type": "webhook", "url": receiver.url, "secret": SECRET}])
    ingest(node_event("f1", seconds=5, fuse={"decision": "block", "reason": "x"}))
    evaluate(1)
    evaluate(2)
    assert [e["state"] for e in alert_events()] == ["firing"]
    call_command("retry_deliveries", stdout=io.StringIO())
    received = receiver.wait_for(2)
    assert [r.verified for r in received] == [True, True]
    assert received[0].headers["webhook-id"] == received[1].headers["webhook-id"]
    evaluate(10)
    assert [e["state"] for e in alert_events()] == ["resolved", "firing"]
