"""GET /api/v1/schema: an OpenAPI 3 document of every /api/v1/ endpoint."""

import re

import pytest
from drf_spectacular.validation import validate_schema

# Every /api/v1/ path the contract names (parameter names aside), and the API's own.
CONTRACT_PATHS = [
    "/api/v1/ingest",
    "/api/v1/traces/{}",
    "/api/v1/traces/{}/nodes/{}/root-cause",
    "/api/v1/traces/{}/nodes/{}/impact",
    "/api/v1/health/latest",
    "/api/v1/alert-rules",
    "/api/v1/alert-rules/{}",
    "/api/v1/alerts",
    "/api/v1/datasets",
    "/api/v1/datasets/{}",
    "/api/v1/datasets/{}/items",
    "/api/v1/datasets/{}/items/{}",
    "/api/v1/datasets/{}/rollback",
    "/api/v1/datasets/{}/recheck",
    "/api/v1/runs",
    "/api/v1/runs/{}",
    "/api/v1/runs/{}/results",
    "/api/v1/runs/{}/finish",
    "/api/v1/runs/{}/compare",
    "/api/v1/policy",
    "/api/v1/policy/versions",
    "/api/v1/policy/rollback",
    "/api/v1/project",
    "/api/v1/schema",
]
OUR_PATHS = ["/api/v1/", "/api/v1/traces", "/api/v1/traces/{}/nodes/{}", "/api/v1/metrics/values"]


def shape(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "{}", path)


@pytest.fixture
def schema(api):
    response = api.get("/api/v1/schema")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/json")
    return response.json()


def test_the_schema_is_a_valid_openapi_3_document(schema):
    assert schema["openapi"].startswith("3.")
    validate_schema(schema)


def test_the_schema_covers_every_path_of_the_contract(schema):
    documented = {shape(path) for path in schema["paths"]}
    missing = [path for path in CONTRACT_PATHS + OUR_PATHS if path not in documented]
    assert not missing, f"not in the schema: {missing}"


def test_every_operation_documents_its_answers_and_the_error_shape(schema):
    error = schema["components"]["schemas"]["Error"]
    assert error["required"] == ["error"] and set(error["properties"]) == {"error", "fields"}
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            responses = operation["responses"]
            assert any(code.startswith("2") or code == "default" for code in responses), (method, path)
            assert responses["401"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
            assert operation.get("security"), (method, path)


def test_ingest_documents_the_207_answer_and_an_example(schema):
    ingest = schema["paths"]["/api/v1/ingest"]["post"]
    answer = ingest["responses"]["207"]["content"]["application/json"]
    assert set(answer["schema"]["properties"]) == {"successes", "errors"}
    assert set(answer["schema"]["properties"]["errors"]["items"]["properties"]) == {"id", "status", "message"}
    assert answer["examples"]
    assert ingest["requestBody"]["content"]["application/json"]["examples"]


def test_the_otlp_endpoint_is_described_in_words(schema):
    assert "POST /v1/traces" in schema["info"]["description"]
    assert "openinference.span.kind" in schema["info"]["description"]


def test_the_schema_needs_a_key_like_the_rest_of_the_api(client, db):
    response = client.get("/api/v1/schema")
    assert response.status_code == 401
    assert response.json() == {"error": "an API key is required: Authorization: Bearer <api_key>"}


def test_the_api_root_links_the_schema_docs_and_every_endpoint(api):
    response = api.get("/api/v1/")
    assert response.status_code == 200
    root = response.json()
    assert root["schema"].endswith("/api/v1/schema")
    assert root["docs"].endswith("/api/v1/docs")
    assert root["otlp_traces"].endswith("/v1/traces")
    assert root["endpoints"]["/api/v1/alert-rules"] == ["GET", "POST"]


def test_the_docs_page_revalidates_the_schema_instead_of_fetching_it_again(api):
    first = api.get("/api/v1/schema", HTTP_ACCEPT_ENCODING="gzip")
    assert first.status_code == 200
    assert first["Content-Encoding"] == "gzip"
    assert first["Cache-Control"] == "private, no-cache"
    # Compressed, the document is a small share of its ~700 kB.
    assert len(first.content) < len(api.get("/api/v1/schema").content) / 5

    again = api.get("/api/v1/schema", HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304
    assert again.content == b""

    changed = api.get("/api/v1/schema", HTTP_IF_NONE_MATCH='"another"')
    assert changed.status_code == 200
    assert changed.json()["openapi"].startswith("3.")


def test_a_known_etag_without_a_key_is_still_refused(client, api, db):
    etag = api.get("/api/v1/schema")["ETag"]
    response = client.get("/api/v1/schema", HTTP_IF_NONE_MATCH=etag)
    assert response.status_code == 401
