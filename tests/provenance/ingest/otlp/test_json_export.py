"""OTLP/JSON written by hand per the specification: hex ids in any case, int64 as
strings or numbers, enums as integers, AnyValue attributes, unknown fields ignored."""

from pathlib import Path

import orjson

FIXTURE = Path(__file__).parent / "fixtures" / "ticket-trace.json"
TRACE = "5b8efff798038103d269b633813fc60c"


def test_hand_written_otlp_json_becomes_a_trace(otlp_post, api):
    response = otlp_post(FIXTURE.read_bytes())

    assert response.status_code == 200, response.content
    assert response["Content-Type"] == "application/json"
    assert response.json() == {}  # full success: partial_success left unset
    nodes = {n["product_id"]: n for n in api.get(f"/api/v1/traces/{TRACE}").json()["nodes"]}
    assert set(nodes) == {"eee19b7ec3c1b171", "eee19b7ec3c1b172", "eee19b7ec3c1b173"}

    user, fragment, answer = nodes["eee19b7ec3c1b171"], nodes["eee19b7ec3c1b172"], nodes["eee19b7ec3c1b173"]
    assert user["agent_id"] == "support-bot" and user["source_type"] == "user_input"
    assert fragment["confidence"] == 0.38 and fragment["confidence_raw"] == 38
    assert fragment["round"] == 2 and fragment["fused"] is True and fragment["step"] == "retrieval"
    assert answer["agent_id"] == "responder" and answer["status"] == "error"
    assert answer["parent_ids"] == ["eee19b7ec3c1b171", "eee19b7ec3c1b172"]
    assert answer["timestamp"] == "2025-11-20T09:00:02Z"


def test_attributes_of_every_value_type_are_kept(otlp_post, api):
    otlp_post(FIXTURE.read_bytes())
    node = api.get(f"/api/v1/traces/{TRACE}/nodes/eee19b7ec3c1b172").json()
    assert node["metadata"]["retrieval.documents"] == ["refund-policy-2019.md", "shipping.md"]
    assert node["metadata"]["retrieval.filters"] == {"region": "EU", "cached": True}
    assert node["duration_ms"] == 500
    assert node["metrics"] == {"retrieval_similarity": 0.38}
    assert node["fuses"][0]["reason"] == "similarity 0.38 below 0.5"
    answer = api.get(f"/api/v1/traces/{TRACE}/nodes/eee19b7ec3c1b173").json()
    assert answer["metadata"]["otel"]["status_message"] == "answer contradicts the order record"


def test_an_empty_export_succeeds(otlp_post):
    for body in (b"{}", b'{"resourceSpans": []}'):
        response = otlp_post(body)
        assert response.status_code == 200
        assert response.json() == {}


def test_a_span_without_a_parent_in_snake_case_ids_is_accepted(otlp_post, api):
    # The specification wants camelCase; the protobuf JSON mapping also accepts
    # the original names, so a lenient sender still gets its hex ids read as hex.
    body = {"resource_spans": [{"scope_spans": [{"spans": [
        {"trace_id": "0af7651916cd43dd8448eb211c80319c", "span_id": "b7ad6b7169203331", "name": "intent",
         "start_time_unix_nano": "1763629200000000000"}]}]}]}
    assert otlp_post(orjson.dumps(body)).status_code == 200
    nodes = api.get("/api/v1/traces/0af7651916cd43dd8448eb211c80319c").json()["nodes"]
    assert [n["product_id"] for n in nodes] == ["b7ad6b7169203331"]
    assert nodes[0]["agent_id"] == "unknown_service"


def test_fuse_loop_attributes_map_to_their_fields(otlp_post, api):
    def attribute(key, value):
        kind = "intValue" if isinstance(value, int) else "stringValue"
        return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}

    span = {"traceId": "0af7651916cd43dd8448eb211c80319d", "spanId": "b7ad6b7169203332", "name": "retrieve",
            "startTimeUnixNano": "1763629200000000000",
            "attributes": [attribute("denoise.retry_of", "b7ad6b7169203331"), attribute("denoise.attempt", 2),
                           attribute("denoise.fuse.decision", "block"), attribute("denoise.fuse.reason_code", "below_block"),
                           attribute("denoise.fuse.policy_version", 4)]}
    assert otlp_post(orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})).status_code == 200

    node = api.get("/api/v1/traces/0af7651916cd43dd8448eb211c80319d/nodes/b7ad6b7169203332").json()
    assert (node["retry_of"], node["attempt"]) == ("b7ad6b7169203331", 2)
    assert (node["fuses"][0]["reason_code"], node["fuses"][0]["policy_version"]) == ("below_block", 4)
