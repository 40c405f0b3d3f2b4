"""Events as an agent would send them, at times relative to BASE_TIME."""

from datetime import UTC, datetime, timedelta

BASE_TIME = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def node_event(product_id: str, trace_id: str = "t1", *, parents=(), seconds: float = 0, event_id=None, **body):
    """A `node` event as an agent would send it."""
    return {
        "id": event_id or f"ev-{product_id}",
        "type": "node",
        "timestamp": (BASE_TIME + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z"),
        "body": {"trace_id": trace_id, "product_id": product_id, "agent_id": body.pop("agent_id", "agent"),
                 "parent_ids": list(parents), **body},
    }


def fuse_event(product_id: str, decision: str = "block", trace_id: str = "t1", *, event_id=None, **body):
    return {
        "id": event_id or f"fuse-{product_id}-{decision}",
        "type": "fuse",
        "timestamp": BASE_TIME.isoformat(),
        "body": {"trace_id": trace_id, "product_id": product_id, "decision": decision,
                 "reason": body.pop("reason", "below threshold"), "threshold": 0.5, "by_agent_id": "router", **body},
    }


def review_event(trace_id: str, verdict: str, product_id: str | None = None, *, event_id=None):
    body = {"trace_id": trace_id, "verdict": verdict}
    if product_id:
        body["product_id"] = product_id
    return {"id": event_id or f"review-{trace_id}-{verdict}", "type": "review", "timestamp": BASE_TIME.isoformat(),
            "body": body}
