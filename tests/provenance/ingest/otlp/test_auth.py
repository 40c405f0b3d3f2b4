"""/v1/traces takes the same bearer keys as /api/v1/: a missing or unknown key is
401 with a Status body; spans land in the key's own project only."""

import pytest
from opentelemetry.sdk.trace.export import SpanExportResult

from tests.provenance.ingest.otlp.spans import exporter_to, finished_spans
from tests.provenance.ingest.otlp.test_partial_success import TRACE, export, span


@pytest.mark.parametrize("key", ["", "dd_not-a-key-anyone-was-given"])
def test_a_missing_or_unknown_key_is_401(otlp_post, project, key):
    response = otlp_post(export(span("00000000000000e1")), key=key)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert "API key" in response.json()["message"]


def test_a_revoked_key_is_401(otlp_post, project):
    key, raw = project.issue_api_key("old")
    key.revoke()
    assert otlp_post(export(span("00000000000000e1")), key=raw).status_code == 401


def test_spans_land_in_the_keys_project_only(otlp_post, api, make_project):
    _, other_key = make_project("globex")
    assert otlp_post(export(span("00000000000000e2")), key=other_key).status_code == 200
    assert api.get(f"/api/v1/traces/{TRACE}").status_code == 404


def test_the_sdk_exporter_with_a_bad_key_gives_up(api, live_server):
    assert exporter_to(live_server, "nope").export(finished_spans()) == SpanExportResult.FAILURE
