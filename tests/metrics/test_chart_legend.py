"""Charts of many groups name the eight busiest and pool the rest into one
"others" series whose figures are the pooled rows' own: a fuse rate of all
their nodes, token sums, a p95 ranked over all their durations, one
histogram of all their values. Each recomputed here from the events sent."""

import math
from datetime import UTC, datetime, timedelta

import pytest

from metrics.rollups.refresh import refresh_rollups
from tests.metrics.traffic import MANY_AGENTS, POOLED_AGENTS, many_agents_events, post_in_batches

END = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
WINDOW = {"start": (END - timedelta(hours=48)).isoformat(), "end": END.isoformat(), "resolution": "hour"}
KEPT = ["agent_09", "agent_10", "agent_11", "agent_12", "agent_13", "agent_14", "agent_15", "answerer"]


@pytest.fixture
def nodes(ingest):
    events = many_agents_events(END)
    post_in_batches(ingest, events)
    refresh_rollups()
    return [e["body"] | {"hour": e["timestamp"][:13]} for e in events if e["type"] == "node"]


def pooled(nodes) -> dict:
    """{hour "YYYY-MM-DDTHH": the pooled agents' nodes in it}."""
    found: dict = {}
    for node in nodes:
        if node["agent_id"] in POOLED_AGENTS:
            found.setdefault(node["hour"], []).append(node)
    return found


def nearest_rank(values, percent):
    ordered = sorted(values)
    return ordered[max(1, math.ceil(percent * len(ordered) / 100)) - 1]


def test_the_overview_pools_the_quieter_agents_at_their_pooled_fuse_rate(api, nodes):
    body = api.get("/api/v1/metrics/overview", WINDOW).json()
    assert sorted(body["fuse_rate_by_agent"]) == KEPT
    others = body["fuse_rate_others"]
    assert others["name"] == "9 other agents" and others["agents"] == POOLED_AGENTS
    by_hour = pooled(nodes)
    expected = [None if hour[:13] not in by_hour else
                sum("fuse" in n for n in by_hour[hour[:13]]) / len(by_hour[hour[:13]]) for hour in body["buckets"]]
    assert others["fuse_rate"] == pytest.approx(expected)
    assert any(len({n["agent_id"] for n in hour}) > 1 for hour in by_hour.values()), "some hour pools agents"


def test_cost_and_uncertainty_pool_sums_percentiles_and_values(api, nodes):
    cost = api.get("/api/v1/metrics/cost", WINDOW).json()
    assert [g["value"] for g in cost["groups"]] == KEPT
    others = cost["others"]
    assert others["value"] == "9 other agents" and others["groups"] == POOLED_AGENTS
    by_hour = pooled(nodes)
    for i, hour in enumerate(cost["buckets"]):
        found = by_hour.get(hour[:13], [])
        assert others["tokens"][i] == sum(n["usage"]["input_tokens"] + n["usage"]["output_tokens"] for n in found)
        assert others["cost_usd"][i] == pytest.approx(sum(n["cost_usd"] for n in found))
        if found:
            assert others["p95_latency_ms"][i] == pytest.approx(nearest_rank([n["duration_ms"] for n in found], 95),
                                                               rel=0.01)
        else:
            assert others["p95_latency_ms"][i] is None

    spread = api.get("/api/v1/metrics/distributions", {**WINDOW, "by": "agent_id"}).json()
    confidence = spread["metrics"][0]
    assert confidence["label"] == "confidence"
    assert [g["value"] for g in confidence["groups"] if g["charted"]] == KEPT
    assert len(confidence["groups"]) == len(MANY_AGENTS) + 1, "the table keeps every agent"
    values = [n["confidence"] for n in nodes if n["agent_id"] in POOLED_AGENTS]
    assert sum(confidence["others"]["bars"]["count"]) == len(values)
    assert confidence["others"]["shape"]["count"] == len(values)
    assert confidence["others"]["shape"]["mean"] == pytest.approx(sum(values) / len(values))
    bars = confidence["others"]["bars"]
    for start, count in zip(bars["from"], bars["count"], strict=True):
        last = start + bars["width"] >= 1 - 1e-9
        assert count == sum(start - 1e-9 <= v and (v < start + bars["width"] - 1e-9 or last) for v in values)
