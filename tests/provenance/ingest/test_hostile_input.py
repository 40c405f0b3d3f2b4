"""Hostile input gets a clear per-event (or per-request) error, never a 500, and
what is already stored cannot break a read: the limits of the contract section
"Serving and limits" and the ingest table of the README."""

import json

import orjson
import pytest
from django.db import connection

from provenance.models import Node, Trace
from tests.provenance.stored import error_for, statuses, stored_rows
from tests.support.events import node_event


def nested(depth: int, leaf=1):
    """An object `depth` levels deep: {"a": {"a": ... leaf}}."""
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


# parent_ids


def test_a_node_with_more_than_1000_parents_is_refused_alone(project, ingest):
    many = [f"p{i}" for i in range(1001)]

    result = ingest(node_event("wide", parents=many), node_event("ok"))

    assert error_for(result, "ev-wide") == {
        "id": "ev-wide", "status": 400, "message": "parent_ids: at most 1000 ids per node (got 1001)"}
    assert statuses(result)["ev-ok"] == 201


def test_a_node_with_40000_parents_does_not_lose_the_batch(project, ingest):
    result = ingest(node_event("wider", parents=[f"q{i}" for i in range(40_000)]), node_event("ok"))

    assert error_for(result, "ev-wider")["status"] == 400
    assert stored_rows(project)["nodes"] == 1


def test_1000_parents_are_kept_in_order(api, ingest):
    many = [f"p{i}" for i in range(1000)]

    assert ingest(node_event("wide", parents=many))["errors"] == []
    assert api.get("/api/v1/traces/t1").json()["nodes"][0]["parent_ids"] == many


# timestamps


@pytest.mark.parametrize(
    "timestamp",
    ["0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00", "1969-12-31T23:59:59Z", "2201-01-01T00:00:00Z",
     "9999-12-31T23:59:59-01:00", "1970-01-01T00:30:00+01:00"],
)
def test_a_timestamp_outside_1970_to_2200_is_refused_per_event(project, ingest, timestamp):
    event = node_event("p1")
    event["timestamp"] = timestamp

    result = ingest(event, node_event("ok"))

    assert error_for(result, "ev-p1")["message"] == (
        f"timestamp: {timestamp!r} is outside the years 1970 to 2200")
    assert statuses(result)["ev-ok"] == 201


@pytest.mark.parametrize("timestamp", ["1970-01-01T00:00:00Z", "2200-12-31T23:59:59+00:00"])
def test_timestamps_at_the_ends_of_the_range_are_accepted(ingest, timestamp):
    event = node_event("p1")
    event["timestamp"] = timestamp

    assert ingest(event)["errors"] == []


@pytest.mark.parametrize("value", ["0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "0001-01-01T00:00:00+01:00"])
@pytest.mark.parametrize(
    "url",
    ["/api/v1/traces?since={v}", "/api/v1/traces?until={v}", "/api/v1/metrics/overview?start={v}",
     "/api/v1/metrics/overview?end={v}", "/api/v1/metrics/values?start={v}&end=2026-11-20T00:00:00Z"],
)
def test_date_parameters_at_the_calendars_edges_are_400(api, url, value):
    response = api.get(url.format(v=value.replace("+", "%2B")))

    assert response.status_code == 400, response.content
    assert "outside the years 1970 to 2200" in orjson.dumps(response.json()).decode()


# nesting depth


@pytest.mark.parametrize("field", ["metadata", "metrics"])
@pytest.mark.parametrize("depth", [65, 300, 600])
def test_objects_nested_deeper_than_64_levels_are_refused_per_event(project, ingest, field, depth):
    result = ingest(node_event("deep", **{field: nested(depth)}), node_event("ok"))

    assert error_for(result, "ev-deep")["message"] == f"{field}: nested deeper than 64 levels"
    assert statuses(result)["ev-ok"] == 201


@pytest.mark.parametrize("field", ["metadata", "metrics"])
def test_objects_exactly_64_levels_deep_are_kept(project, ingest, field):
    # Levels 62 to 64: an object, a list, a list; the 64-bit limits themselves are kept.
    value = nested(61, leaf={"n": 2**64 - 1, "list": [[-(2**63), 1.5]]})
    result = ingest(node_event("deep", **{field: value}))

    assert statuses(result)["ev-deep"] == 201
    assert getattr(Node.objects.get(project=project, product_id="deep"), field) == value


@pytest.mark.parametrize("field", ["metadata", "metrics"])
def test_a_number_past_64_bits_deep_in_lists_is_named_by_its_path(project, ingest, field):
    result = ingest(node_event("big", **{field: {"ok": "x", "rows": [{"n": 1}, {"n": [0, 1e20]}]}}))

    assert error_for(result, "ev-big")["message"] == (
        f"{field}.rows[1].n[1]: a whole number outside the 64-bit range (-9223372036854775808 to 18446744073709551615)"
    )


def test_64_levels_are_kept(api, ingest):
    assert ingest(node_event("deep", metadata=nested(64)))["errors"] == []
    assert api.get("/api/v1/traces/t1/nodes/deep").json()["metadata"] == nested(64)


def test_lists_count_as_levels_too(ingest):
    value = [1]
    for _ in range(70):
        value = [value]

    assert error_for(ingest(node_event("deep", metadata={"a": value})), "ev-deep")["status"] == 400


def test_a_body_too_deep_for_the_decoder_is_400_with_nothing_stored(api, project):
    body = b'{"batch": [' + b"[" * 3000 + b"]" * 3000 + b"]}"

    response = api.generic("POST", "/api/v1/ingest", body, content_type="application/json")

    assert response.status_code == 400
    assert set(stored_rows(project).values()) == {0}


@pytest.mark.parametrize("depth", [300, 3000, 100_000])
@pytest.mark.parametrize("url", ["/api/v1/alert-rules", "/api/v1/datasets", "/api/v1/runs"])
def test_a_deep_json_body_to_any_endpoint_is_400(api, url, depth):
    body = b'{"name": ' + b"[" * depth + b"]" * depth + b"}"

    response = api.generic("POST", url, body, content_type="application/json")

    assert response.status_code == 400, response.content
    assert "nested" in response.json()["error"]


@pytest.mark.parametrize(("method", "path"), [("POST", "/api/v1/alert-rules"), ("PUT", "/api/v1/policy"),
                                            ("POST", "/api/v1/datasets"), ("PATCH", "/api/v1/project")])
def test_a_huge_json_body_to_an_endpoint_other_than_ingest_is_413_as_for_ingest(api, method, path):
    body = orjson.dumps({"name": "x" * (6 * 1024 * 1024)})

    response = api.generic(method, path, body, content_type="application/json")

    assert response.status_code == 413
    assert "larger than" in response.json()["error"]
    assert api.get("/api/v1/policy").json()["version"] == 0


def test_huge_integers_in_a_body_are_400_not_500(api):
    body = b'{"name": "r", "match": "all", "conditions": [{"metric": "node_count", "window": "15m", "op": ">", ' \
           b'"threshold": ' + b"9" * 5000 + b"}], \"destinations\": []}"

    response = api.generic("POST", "/api/v1/alert-rules", body, content_type="application/json")

    assert response.status_code == 400


# NUL in path segments


@pytest.mark.parametrize(
    "url",
    ["/api/v1/traces/t%00", "/api/v1/traces/t1/nodes/p%001", "/api/v1/traces/t1/nodes/p1%00/root-cause",
     "/api/v1/traces/%00/nodes/p1/impact", "/api/v1/alert-rules/1%00", "/api/v1/datasets/d%00"],
)
def test_a_nul_in_an_api_path_is_404(api, ingest, url):
    ingest(node_event("p1"))

    response = api.get(url)

    assert response.status_code == 404
    assert response.json()["error"]


@pytest.mark.parametrize(
    "url",
    ["/p/acme/traces/t%00/", "/api/v1/traces/t1%00/graph", "/p/acme%00/traces/", "/alerts/acme/1%00/"],
)
def test_a_nul_in_a_page_path_is_404(member, ingest, url):
    ingest(node_event("p1"))

    assert member.get(url).status_code == 404


@pytest.mark.parametrize(
    "url", ["/api/v1/traces/t1/nodes/p1?view=explorer&project=%00",
            "/api/v1/traces/t1/nodes/p1/root-cause?view=%00",
            "/p/acme/traces/?agent_id=%00", "/metrics/acme/?step=a%00"],
)
def test_a_nul_in_a_page_query_parameter_is_400(member, ingest, url):
    ingest(node_event("p1"))

    assert member.get(url).status_code == 400


def test_a_nul_in_an_api_query_parameter_is_400_naming_it(api):
    response = api.get("/api/v1/traces?q=a%00b")

    assert response.status_code == 400
    assert response.json() == {"error": "q: query parameters must not contain NUL characters"}


# what is stored already


def store_year_one(project, ingest):
    """A year-1 timestamp (with an offset, so 1 BC in UTC) as an older ingest let it in."""
    ingest(node_event("in", confidence=0.9), node_event("old", parents=["in"], seconds=1, confidence=0.2))
    if connection.vendor != "postgresql":
        pytest.skip("the stored form of a BC timestamp is PostgreSQL's")
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Node._meta.db_table} SET timestamp = '0001-01-01T00:00:00+01:00' WHERE product_id = 'old'")
        cursor.execute(f"UPDATE {Trace._meta.db_table} SET started_at = '0001-01-01T00:00:00+01:00'")


@pytest.mark.parametrize(
    "url",
    ["/api/v1/traces", "/api/v1/traces/t1", "/api/v1/traces/t1/nodes/old", "/api/v1/traces/t1/nodes/old/root-cause",
     "/api/v1/traces/t1/nodes/in/impact"],
)
def test_a_stored_year_one_timestamp_does_not_break_the_api(project, api, ingest, url):
    store_year_one(project, ingest)

    response = api.get(url)

    assert response.status_code == 200, response.content


@pytest.mark.parametrize(
    "url",
    ["/p/acme/traces/", "/p/acme/traces/t1/", "/api/v1/traces/t1/graph", "/api/v1/traces/t1/nodes/old?view=explorer",
     "/api/v1/traces/t1/nodes/old/root-cause?view=explorer", "/p/acme/bad-answers/"],
)
def test_a_stored_year_one_timestamp_does_not_break_the_pages(project, member, ingest, url):
    store_year_one(project, ingest)

    assert member.get(url).status_code == 200


def test_a_trace_with_a_year_one_timestamp_can_be_deleted(project, ingest):
    store_year_one(project, ingest)

    Trace.objects.get(project=project, trace_id="t1").delete()

    assert stored_rows(project)["nodes"] == 0


def store_deep_metadata(project, ingest, depth: int):
    ingest(node_event("deep"))
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {Node._meta.db_table} SET metadata = %s WHERE product_id = 'deep'",
                       [json.dumps(nested(depth))])


@pytest.mark.parametrize("depth", [254, 400])
def test_stored_deep_metadata_does_not_break_the_node_reads(project, api, member, ingest, depth):
    store_deep_metadata(project, ingest, depth)

    assert api.get("/api/v1/traces/t1/nodes/deep").status_code == 200
    page_json = member.get("/api/v1/traces/t1/nodes/deep?view=explorer")
    assert page_json.status_code == 200
    assert "nested deeper than" in page_json.content.decode()

