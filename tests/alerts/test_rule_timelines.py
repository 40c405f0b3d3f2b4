"""Rules over simulated time, in the style of `promtool test rules`: synthetic
traffic is ingested minute by minute through the API, every rule is evaluated
every minute, and the firing/resolved notifications are checked minute by
minute against the expected timeline."""

import math
from dataclasses import dataclass, field

import pytest

from tests.support.alerts import at_minute
from tests.support.events import node_event

FUSED = {"fuse": {"decision": "block", "reason": "below threshold"}}
ERROR = {"status": "error"}


@dataclass
class Traffic:
    """`per_minute` nodes each minute of `minutes`, one trace per node unless `trace` is set."""

    minutes: range
    per_minute: int = 1
    body: dict = field(default_factory=dict)
    agent_id: str = "agent"


@dataclass
class Case:
    name: str
    rule: dict
    traffic: list[Traffic]
    minutes: range
    expect: dict[int, str]  # minute -> "firing" | "resolved"; every other minute sends nothing
    values_at: dict[int, list] = field(default_factory=dict)  # minute -> expected values of that event


def fuse_pattern(pattern: str) -> list[Traffic]:
    """One minute per character: F = two fused nodes, . = two healthy ones."""
    return [Traffic(range(m, m + 1), 2, FUSED if ch == "F" else {"confidence": 0.9}) for m, ch in enumerate(pattern)]


CASES = [
    Case(
        "for 5m: pending while it holds, fires after five minutes, resolves once",
        {"conditions": [{"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.5}], "for": "5m"},
        [Traffic(range(0, 12), 2, FUSED), Traffic(range(12, 30), 2, {"confidence": 0.9})],
        range(0, 30),
        {6: "firing", 15: "resolved"},
    ),
    Case(
        "for 3m: a gap in holding resets the pending clock",
        {"conditions": [{"metric": "fuse_rate", "window": "1m", "op": ">", "threshold": 0.5}], "for": "3m"},
        fuse_pattern("FFF.FFFFF...."),
        range(0, 14),
        {8: "firing", 10: "resolved"},
    ),
    Case(
        "relative change from a zero previous window is infinite and fires",
        {"conditions": [{"metric": "high_uncertainty_ratio", "window": "10m", "change": "relative", "op": ">",
                         "threshold": 0.5}]},
        [Traffic(range(0, 10), 2, {"confidence": 0.9}), Traffic(range(10, 20), 2, {"confidence": 0.2})],
        range(0, 42),
        {11: "firing", 27: "resolved"},
        {11: [math.inf]},
    ),
    Case(
        "relative change: 0 then 0 is no change; 0 then something is infinite",
        {"conditions": [{"metric": "fuse_rate", "window": "5m", "change": "relative", "op": ">", "threshold": 0}]},
        [Traffic(range(0, 3), 2, {"confidence": 0.9}), Traffic(range(8, 10), 2, FUSED)],
        range(0, 20),
        {9: "firing", 14: "resolved"},
        {9: [math.inf], 14: [0.0]},
    ),
    Case(
        "filters: only entity extraction's failures count",
        {"conditions": [{"metric": "failure_rate", "window": "5m", "filters": {"step": "entity_extraction"},
                         "op": ">", "threshold": 0.7}]},
        [Traffic(range(0, 10), 1, {"step": "entity_extraction", **ERROR}),
         Traffic(range(10, 20), 1, {"step": "entity_extraction"}),
         Traffic(range(0, 20), 3, {"step": "summary"})],
        range(0, 20),
        {1: "firing", 12: "resolved"},
        {1: [1.0], 12: [0.6]},
    ),
    Case(
        "the same traffic without the filter stays under the threshold",
        {"conditions": [{"metric": "failure_rate", "window": "5m", "op": ">", "threshold": 0.7}]},
        [Traffic(range(0, 10), 1, {"step": "entity_extraction", **ERROR}),
         Traffic(range(0, 20), 3, {"step": "summary"})],
        range(0, 20),
        {},
    ),
    Case(
        "match any: either condition keeps it firing; an empty window holds neither",
        {"match": "any", "conditions": [
            {"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.5},
            {"metric": "failure_rate", "window": "5m", "filters": {"agent_id": "b"}, "op": ">", "threshold": 0.9}]},
        [Traffic(range(0, 5), 1, FUSED, agent_id="a"), Traffic(range(10, 15), 1, ERROR, agent_id="b")],
        range(0, 25),
        {1: "firing", 10: "resolved", 11: "firing", 20: "resolved"},
        {1: [1.0, 0.0], 11: [0.0, 1.0]},
    ),
    Case(
        "match all: both must hold at once",
        {"match": "all", "conditions": [
            {"metric": "fuse_rate", "window": "5m", "op": ">", "threshold": 0.1},
            {"metric": "node_count", "window": "5m", "op": ">=", "threshold": 8}]},
        [Traffic(range(0, 10), 1, FUSED), Traffic(range(3, 10), 1, {"confidence": 0.9})],
        range(0, 16),
        {6: "firing", 12: "resolved"},
    ),
    Case(
        "empty windows: no data never satisfies a mean_confidence condition",
        {"conditions": [{"metric": "mean_confidence", "window": "5m", "op": "<", "threshold": 0.5}]},
        [Traffic(range(0, 3), 2, {"confidence": 0.2})],
        range(0, 12),
        {1: "firing", 8: "resolved"},
    ),
    Case(
        "empty windows: a silence rule on node_count fires when traffic stops",
        {"conditions": [{"metric": "node_count", "window": "5m", "op": "<", "threshold": 1}]},
        [Traffic(range(0, 3), 2, {"confidence": 0.9})],
        range(0, 12),
        {0: "firing", 1: "resolved", 8: "firing"},
    ),
    Case(
        "consecutive fuses: three in a row by one agent",
        {"conditions": [{"metric": "consecutive_fuses", "window": "10m", "op": ">=", "threshold": 3}]},
        [Traffic(range(0, 1), 3, FUSED, agent_id="a"), Traffic(range(1, 2), 2, FUSED, agent_id="b"),
         Traffic(range(2, 3), 1, {"confidence": 0.9}, agent_id="a")],
        range(0, 14),
        {1: "firing", 11: "resolved"},
        {1: [3.0]},
    ),
]


def traffic_of_minute(case: Case, minute: int) -> list[dict]:
    events = []
    for index, traffic in enumerate(case.traffic):
        if minute in traffic.minutes:
            for n in range(traffic.per_minute):
                product_id = f"m{minute}-s{index}-n{n}"
                events.append(node_event(product_id, f"trace-{product_id}", agent_id=traffic.agent_id,
                                         seconds=minute * 60 + n * 5 + index, **traffic.body))
    return events


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_rule_timeline(case, create_rule, ingest, evaluate, alert_events):
    rule = create_rule(name=case.name[:200], **case.rule)
    for minute in case.minutes:
        # The minute before `minute` has happened: its traffic arrives, then the tick runs.
        if events := traffic_of_minute(case, minute - 1):
            ingest(*events)
        evaluate(minute)

    events = list(reversed(alert_events(rule_id=rule["id"])))
    timeline = {round((_parse(e["at"]) - at_minute(0)).total_seconds() / 60): e["state"] for e in events}
    assert timeline == case.expect
    assert len(events) == len(case.expect), "one notification per transition, none while holding"
    for minute, expected_values in case.values_at.items():
        event = next(e for e in events if _parse(e["at"]) == at_minute(minute))
        assert [v["value"] for v in event["values"]] == pytest.approx(expected_values)
        assert [v["metric"] for v in event["values"]] == [c["metric"] for c in case.rule["conditions"]]


def _parse(text: str):
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00"))
