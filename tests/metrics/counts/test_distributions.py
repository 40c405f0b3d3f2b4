"""Histograms, fuse reasons and the bimodality flag."""

import random
from datetime import timedelta

import pytest

from metrics.counts import fuse_reasons, histograms
from metrics.questions import Filters, Question
from metrics.rollups.refresh import refresh_rollups
from metrics.rollups.schema import bin_of
from metrics.rollups.values import fine_bin
from metrics.stats import bimodality
from metrics.stats.summary import Distribution
from tests.metrics.traffic import late_fuse_events, post_in_batches, random_filters, workflow_events
from tests.support.events import BASE_TIME, fuse_event, node_event

DAY = timedelta(days=1)


def test_values_land_on_the_005_grid(api, ingest):
    ingest(
        node_event("a", seconds=1, confidence=0.0, metrics={"semantic_entropy": 1.234, "flag": True}),
        node_event("b", seconds=2, confidence=0.049),
        node_event("c", seconds=3, confidence=0.05, metrics={"semantic_entropy": 1.25}),
        node_event("d", seconds=4, confidence=1.0),
        node_event("e", seconds=5),
    )
    body = api.get("/api/v1/metrics/distributions", {"start": BASE_TIME.isoformat(),
                                                     "end": (BASE_TIME + DAY).isoformat()}).json()
    confidence, entropy = body["metrics"]
    assert confidence["label"] == "confidence" and entropy["label"] == "semantic_entropy"
    bars = confidence["overall"]["bars"]
    assert bars["from"][:2] == [0.0, 0.05] and bars["count"][:2] == [2, 1]
    assert bars["count"][-1] == 1 and len(bars["count"]) == 20  # 1.0 is shown in the last bar
    assert entropy["overall"]["shape"]["count"] == 2


@pytest.fixture
def spread_traffic(project, ingest):
    """Two days and a bit, so whole days come from the rollup and the ends raw."""
    events = workflow_events(seed=41, traces=150, hours=56)
    post_in_batches(ingest, events)
    return events


def random_questions(seed: int):
    rng = random.Random(seed)
    for _ in range(25):
        start = BASE_TIME + timedelta(hours=rng.randint(-5, 30), minutes=rng.randint(0, 59))
        end = start + timedelta(hours=rng.randint(1, 60))
        yield Question(start, end, random_filters(rng), rng.choice(["", "day", "hour"]),
                       rng.choice(["", "agent_id", "step", "round"]))


def test_histograms_and_fuse_reasons_from_rollups_equal_the_raw_scan(project, ingest, spread_traffic):
    refresh_rollups()
    post_in_batches(ingest, workflow_events(seed=42, traces=20, hours=56, prefix="late-"))
    ingest(*late_fuse_events(spread_traffic, seed=43, count=30))
    for when in ("before the refresh", "after it"):
        for question in random_questions(seed=44):
            assert histograms.counts(project, question) == histograms.counts(project, question, use_rollups=False), when
            plain = Question(question.start, question.end, question.filters, by=question.by)
            assert fuse_reasons.counts(project, plain) == fuse_reasons.counts(project, plain, use_rollups=False), when
        refresh_rollups()


def test_top_fuse_reasons_count_inline_and_late_decisions(api, ingest):
    ingest(
        node_event("a", seconds=1, fuse={"decision": "block", "reason": "stale source"}),
        node_event("b", seconds=2, fuse={"decision": "block", "reason": "stale source"}),
        node_event("c", seconds=3, fuse={"decision": "downweight", "reason": "weak vote"}),
        fuse_event("c", "block", reason="contradiction"),
    )
    refresh_rollups()
    ingest(fuse_event("a", "block", reason="contradiction", event_id="late-a"))
    body = api.get("/api/v1/metrics/fuses", {"start": (BASE_TIME - DAY).isoformat(),
                                             "end": (BASE_TIME + DAY).isoformat()}).json()
    assert body["top_reasons"]["block"] == [{"reason": "contradiction", "count": 2},
                                            {"reason": "stale source", "count": 2}]
    assert body["top_reasons"]["downweight"] == [{"reason": "weak vote", "count": 1}]
    assert [row["value"] for row in body["by_agent"]] == ["agent"]
    assert (body["by_agent"][0]["fused"], body["consecutive_fuses"]) == (3, [{"agent_id": "agent", "consecutive_fuses": 3}])


def grid(values) -> dict[int, int]:
    bins: dict[int, int] = {}
    for value in values:
        bins[bin_of(value)] = bins.get(bin_of(value), 0) + 1
    return bins


def described(values) -> bimodality.Shape:
    exact = Distribution()
    for value in values:
        exact.add_value(fine_bin(value), value)
    return bimodality.describe(grid(values), exact)


def test_a_split_task_is_flagged_bimodal():
    rng = random.Random(1)
    split = [rng.gauss(0.2, 0.05) for _ in range(300)] + [rng.gauss(0.8, 0.05) for _ in range(300)]
    shape = described(split)
    assert shape.bimodal and shape.peaks == 2
    assert shape.bimodality_coefficient > 5 / 9


@pytest.mark.parametrize("values", [
    [random.Random(2).gauss(0.6, 0.1) for _ in range(600)],  # one bell
    [min(1.0, random.Random(3).expovariate(8)) for _ in range(600)],  # piled up at one end
    [random.Random(4).uniform(0, 1) for _ in range(40)],  # flat and few
])
def test_one_mode_is_not_flagged(values):
    assert not described(values).bimodal


def test_too_few_values_are_never_flagged():
    assert not described([0.1] * 5 + [0.9] * 5).bimodal
    assert described([]).count == 0


def test_whole_numbers_are_never_flagged():
    # A count taking two values (clusters 1 or 4) has two peaks and a high coefficient: not two modes of a task.
    counts = [1] * 300 + [4] * 300
    shape = described(counts)
    assert shape.peaks == 2 and shape.bimodality_coefficient > 5 / 9
    assert not shape.bimodal
    assert described([x + 0.5 for x in counts]).bimodal


def test_filters_and_splits_narrow_the_histograms(api, ingest):
    ingest(node_event("a", seconds=1, step="x", agent_id="p", confidence=0.1),
           node_event("b", seconds=2, step="y", agent_id="p", confidence=0.9),
           node_event("c", seconds=3, step="y", agent_id="q", confidence=0.9))
    window = {"start": BASE_TIME.isoformat(), "end": (BASE_TIME + DAY).isoformat()}
    body = api.get("/api/v1/metrics/distributions", {**window, "by": "step", "agent_id": "p"}).json()
    [confidence] = body["metrics"]
    assert [(g["value"], g["shape"]["count"]) for g in confidence["groups"]] == [("x", 1), ("y", 1)]
    assert Filters(agent_id="p").dimensions == {"agent_id": "p"}
