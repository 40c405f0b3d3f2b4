"""The price of a span: its end − start is `duration_ms`, GenAI and
OpenInference token counts are `usage`, the response / request model (else
OpenInference's) is `model`, `denoise.cost_usd` is `cost_usd`, and the
resource's deployment environment is the trace's."""

import orjson
import pytest

pytestmark = pytest.mark.django_db

TRACE = "5b8efff798038103d269b633813fc60c"
START = 1763629200000000000


def attribute(key, value):
    if isinstance(value, bool):
        kind = "boolValue"
    elif isinstance(value, int):
        kind, value = "intValue", str(value)
    elif isinstance(value, float):
        kind = "doubleValue"
    else:
        kind = "stringValue"
    return {"key": key, "value": {kind: value}}


def export(spans, resource=None):
    return orjson.dumps({"resourceSpans": [{
        "resource": {"attributes": [attribute(k, v) for k, v in (resource or {"service.name": "bot"}).items()]},
        "scopeSpans": [{"spans": spans}]}]})


def span(span_id, millis=0, attrs=None, trace=TRACE):
    return {"traceId": trace, "spanId": span_id, "name": "step", "startTimeUnixNano": str(START),
            "endTimeUnixNano": str(START + int(millis * 1e6)),
            "attributes": [attribute(k, v) for k, v in (attrs or {}).items()]}


def nodes(api, trace=TRACE):
    return {n["product_id"]: n for n in api.get(f"/api/v1/traces/{trace}").json()["nodes"]}


def test_span_duration_tokens_model_and_cost_become_node_fields(otlp_post, api):
    api.patch("/api/v1/project", {"prices": {"gpt-4o": {"input_per_mtok": 2.5, "output_per_mtok": 10}}}, format="json")
    body = export([
        span("00000000000000a1", 812.5, {"gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 30,
                                         "gen_ai.request.model": "gpt-4o-2024", "gen_ai.response.model": "gpt-4o",
                                         "llm.model_name": "other"}),
        span("00000000000000a2", 40, {"llm.token_count.prompt": 7, "llm.token_count.completion": 3,
                                      "llm.model_name": "claude"}),
        span("00000000000000a3", 5, {"gen_ai.request.model": "gpt-4o", "denoise.cost_usd": 0.02,
                                     "gen_ai.usage.input_tokens": 1, "gen_ai.usage.output_tokens": 1,
                                     "llm.token_count.prompt": 999}),
        span("00000000000000a4", 0),
    ])
    assert otlp_post(body).json() == {}

    got = nodes(api)
    first, second, third, bare = (got[f"00000000000000a{i}"] for i in range(1, 5))
    assert (first["duration_ms"], first["model"], first["usage"]) == (812.5, "gpt-4o",
                                                                      {"input_tokens": 120, "output_tokens": 30})
    assert first["cost_usd"] == pytest.approx(120 * 2.5 / 1e6 + 30 * 10 / 1e6)
    assert (second["model"], second["usage"], second["cost_usd"]) == ("claude", {"input_tokens": 7, "output_tokens": 3},
                                                                      None)
    assert (third["model"], third["usage"], third["cost_usd"]) == ("gpt-4o", {"input_tokens": 1, "output_tokens": 1},
                                                                   0.02)
    assert (bare["duration_ms"], bare["model"], bare["usage"], bare["cost_usd"]) == (0, None, None, None)


def test_a_span_with_only_one_token_count_has_zero_of_the_other(otlp_post, api):
    otlp_post(export([span("00000000000000b1", 1, {"gen_ai.usage.input_tokens": 50})]))
    assert nodes(api)["00000000000000b1"]["usage"] == {"input_tokens": 50, "output_tokens": 0}


@pytest.mark.parametrize(("resource", "expected"), [
    ({"service.name": "bot", "deployment.environment.name": "staging", "deployment.environment": "old"}, "staging"),
    ({"service.name": "bot", "deployment.environment": "evaluation"}, "evaluation"),
    ({"service.name": "bot"}, "production"),
])
def test_the_resource_deployment_environment_is_the_traces(otlp_post, api, resource, expected):
    otlp_post(export([span("00000000000000c1", 1)], resource))
    assert api.get(f"/api/v1/traces/{TRACE}").json()["environment"] == expected


@pytest.mark.parametrize("attrs", [
    {"gen_ai.usage.input_tokens": -5},
    {"gen_ai.usage.output_tokens": "many"},
    {"gen_ai.usage.input_tokens": 1.5},
    {"gen_ai.usage.input_tokens": 1e308},
    {"denoise.cost_usd": -1.0},
    {"denoise.cost_usd": "a lot"},
    {"denoise.cost_usd": 1e308},
])
def test_a_span_with_bad_counts_or_cost_is_rejected_alone(otlp_post, api, attrs):
    answer = otlp_post(export([span("00000000000000d1", 1, attrs), span("00000000000000d2", 1)]))
    assert answer.status_code == 200
    partial = answer.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "1"
    assert "usage" in partial["errorMessage"] or "cost_usd" in partial["errorMessage"]
    assert set(nodes(api)) == {"00000000000000d2"}


def test_a_span_ending_before_it_starts_is_rejected_naming_duration_ms(otlp_post, api):
    bad = {**span("00000000000000e1"), "endTimeUnixNano": str(START - 1_000_000)}
    answer = otlp_post(export([bad]))
    assert "duration_ms" in answer.json()["partialSuccess"]["errorMessage"]


def test_a_span_naming_another_environment_for_a_known_trace_is_rejected(otlp_post, api):
    otlp_post(export([span("00000000000000f1", 1)], {"service.name": "bot", "deployment.environment.name": "staging"}))
    answer = otlp_post(export([span("00000000000000f2", 1)],
                              {"service.name": "bot", "deployment.environment.name": "evaluation"}))
    assert "environment" in answer.json()["partialSuccess"]["errorMessage"]
    assert set(nodes(api)) == {"00000000000000f1"}
