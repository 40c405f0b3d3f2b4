"""Webhook attempts are counted by outcome in the process metrics (GET /ops/metrics)."""

import pytest
from prometheus_client import REGISTRY

from tests.support.alerts import SECRET
from tests.support.events import node_event


@pytest.mark.django_db
def test_webhook_attempts_are_counted_by_outcome(create_rule, ingest, receiver, evaluate):
    def delivered() -> float:
        return REGISTRY.get_sample_value("denoise_webhook_deliveries_total", {"outcome": "delivered"}) or 0.0

    before = delivered()
    create_rule(name="fuses", conditions=[{"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.5}],
                destinations=[{"type": "webhook", "url": receiver.url, "secret": SECRET}])
    ingest(node_event("f1", "t1", seconds=10, fuse={"decision": "block", "reason": "low"}))
    evaluate(1)
    receiver.wait_for(1)
    assert delivered() == before + 1
