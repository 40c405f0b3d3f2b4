"""Scopes (the contract's "Auth"): every route of the API, OTLP and the
Prometheus scrape, asked with every method its view answers, by a key of each
single scope. A request outside its key's scopes answers 403 naming the scope
it needs and changes nothing (every table's rows counted before and after);
one inside is never refused. The expectations are the contract's words,
written here as a table, not read back from the views' own declarations."""

import json
import re
from datetime import timedelta

import pytest
from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from rest_framework.test import APIClient

from tenancy.models import ApiKey
from tests.support.events import node_event

# What `ingest` may do beyond nothing: "POST /api/v1/ingest, POST /v1/traces,
# GET /api/v1/policy, and recording evaluation runs (POST /api/v1/runs, its
# results and finish, reading datasets)".
INGEST_MAY = {
    ("POST", "api/v1/ingest"), ("POST", "v1/traces"), ("GET", "api/v1/policy"),
    ("POST", "api/v1/runs"), ("POST", "api/v1/runs/<int:run_id>/results"), ("POST", "api/v1/runs/<int:run_id>/finish"),
    ("GET", "api/v1/datasets"), ("GET", "api/v1/datasets/<str:name>"), ("GET", "api/v1/datasets/<str:name>/versions"),
}
# Only `admin`, even to read.
ADMIN_ONLY_PREFIXES = ("api/v1/keys", "api/v1/audit")
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
OTLP_SPANS = {"resourceSpans": [{"scopeSpans": [{"spans": [{
    "traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00000000000000a1", "name": "step",
    "startTimeUnixNano": "1763629200000000000", "endTimeUnixNano": "1763629200500000000"}]}]}]}


def key_routes() -> list[str]:
    """Every route that takes an API key: under /api/v1/, /v1/traces and /metrics."""

    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif isinstance(pattern, URLPattern):
                yield prefix + str(pattern.pattern), pattern.callback

    return [(route, view) for route, view in walk(get_resolver().url_patterns)
            if route.startswith(("api/v1/", "v1/traces")) or route == "metrics"]


def methods_of(view) -> list[str]:
    view_class = getattr(view, "view_class", None)
    if view_class is not None:
        return [m for m in METHODS if hasattr(view_class, m.lower())]
    return ["POST"] if getattr(view, "__name__", "") == "traces" else ["GET"]


def allowed(scope: str, method: str, route: str) -> bool:
    if scope == "admin":
        return True
    if route.startswith(ADMIN_ONLY_PREFIXES):
        return False
    if scope == "read":
        return method == "GET"
    return (method, route.rstrip("/")) in INGEST_MAY


def every_row_count() -> dict[str, int]:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


@pytest.fixture
def world(project, api):
    return build_world(project, api)


def build_world(project, api) -> dict:
    """Something behind every id the routes name: a trace, a rule, a silence, a
    truth set with an item and an open run, and a key to rotate and revoke."""
    assert api.post("/api/v1/ingest", {"batch": [node_event("p1"), node_event("p2", parents=["p1"])]},
                    format="json").status_code == 207
    rule = api.post("/api/v1/alert-rules", {"name": "r", "conditions": [
        {"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.5}]}, format="json").json()
    until = (timezone.now() + timedelta(days=1)).isoformat()
    silence = api.post("/api/v1/silences", {"until": until, "reason": "r"}, format="json").json()
    destination = api.post("/api/v1/destinations", {"name": "d", "type": "email", "to": ["a@example.org"]},
                           format="json")
    assert api.post("/api/v1/datasets", {"name": "ds"}, format="json").status_code == 201
    assert api.post("/api/v1/datasets/ds/items", {"items": [{"id": "i1", "input": "q", "expected": 1}]},
                    format="json").status_code == 200
    run = api.post("/api/v1/runs", {"dataset": "ds", "name": "v1"}, format="json").json()
    victim, _ = project.issue_api_key("victim")
    return {"trace_id": "t1", "product_id": "p1", "rule_id": rule["id"], "silence_id": silence["id"],
            "destination_id": destination.json().get("id", 1), "name": "ds", "item_id": "i1", "run_id": run["id"],
            "key_id": victim.pk}


def fill(route: str, ids: dict) -> str:
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(ids.get(m.group(1), "overview")), route)


def request_body(route: str, ids: dict) -> tuple[bytes, str]:
    bodies = {
        "api/v1/ingest": {"batch": [node_event("p9")]},
        "v1/traces": OTLP_SPANS,
        "api/v1/runs": {"dataset": "ds", "name": "v2"},
        "api/v1/runs/<int:run_id>/results": {"results": [{"item_id": "i1", "actual": 1}]},
        "api/v1/keys": {"name": "k", "scopes": ["read"]},
    }
    return json.dumps(bodies.get(route, {"name": "x"})).encode(), "application/json"


def client_with(project, scope: str) -> APIClient:
    _, raw = project.issue_api_key(f"only-{scope}", [scope])
    client = APIClient(raise_request_exception=False)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


@pytest.mark.parametrize("scope", ["ingest", "read", "admin"])
def test_each_scope_gets_exactly_what_the_contract_gives_it(project, world, scope):
    client = client_with(project, scope)
    routes = key_routes()
    assert {"api/v1/ingest", "v1/traces", "metrics", "api/v1/keys"} <= {route for route, _ in routes}
    wrong = []
    for route, view in routes:
        for method in methods_of(view):
            url = fill(route, world)
            body, content_type = request_body(route, world) if method != "GET" else (b"", "application/json")
            before = every_row_count()
            response = client.generic(method, url, body, content_type=content_type)
            after = every_row_count()
            if allowed(scope, method, route):
                if response.status_code in (401, 403):
                    wrong.append(f"{scope} {method} {url}: refused {response.status_code} {response.content[:200]}")
            elif response.status_code != 403:
                wrong.append(f"{scope} {method} {url}: {response.status_code}, expected 403")
            else:
                if before != after:
                    changed = {k: (before[k], after[k]) for k in before if before[k] != after[k]}
                    wrong.append(f"{scope} {method} {url}: refused but changed {changed}")
                if route != "v1/traces" and response.json().get("required_scope") not in ("ingest", "read", "admin"):
                    wrong.append(f"{scope} {method} {url}: the 403 does not name the scope: {response.content}")
    assert wrong == [], "\n".join(wrong)


@pytest.mark.parametrize("scope", ["ingest", "read"])
def test_a_refused_write_is_refused_before_its_body_is_read(project, settings, scope):
    """A body far past every limit (else a 413) still gets the scope's 403:
    the key is judged first."""
    client = client_with(project, scope)
    huge = b'{"profiles": "' + b"x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10) + b'"}'

    response = client.generic("PUT", "/api/v1/policy", huge, content_type="application/json")

    assert response.status_code == 403, response.content
    assert response.json()["required_scope"] == "admin"


def test_the_403_names_the_narrowest_scope_that_would_do(project):
    read = client_with(project, "read")
    ingest = client_with(project, "ingest")

    assert read.post("/api/v1/ingest", {"batch": []}, format="json").json()["required_scope"] == "ingest"
    assert ingest.get("/api/v1/traces").json()["required_scope"] == "read"
    assert ingest.put("/api/v1/policy", {}, format="json").json()["required_scope"] == "admin"
    assert read.get("/api/v1/keys").json()["required_scope"] == "admin"


def test_otlp_refuses_a_read_key_in_its_own_format(project):
    from provenance.ingest import otlp

    client = client_with(project, "read")
    response = client.generic("POST", "/v1/traces", json.dumps(OTLP_SPANS).encode(), content_type=otlp.JSON)

    assert response.status_code == 403
    assert response["Content-Type"].startswith(otlp.JSON)
    assert "ingest" in response.json()["message"]
    assert ApiKey.objects.filter(project=project).count() == 2  # the fixture's and this one: nothing else made


def test_prometheus_takes_read_and_refuses_ingest(project):
    assert client_with(project, "read").get("/metrics").status_code == 200
    refused = client_with(project, "ingest").get("/metrics")
    assert refused.status_code == 403
    assert refused.json()["required_scope"] == "read"
