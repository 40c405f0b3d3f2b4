"""A window's partial hours are read from the minute rollups where they hold
the whole minute, and series by the minute from one row a minute; every
figure equals the raw scan's, before and after new nodes and late fuse
decisions arrive, with windows cut at any second."""

import random
from datetime import timedelta

import pytest

from metrics.catalog import METRICS
from metrics.models import MinuteRollup, MinuteTrace
from metrics.questions import Filters, Question
from metrics.rollups.refresh import refresh_rollups
from metrics.values import answer
from metrics.windows import minute_part, minute_series, rollup_part, trace_weighted
from tests.metrics.traffic import AGENTS, STEPS, fuse_loop_events, late_fuse_events, post_in_batches, workflow_events
from tests.metrics.windows.test_rollups import assert_same_as_raw
from tests.support.events import BASE_TIME, node_event

METRIC_CHOICES = (METRICS, ("node_count", "fuse_rate", "consecutive_fuses"), ("node_count", "trace_count"),
                  ("mean_confidence", "failure_rate"))


@pytest.fixture
def dense(project, ingest):
    """About ten nodes a minute over two hours, of three agents, 40% with a fuse decision."""
    events = workflow_events(seed=31, traces=300, hours=2)
    post_in_batches(ingest, events + fuse_loop_events(events, seed=32))
    return events


def random_questions(seed: int, count: int) -> list[Question]:
    rng = random.Random(seed)
    questions = []
    for _ in range(count):
        start = BASE_TIME + timedelta(seconds=rng.choice([0, 3600, rng.randint(-600, 7800), 60 * rng.randint(-10, 130)]))
        length = timedelta(seconds=rng.choice([59, 60, 1800, 3600, rng.randint(1, 9000), 60 * rng.randint(1, 150)]))
        filters = rng.choice([Filters(), Filters(), Filters(agent_id=rng.choice(AGENTS)),
                              Filters(agent_id=tuple(rng.sample(AGENTS, 2))), Filters(step=rng.choice(STEPS))])
        questions.append(Question(start, start + length, filters, rng.choice(["", "", "minute", "minute", "hour"]),
                                  rng.choice(["", "", "agent_id", "step"]), metrics=rng.choice(METRIC_CHOICES)))
    return questions


def test_minute_rollups_equal_the_raw_scan(project, dense, ingest):
    refresh_rollups()
    assert MinuteRollup.objects.filter(project=project).exists()
    assert_same_as_raw(project, random_questions(seed=1, count=80))
    # New nodes in some minutes of rolled hours, and fuse decisions about rolled nodes of another.
    late = workflow_events(seed=33, traces=20, hours=2, prefix="late-")
    post_in_batches(ingest, late + fuse_loop_events(late, seed=34, prefix="late-"))
    ingest(*late_fuse_events(dense, seed=35, count=1))
    coverage = rollup_part.Coverage.of(project)
    assert coverage.new_minutes and coverage.fresh
    assert_same_as_raw(project, random_questions(seed=2, count=80))
    refresh_rollups()
    assert rollup_part.Coverage.of(project).new_minutes == frozenset()
    assert_same_as_raw(project, random_questions(seed=3, count=80))


def test_the_whole_minutes_of_a_partial_hour_are_read_from_the_minute_rollups(project, ingest):
    # One node a minute from 00:00:30 on, in one trace.
    ingest(*[node_event(f"n{i}", "t", seconds=60 * i + 30) for i in range(90)])
    refresh_rollups()
    window = Question(BASE_TIME + timedelta(seconds=90), BASE_TIME + timedelta(minutes=50, seconds=45),
                      metrics=("node_count", "trace_count"))
    assert minute_part.holds_question(window)
    [(_, before)] = answer(project, [window])
    assert (before[(window.start, None)].nodes, before[(window.start, None)].traces) == (50, 1)
    # 00:02–00:50 are whole minutes: their rows answer (00:01:30 and 00:50:30 are raw).
    MinuteRollup.objects.filter(project=project, mask=0, minute=BASE_TIME + timedelta(minutes=10)).update(nodes=1000)
    [(_, after)] = answer(project, [window])
    assert after[(window.start, None)].nodes == 50 - 1 + 1000
    # So are the trace-weighted figures: the trace's minute rows, and its two raw nodes.
    assert trace_weighted.figures(project, window.start, window.end)["mean_trace_fuse_rate"] == 0
    MinuteTrace.objects.filter(project=project, minute=BASE_TIME + timedelta(minutes=10)).update(fused=50)
    assert trace_weighted.figures(project, window.start, window.end)["mean_trace_fuse_rate"] == 1
    # A node past the watermark makes its minute raw again.
    ingest(node_event("late", "t", seconds=600 + 40))
    [(_, late)] = answer(project, [window])
    assert late[(window.start, None)].nodes == 51


def test_series_by_the_minute_are_read_from_the_minute_rollups(project, ingest):
    ingest(*[node_event(f"n{i}", f"t{i // 3}", seconds=20 * i + 5, agent_id=AGENTS[i % 2]) for i in range(30)])
    refresh_rollups()
    series = Question(BASE_TIME + timedelta(seconds=30), BASE_TIME + timedelta(minutes=10), step="minute",
                      by="agent_id")
    assert minute_series.holds_question(series)
    MinuteRollup.objects.filter(project=project, mask=minute_part.mask(series),
                                minute=BASE_TIME + timedelta(minutes=4), agent_id=AGENTS[0]).update(nodes=1000)
    [(_, found)] = answer(project, [series])
    assert found[(BASE_TIME + timedelta(minutes=4), AGENTS[0])].nodes == 1000
    # The window's first minute is partial: raw, keyed by the window's start (its node at 00:00:45).
    assert found[(series.start, AGENTS[0])].nodes == 1 and (series.start, AGENTS[1]) not in found


def test_refreshing_twice_leaves_the_minute_rollups_as_they_are(project, dense, ingest):
    refresh_rollups()
    ingest(*late_fuse_events(dense, seed=36, count=10))
    refresh_rollups()
    columns = ("minute", "mask", "agent_id", "nodes", "traces", "low_traces", "fused", "confidence_sum",
               "run_prefix", "run_suffix", "run_best")
    rows = sorted(MinuteRollup.objects.values_list(*columns), key=repr)
    traces = sorted(MinuteTrace.objects.values_list("minute", "trace_pk", "low"))
    refresh_rollups()
    assert sorted(MinuteRollup.objects.values_list(*columns), key=repr) == rows
    assert sorted(MinuteTrace.objects.values_list("minute", "trace_pk", "low")) == traces
