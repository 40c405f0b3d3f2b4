"""Questions read together in one statement (metrics.counts.together) answer
each what metrics.counts.summaries answers it alone: the same keys, counts,
sums and percentiles, from the rollups and the rows after them or raw, over
windows that cut days, by day and by hour, filtered by a dimension the
question splits by or by another; and a pooled read ranks the groups beyond
the busiest as summaries.ranked(pooled=) does."""

import random
from datetime import timedelta

import pytest

from metrics.counts import summaries, together
from metrics.dashboards import legend
from metrics.questions import Filters
from metrics.rollups.refresh import refresh_rollups
from metrics.rollups.values import COST, DURATION, TOKENS, UNPRICED
from tests.metrics.test_summary import random_summary_filters, valued_events
from tests.metrics.traffic import post_in_batches
from tests.support.events import BASE_TIME, node_event

DAY = 86400


@pytest.fixture
def priced(project, ingest):
    events = valued_events(seed=51, count=900)
    # Twelve agents, three of each volume, so a legend of eight pools some
    # and breaks a tie at the cut by name.
    rng = random.Random(52)
    events += [node_event(f"many{k}-{i}", f"many-t{k}-{i // 3}", seconds=rng.uniform(0, 3 * DAY),
                          agent_id=f"agent_{k}", step="retrieval", source_type="retrieval",
                          duration_ms=rng.uniform(10, 3000), model="gpt-4o",
                          usage={"input_tokens": 10, "output_tokens": i % 7}, cost_usd=0.001)
               for k in range(12) for i in range(6 + 3 * (k // 3))]  # three of each volume: ties at the cut
    post_in_batches(ingest, events)
    refresh_rollups()
    post_in_batches(ingest, valued_events(seed=53, count=150, days=3, prefix="late-"))


def reads(step: str, by: str) -> list[together.Read]:
    return [
        together.Read((DURATION,), step, percents=(50, 95, 99)),
        together.Read((DURATION,), step, by, percents=(95,)),
        together.Read((TOKENS, COST), step, by),
        together.Read((DURATION,), by="step", percents=(95,)),
        together.Read((COST,), by="step"),
        together.Read((TOKENS, COST)),
        together.Read((UNPRICED,), by="model"),
        together.Read((DURATION,), step, by, percents=(95,), pool_of=1, volume_of=(1, 2), keep=8),
    ]


def test_reads_together_answer_what_each_answers_alone(project, priced):
    rng = random.Random(54)
    for trial in range(14):
        start = BASE_TIME + timedelta(hours=rng.uniform(-6, 30))
        end = start + timedelta(hours=rng.choice([5, 30, 60, rng.uniform(1, 90)]))
        filters = Filters(**{"environment": "production", **(random_summary_filters(rng) if trial % 3 else {})})
        step, by = rng.choice(["", "day", "hour"]), rng.choice(["agent_id", "step", "model"])
        for use_rollups in (True, False):
            asked = reads(step, by)
            answers = together.read(project, start, end, filters, asked, use_rollups)
            for one, answer in zip(asked[:-1], answers[:-1], strict=True):
                if one.percents:
                    alone = summaries.ranked(project, start, end, filters, one.metrics, one.step, one.by,
                                             use_rollups=use_rollups, percents=one.percents)
                else:
                    alone = summaries.distributions(project, start, end, filters, one.metrics, one.step, one.by,
                                                    use_rollups=use_rollups, binned=False)
                assert_same(answer, alone, one.percents)
            volumes: dict = {}
            for found in answers[1:3]:
                for (_, value, _), distribution in found.items():
                    volumes[value] = volumes.get(value, 0) + distribution.count
            pooled = legend.split(volumes)[1]
            if pooled:
                alone = summaries.ranked(project, start, end, filters, (DURATION,), step, by, use_rollups=use_rollups,
                                         percents=(95,), pooled=pooled)
                assert_same(answers[-1], alone, (95,))
            else:
                assert answers[-1] == {}


def test_confidence_and_metrics_keys_over_whole_days_and_cut_ones(project, priced):
    """Values other than node fields take the general path (a row per value), and a window of whole days has no edge."""
    day = BASE_TIME.replace(hour=0, minute=0, second=0, microsecond=0)
    for start, end in ((day, day + timedelta(days=2)), (day + timedelta(hours=7), day + timedelta(days=2, hours=3))):
        asked = [together.Read(("", "semantic_entropy"), "day", "agent_id", percents=(50, 95)),
                 together.Read(("semantic_entropy",), by="step"), together.Read((DURATION, ""), percents=(99,))]
        for use_rollups in (True, False):
            answers = together.read(project, start, end, Filters(), asked, use_rollups)
            for one, answer in zip(asked, answers, strict=True):
                if one.percents:
                    alone = summaries.ranked(project, start, end, Filters(), one.metrics, one.step, one.by,
                                             use_rollups=use_rollups, percents=one.percents)
                else:
                    alone = summaries.distributions(project, start, end, Filters(), one.metrics, one.step, one.by,
                                                    use_rollups=use_rollups, binned=False)
                assert answer and set(answer) == set(alone)
                assert_same(answer, alone, one.percents)


def test_a_read_pools_the_groups_beyond_the_busiest(project, priced):
    start, end = BASE_TIME - timedelta(hours=3), BASE_TIME + timedelta(days=3, hours=2)
    answers = together.read(project, start, end, Filters(), reads("day", "agent_id"))
    volumes: dict = {}
    for found in answers[1:3]:
        for (_, value, _), distribution in found.items():
            volumes[value] = volumes.get(value, 0) + distribution.count
    pooled = legend.split(volumes)[1]
    assert pooled, "some agents are pooled"
    assert answers[-1] and all(value is None for _, value, _ in answers[-1])
    alone = summaries.ranked(project, start, end, Filters(), (DURATION,), "day", "agent_id", percents=(95,),
                             pooled=pooled)
    assert_same(answers[-1], alone, (95,))


def assert_same(together_, alone, percents) -> None:
    assert set(together_) == set(alone)
    for key, found in together_.items():
        assert found.count == alone[key].count
        assert found.summed == pytest.approx(alone[key].summed, rel=1e-12)
        assert [found.percentile(p) for p in percents] == [alone[key].percentile(p) for p in percents]
