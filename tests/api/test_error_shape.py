"""Every 4xx from the HTTP API has one shape:
{"error": "<one line>", "fields": {"path.to.field": "message"}} (fields only
when a field is at fault)."""

import gzip

import pytest


def assert_error_shape(response, status: int, fields: set[str] | None = None) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert isinstance(body["error"], str) and body["error"] and "\n" not in body["error"]
    assert set(body) <= {"error", "fields"}
    if fields is None:
        assert "fields" not in body
    else:
        assert set(body["fields"]) == fields
        assert all(isinstance(message, str) for message in body["fields"].values())
    return body


READ_PATHS = [
    "/api/v1/traces/nope", "/api/v1/traces/nope/nodes/x", "/api/v1/traces/nope/nodes/x/root-cause",
    "/api/v1/traces/nope/nodes/x/impact", "/api/v1/alert-rules/999999", "/api/v1/metrics/nope",
]


@pytest.mark.parametrize("path", READ_PATHS)
def test_an_unknown_object_is_a_404(api, path):
    assert_error_shape(api.get(path), 404)


@pytest.mark.parametrize("path", ["/api/v1/no-such-endpoint", "/api/v1/metrics/values/extra", "/api/nothing"])
def test_an_unknown_api_path_is_a_json_404(api, path):
    body = assert_error_shape(api.get(path), 404)
    assert "/api/v1/" in body["error"]


@pytest.mark.parametrize("method, path", [
    ("put", "/api/v1/traces"), ("delete", "/api/v1/ingest"), ("get", "/api/v1/ingest"),
    ("post", "/api/v1/health/latest"), ("put", "/api/v1/alert-rules/1"), ("post", "/api/v1/schema"),
])
def test_a_method_not_allowed_is_a_405_with_allow(api, method, path):
    response = getattr(api, method)(path)
    assert_error_shape(response, 405)
    assert response["Allow"]


def test_a_body_that_is_not_json_is_a_400(api):
    assert_error_shape(api.post("/api/v1/alert-rules", b"{nope", content_type="application/json"), 400)
    assert_error_shape(api.post("/api/v1/ingest", b"{nope", content_type="application/json"), 400)


def test_an_unsupported_content_type_is_a_415(api):
    body = assert_error_shape(api.post("/api/v1/alert-rules", b"name=x", content_type="text/plain"), 415)
    assert "text/plain" in body["error"]


def test_a_json_body_sent_without_a_content_type_is_read_as_json(api):
    response = api.generic("PUT", "/api/v1/policy", b'{"profiles": {"default": {"block": 0.4}}}', content_type="")
    assert response.status_code == 200, response.content
    assert response.json()["profiles"]["default"]["block"] == 0.4
    assert_error_shape(api.generic("POST", "/api/v1/datasets", b"name=x", content_type=""), 400)


def test_a_body_over_the_limit_is_a_413(api, settings):
    settings.INGEST_MAX_BYTES = 1000
    assert_error_shape(api.post("/api/v1/ingest", b'{"batch": [' + b" " * 2000 + b"]}",
                                content_type="application/json"), 413)
    assert_error_shape(api.post("/api/v1/ingest", {"batch": [{}] * 1001}, format="json"), 413)


def test_a_body_over_the_api_limit_is_refused_before_it_is_read(api, settings):
    settings.API_MAX_BODY_BYTES = 100
    response = api.post("/api/v1/alert-rules", {"name": "x" * 500}, format="json")
    assert "larger than 100 bytes" in assert_error_shape(response, 413)["error"]


def test_a_request_django_itself_refuses_is_a_json_400(api, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 2
    response = api.get("/api/v1/traces?" + "&".join(f"f{i}=1" for i in range(10)))
    assert_error_shape(response, 400)


def test_a_bad_gzip_body_is_a_400(api):
    response = api.post("/api/v1/ingest", gzip.compress(b"{")[:5], content_type="application/json",
                        HTTP_CONTENT_ENCODING="gzip")
    assert_error_shape(response, 400)


def test_invalid_fields_are_named_with_dotted_paths(api):
    rule = {"name": "r", "conditions": [{"metric": "fuse_rate", "window": "15m", "op": ">", "threshold": 0.2},
                                        {"metric": "nope", "window": "15m", "op": "is", "threshold": 0.2}]}
    body = assert_error_shape(api.post("/api/v1/alert-rules", rule, format="json"), 400,
                              {"conditions[1].metric", "conditions[1].op"})
    assert body["error"].startswith("conditions[1].metric: ")


@pytest.mark.parametrize("path, field", [
    ("/api/v1/traces?since=yesterday", "since"),
    ("/api/v1/traces?page_size=-1", "page_size"),
    ("/api/v1/traces?has_fused=maybe", "has_fused"),
    ("/api/v1/health/latest?kind=nope", "kind"),
    ("/api/v1/alerts?state=nope", "state"),
    ("/api/v1/metrics/values?metrics=nope", "metrics"),
    ("/api/v1/metrics/overview?range=5y", "range"),
])
def test_an_invalid_query_parameter_is_a_400_naming_it(api, path, field):
    assert_error_shape(api.get(path), 400, {field})


def test_ingest_keeps_its_per_event_entries(api):
    response = api.post("/api/v1/ingest", {"batch": [{"id": "e1", "type": "node"}]}, format="json")
    assert response.status_code == 207
    [entry] = response.json()["errors"]
    assert set(entry) == {"id", "status", "message"}
