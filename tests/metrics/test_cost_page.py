"""The Cost & latency page's figures, recomputed here from the raw rows: its
latency percentiles ranked in the database (metrics.counts.summaries.ranked)
are the fine-grid distributions' own, bit for bit, and within 1% of the
nearest-rank value; its tokens, costs and unpriced models are the nodes';
from the rollups and the rows after them alike, over windows that cut days."""

import random
from collections import Counter
from datetime import datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from metrics.counts import summaries
from metrics.dashboards import cost
from metrics.params import ChartParams
from metrics.questions import Filters, bucket_floor
from metrics.rollups.refresh import refresh_rollups
from metrics.rollups.values import DURATION, TOKENS
from provenance.models import Node
from tests.metrics.test_summary import nearest_rank, random_summary_filters, valued_events
from tests.metrics.traffic import post_in_batches
from tests.support.events import BASE_TIME

WINDOW = (BASE_TIME - timedelta(hours=5), BASE_TIME + timedelta(days=3, hours=7))


@pytest.fixture
def priced(project, ingest):
    post_in_batches(ingest, valued_events(seed=41, count=1200))
    refresh_rollups()
    # Nodes after the refresh, in days the rollup already holds.
    post_in_batches(ingest, valued_events(seed=42, count=200, days=3, prefix="late-"))


def raw_nodes(project, start, end, filters: Filters = Filters()):
    nodes = Node.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end, **filters.dimensions,
                                trace__environment=filters.environment)
    return nodes.filter(model=filters.model) if filters.model else nodes


def tokens_of(node) -> int | None:
    if node.input_tokens is None and node.output_tokens is None:
        return None
    return (node.input_tokens or 0) + (node.output_tokens or 0)


def test_ranked_percentiles_are_the_fine_bins_own(project, priced):
    rng = random.Random(43)
    for _ in range(20):
        start = BASE_TIME + timedelta(hours=rng.uniform(-6, 40))
        end = start + timedelta(hours=rng.choice([5, 30, 60, rng.uniform(1, 90)]))
        filters = Filters(**{"environment": "production", **random_summary_filters(rng)})
        by, step = rng.choice(["", "agent_id", "step", "model"]), rng.choice(["", "day"])
        for use_rollups in (True, False):
            binned = summaries.distributions(project, start, end, filters, (DURATION, TOKENS), step=step, by=by,
                                             use_rollups=use_rollups)
            ranked = summaries.ranked(project, start, end, filters, (DURATION, TOKENS), step=step, by=by,
                                      use_rollups=use_rollups)
            assert set(ranked) == set(binned)
            for key, found in ranked.items():
                assert found.count == binned[key].count
                assert found.summed == pytest.approx(binned[key].summed, rel=1e-12)
                assert [found.percentile(p) for p in (50, 95, 99)] == [binned[key].percentile(p) for p in (50, 95, 99)]


def test_every_figure_is_the_raw_rows(project, priced):
    start, end = WINDOW
    for by in ("agent_id", "model"):
        page = cost.build(project, ChartParams(start, end, step="day", by=by))
        assert_same(page, cost.build(project, ChartParams(start, end, step="day", by=by), use_rollups=False))
        nodes = list(raw_nodes(project, start, end))
        durations = [n.duration_ms for n in nodes if n.duration_ms is not None]
        totals = page["totals"]
        assert totals["nodes_timed"] == len(durations)
        assert totals["tokens"] == sum(tokens_of(n) or 0 for n in nodes)
        assert totals["cost_usd"] == pytest.approx(sum(n.cost_usd or 0 for n in nodes), rel=1e-9)
        assert_near(totals["p95_latency_ms"], nearest_rank(durations, 95))
        starts = [datetime.fromisoformat(moment) for moment in page["buckets"]]
        assert starts[0] == start and all(bucket_floor(moment, "day") == moment for moment in starts[1:])
        for index, bucket in enumerate(starts):
            upto = starts[index + 1] if index + 1 < len(starts) else end
            inside = [n.duration_ms for n in nodes if bucket <= n.timestamp < upto and n.duration_ms is not None]
            for p in (50, 95, 99):
                assert_near(page["latency"][f"p{p}"][index], nearest_rank(inside, p))
        for group in page["groups"]:
            mine = [n for n in nodes if (getattr(n, by) or "(none)") == group["value"]]
            assert sum(group["tokens"]) == sum(tokens_of(n) or 0 for n in mine)
        unpriced = Counter(n.model or "(none)" for n in nodes if n.cost_usd is None and tokens_of(n) is not None)
        assert page["unpriced_models"] == [{"model": model, "nodes": count}
                                           for model, count in sorted(unpriced.items(), key=lambda i: (-i[1], i[0]))]
        assert unpriced


def test_unpriced_models_follow_the_filters(project, priced):
    start, end = WINDOW
    for filters in (Filters(step="retrieval"), Filters(model="local-llama"), Filters(environment="evaluation"),
                    Filters(agent_id="reasoner", model="gpt-4o")):
        page = cost.build(project, ChartParams(start, end, filters, step="day"))
        nodes = raw_nodes(project, start, end, filters)
        unpriced = Counter(n.model or "(none)" for n in nodes if n.cost_usd is None and tokens_of(n) is not None)
        assert page["unpriced_models"] == [{"model": model, "nodes": count}
                                           for model, count in sorted(unpriced.items(), key=lambda i: (-i[1], i[0]))]


def assert_near(shown, expected) -> None:
    """A percentile within 1% of the nearest-rank value (metrics.stats.summary)."""
    assert abs(shown - expected) <= max(0.01 * abs(expected), 1e-9), (shown, expected)


def assert_same(rolled, raw) -> None:
    """Equal, but for the last bits of float sums added up in another order."""
    if isinstance(rolled, dict):
        assert rolled.keys() == raw.keys()
        for key in rolled:
            assert_same(rolled[key], raw[key])
    elif isinstance(rolled, list):
        assert len(rolled) == len(raw)
        for a, b in zip(rolled, raw, strict=True):
            assert_same(a, b)
    elif isinstance(rolled, float) and isinstance(raw, float):
        assert rolled == pytest.approx(raw, rel=1e-12)
    else:
        assert rolled == raw


@pytest.mark.parametrize("by, step", [("agent_id", "day"), ("model", "day"), ("step", "day"), ("agent_id", "hour")])
def test_the_page_is_one_statement_and_the_watermark(project, priced, by, step):
    """Every figure in one statement (metrics.counts.together), beside the
    watermark's read: the end days are scanned once, not once per figure."""
    start, end = WINDOW
    with CaptureQueriesContext(connection) as captured:
        cost.build(project, ChartParams(start, end, step=step, by=by))
    assert len(captured) == 2, [query["sql"][:80] for query in captured]
