"""GET /api/v1/metrics/summary answers the contract's figures for
confidence and every key of `metrics`: count, mean, population std, min and
max exact, each percentile within 1% of the nearest-rank value (0.001 on
[0, 1]), recomputed here from the raw rows; from the rollups and the rows
after them alike."""

import math
import random
from datetime import timedelta

import pytest

from metrics.counts import summaries
from metrics.questions import Filters
from metrics.rollups.refresh import refresh_rollups
from metrics.rollups.values import stored_metric
from provenance.models import Node
from tests.metrics.traffic import AGENTS, SOURCES, STEPS, post_in_batches
from tests.support.events import BASE_TIME, node_event

DAY = 86400


def valued_events(seed: int, count: int, *, days: float = 3, prefix: str = "") -> list[dict]:
    """Nodes over several days with confidences, counts (all 5, all 0),
    continuous scores, negative, tiny and large values."""
    rng = random.Random(seed)
    events = []
    for i in range(count):
        body = {"agent_id": rng.choice(AGENTS), "step": rng.choice(STEPS), "source_type": rng.choice(SOURCES)}
        if rng.random() < 0.9:
            body["confidence"] = rng.choice([round(rng.random(), 4), rng.betavariate(5, 2), 1.0, 0.0])
        body["metrics"] = {"samples": 5, "failed_samples": 0, "clusters": rng.randint(1, 4),
                           "semantic_entropy": rng.uniform(0, 2.5), "drift": rng.gauss(0, 3),
                           "tiny": rng.uniform(1e-6, 1e-3), "big": rng.lognormvariate(8, 2)}
        if rng.random() < 0.3:
            del body["metrics"]["drift"]
        if rng.random() < 0.85:
            body["duration_ms"] = rng.choice([rng.uniform(200, 800), rng.uniform(1000, 4000), 0, 12.5])
        if rng.random() < 0.7:
            body["model"] = rng.choice(MODELS)
            body["usage"] = {"input_tokens": rng.randint(0, 3000), "output_tokens": rng.randint(0, 800)}
            if rng.random() < 0.8:
                body["cost_usd"] = rng.choice([rng.uniform(1e-5, 0.02), 0.0])
        if (i // 4) % 7 == 0:  # every node of one trace in seven (a trace has one environment)
            body["environment"] = "evaluation"
        events.append(node_event(f"{prefix}n{i}", f"{prefix}t{i // 4}", seconds=rng.uniform(0, days * DAY), **body))
    return events


MODELS = ("gpt-4o-mini", "gpt-4o", "local-llama")


def nearest_rank(values: list[float], percent: int) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(percent * len(ordered) / 100)) - 1]


def raw_values(project, metric, start, end, filters: Filters) -> list[float]:
    nodes = Node.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end, **filters.dimensions,
                                trace__environment=filters.environment)
    if filters.model:
        nodes = nodes.filter(model=filters.model)
    if metric in ("confidence", "duration_ms", "cost_usd"):
        return [c for c in nodes.values_list(metric, flat=True) if c is not None]
    if metric == "tokens":
        return [(i or 0) + (o or 0) for i, o in nodes.values_list("input_tokens", "output_tokens")
                if i is not None or o is not None]
    return [m[metric] for m in nodes.values_list("metrics", flat=True) if metric in m]


def assert_summary_matches(project, answer: dict, metric, start, end, filters) -> None:
    values = raw_values(project, metric, start, end, filters)
    assert answer["metric"] == metric
    assert answer["count"] == len(values)
    if not values:
        assert all(answer[name] is None for name in ("mean", "std", "min", "max", "p50", "p95", "p99"))
        return
    mean = sum(values) / len(values)
    std = math.sqrt(sum((x - mean) ** 2 for x in values) / len(values))
    assert answer["mean"] == pytest.approx(mean, rel=1e-9, abs=1e-12)
    assert answer["std"] == pytest.approx(std, rel=1e-6, abs=1e-9)
    assert (answer["min"], answer["max"]) == (min(values), max(values))
    for percent in (50, 95, 99):
        expected = nearest_rank(values, percent)
        tolerance = 0.001 if 0 <= expected <= 1 else 0.01 * abs(expected)
        assert abs(answer[f"p{percent}"] - expected) <= max(tolerance, 1e-12), (metric, percent)


def ask(api, metric, start, end, **filters):
    query = {"metric": metric, "start": start.isoformat(), "end": end.isoformat(), **filters}
    response = api.get("/api/v1/metrics/summary", query)
    assert response.status_code == 200, response.content
    return response.json()


METRICS = ("confidence", "duration_ms", "tokens", "cost_usd", "samples", "failed_samples", "clusters", "semantic_entropy", "drift", "tiny", "big")


def random_window(rng):
    start = BASE_TIME + timedelta(hours=rng.choice([0, -3, rng.uniform(-5, 60)]))
    return start, start + timedelta(hours=rng.choice([1, 30, 48, 80, rng.uniform(0.5, 90)]))


def random_summary_filters(rng) -> dict:
    chosen = {"agent_id": rng.choice(["", "", *AGENTS]), "step": rng.choice(["", "", "", *STEPS]),
              "source_type": rng.choice(["", "", "", *SOURCES]), "model": rng.choice(["", "", "", *MODELS]),
              "environment": rng.choice(["", "", "", "evaluation"])}
    return {name: value for name, value in chosen.items() if value}


@pytest.fixture
def valued(project, ingest):
    post_in_batches(ingest, valued_events(seed=31, count=1500))


def test_summaries_are_exact_from_rollups_and_the_rows_after_them(project, api, ingest, valued):
    refresh_rollups()
    # Nodes after the refresh, in days the rollup already holds and in new ones.
    post_in_batches(ingest, valued_events(seed=32, count=300, days=4, prefix="late-"))
    rng = random.Random(33)
    for _ in range(40):
        start, end = random_window(rng)
        filters = random_summary_filters(rng)
        metric = rng.choice(METRICS)
        asked = Filters(**{**filters, "environment": filters.get("environment") or "production"})
        assert_summary_matches(project, ask(api, metric, start, end, **filters), metric, start, end, asked)


def test_the_rollup_equals_the_raw_scan_bin_for_bin(project, ingest, valued):
    refresh_rollups()
    post_in_batches(ingest, valued_events(seed=34, count=200, days=4, prefix="late-"))
    rng = random.Random(35)
    for _ in range(25):
        start, end = random_window(rng)
        filters = Filters(**{"environment": "production", **random_summary_filters(rng)})
        by, step = rng.choice(["", "agent_id", "step", "source_type", "model"]), rng.choice(["", "day"])
        rolled = summaries.distributions(project, start, end, filters, step=step, by=by)
        raw = summaries.distributions(project, start, end, filters, step=step, by=by, use_rollups=False)
        assert set(rolled) == set(raw)
        for key, distribution in rolled.items():
            assert set(distribution.bins) == set(raw[key].bins), key
            for bin_, figures in distribution.bins.items():
                assert figures == pytest.approx(raw[key].bins[bin_], rel=1e-9, abs=1e-9), (key, bin_)


def test_the_rollups_added_up_rows_equal_the_raw_scan(project, ingest, valued):
    """Readers of counts, sums and moments read each group's day as one row of its bins added up."""
    refresh_rollups()
    post_in_batches(ingest, valued_events(seed=36, count=200, days=4, prefix="late-"))
    rng = random.Random(37)
    for _ in range(25):
        start, end = random_window(rng)
        filters = Filters(**{"environment": "production", **random_summary_filters(rng)})
        by, step = rng.choice(["", "agent_id", "step", "source_type", "model"]), rng.choice(["", "day"])
        rolled = summaries.distributions(project, start, end, filters, step=step, by=by, binned=False)
        raw = summaries.distributions(project, start, end, filters, step=step, by=by, use_rollups=False, binned=False)
        assert set(rolled) == set(raw)
        for key, distribution in rolled.items():
            assert set(distribution.bins) == {0}
            assert distribution.bins[0] == pytest.approx(raw[key].bins[0], rel=1e-9, abs=1e-9), key


def test_counts_all_equal_have_no_spread(project, api, valued):
    refresh_rollups()
    start, end = BASE_TIME, BASE_TIME + timedelta(days=3)
    for metric, value in (("samples", 5), ("failed_samples", 0)):
        answer = ask(api, metric, start, end)
        assert (answer["mean"], answer["std"], answer["min"], answer["max"]) == (value, 0, value, value)
        assert (answer["p50"], answer["p95"], answer["p99"]) == (value, value, value)


def test_a_window_without_the_value_answers_count_zero_and_nulls(project, api, valued):
    answer = ask(api, "confidence", BASE_TIME - timedelta(days=30), BASE_TIME - timedelta(days=29))
    assert answer == {"metric": "confidence", "count": 0, "mean": None, "std": None, "min": None, "max": None,
                      "p50": None, "p95": None, "p99": None}
    assert ask(api, "no_such_key", BASE_TIME, BASE_TIME + timedelta(days=1))["count"] == 0


@pytest.mark.parametrize("query, field", [
    ({"start": "2026-11-20T00:00:00Z", "end": "2026-11-21T00:00:00Z"}, "metric"),
    ({"metric": "confidence", "end": "2026-11-21T00:00:00Z"}, "start"),
    ({"metric": "confidence", "start": "2026-11-20T00:00:00Z"}, "end"),
    ({"metric": "confidence", "start": "yesterday", "end": "2026-11-21T00:00:00Z"}, "start"),
    ({"metric": "confidence", "start": "2026-11-22T00:00:00Z", "end": "2026-11-21T00:00:00Z"}, "start"),
    ({"metric": "confidence", "start": "2026-11-20T00:00:00Z", "end": "2026-11-21T00:00:00Z",
      "environment": "no spaces"}, "environment"),
])
def test_bad_parameters_answer_400_naming_them(api, query, field):
    response = api.get("/api/v1/metrics/summary", query)
    assert response.status_code == 400
    assert field in response.json()["fields"]


def test_stored_names_keep_fields_apart_from_metrics_keys():
    assert stored_metric("confidence") == ""
    assert stored_metric("tokens") != "tokens"
    assert stored_metric("semantic_entropy") == "semantic_entropy"
