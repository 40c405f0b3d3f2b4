"""Exports that cannot be decoded answer 400 with a google.rpc.Status body in the
request's encoding; unsupported types 415; oversized bodies 413. Nothing is stored."""

import gzip

import orjson
import pytest
from google.rpc.status_pb2 import Status

from provenance.models import IngestedEvent, Node

PROTOBUF = "application/x-protobuf"


def assert_nothing_stored(project):
    assert not Node.objects.filter(project=project).exists()
    assert not IngestedEvent.objects.filter(project=project).exists()


def status_of(response) -> Status:
    assert response["Content-Type"] == PROTOBUF
    return Status.FromString(response.content)


def test_a_body_that_is_not_protobuf_is_400_with_a_protobuf_status(otlp_post, project):
    response = otlp_post(b"\xff\xff\xff\xff not protobuf", PROTOBUF)
    assert response.status_code == 400
    status = status_of(response)
    assert status.code == 3  # INVALID_ARGUMENT
    assert "not a protobuf ExportTraceServiceRequest" in status.message
    assert_nothing_stored(project)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"resourceSpans": "many"}', "resourceSpans"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "zz", "spanId": "00"}]}]}]}',
         "resourceSpans[0].scopeSpans[0].spans[0].traceId: 'zz' is not a hex string"),
        (b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"startTimeUnixNano": "soon"}]}]}]}', "startTimeUnixNano"),
    ],
)
def test_bad_json_is_400_naming_the_problem(otlp_post, project, body, message):
    response = otlp_post(body)
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert message in response.json()["message"]
    assert response.json()["code"] == 3
    assert_nothing_stored(project)


def test_a_body_that_is_not_valid_gzip_is_400(otlp_post):
    response = otlp_post(b"plain text", PROTOBUF, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 400
    assert "gzip" in status_of(response).message


def test_an_unsupported_content_type_is_415(otlp_post):
    response = otlp_post(b"<spans/>", "application/xml")
    assert response.status_code == 415
    assert "application/x-protobuf" in response.json()["message"]


def test_a_body_over_5_mib_is_413(otlp_post, project):
    response = otlp_post(b"{" + b" " * (5 * 1024 * 1024) + b"}")
    assert response.status_code == 413
    assert "larger than" in response.json()["message"]


def test_a_small_gzip_body_that_expands_over_5_mib_is_413(otlp_post):
    bomb = gzip.compress(b"{" + b" " * (6 * 1024 * 1024) + b"}")
    response = otlp_post(bomb, HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 413


def test_get_is_405(client, project):
    response = client.get("/v1/traces")
    assert response.status_code == 405
    assert response["Allow"] == "POST"


def test_a_gzip_json_export_is_accepted(otlp_post, api):
    body = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "00f067aa0ba902b7", "name": "summary",
         "startTimeUnixNano": "1763629200000000000"}]}]}]}
    response = otlp_post(gzip.compress(orjson.dumps(body)), HTTP_CONTENT_ENCODING="gzip")
    assert response.status_code == 200
    assert api.get("/api/v1/traces/0af7651916cd43dd8448eb211c80319c").json()["node_count"] == 1


# OTLP


def test_a_span_with_more_than_1000_links_is_rejected_alone(otlp_post, project):
    trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    links = [{"traceId": trace, "spanId": format(i + 1, "016x")} for i in range(1001)]
    spans = [{"traceId": trace, "spanId": "00000000000a0001", "name": "wide", "startTimeUnixNano": "1763629200000000000",
              "links": links},
             {"traceId": trace, "spanId": "00000000000a0002", "name": "ok", "startTimeUnixNano": "1763629200000000000"}]

    response = otlp_post(orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))

    assert response.status_code == 200
    partial = response.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert "more than 1000 links" in partial["errorMessage"]
    assert Node.objects.filter(project=project).count() == 1
