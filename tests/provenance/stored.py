"""What a project has stored, counted per table, and small request helpers for
the ingest contract tests."""

import orjson

from provenance.models import Edge, Fuse, IngestedEvent, Node, Review, Trace
from tenancy.models import Project

STORED_MODELS = {"traces": Trace, "nodes": Node, "edges": Edge, "fuses": Fuse, "reviews": Review}


def stored_rows(project: Project | None = None) -> dict[str, int]:
    """Row counts per table, for one project or for all; `event_ids` counts the
    accepted events' idempotency records."""
    scope = {} if project is None else {"project": project}
    counts = {name: model.objects.filter(**scope).count() for name, model in STORED_MODELS.items()}
    counts["event_ids"] = IngestedEvent.objects.filter(**scope).count()
    return counts


def post_raw(client, body: bytes, **headers):
    """POSTs bytes as they are, for bodies a JSON-encoding client would not send."""
    return client.generic("POST", "/api/v1/ingest", body, content_type="application/json", **headers)


def batch_bytes(events: list) -> bytes:
    return orjson.dumps({"batch": events})


def statuses(result: dict) -> dict[str, int]:
    """Event id -> status, from a 207 answer."""
    return {entry["id"]: entry["status"] for entry in result["successes"] + result["errors"]}


def error_for(result: dict, event_id) -> dict:
    [entry] = [e for e in result["errors"] if e["id"] == event_id]
    return entry


def node_of(api, trace_id: str, product_id: str) -> dict:
    response = api.get(f"/api/v1/traces/{trace_id}/nodes/{product_id}")
    assert response.status_code == 200, response.content
    return response.json()


def root_cause(api, product_id: str, trace_id: str = "t1") -> dict:
    response = api.get(f"/api/v1/traces/{trace_id}/nodes/{product_id}/root-cause")
    assert response.status_code == 200, response.content
    return response.json()


def impact(api, product_id: str, trace_id: str = "t1") -> list[str]:
    response = api.get(f"/api/v1/traces/{trace_id}/nodes/{product_id}/impact")
    assert response.status_code == 200, response.content
    return response.json()["descendants"]
