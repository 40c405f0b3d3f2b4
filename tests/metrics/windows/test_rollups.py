"""The rollups answer exactly what the raw scan answers, including for nodes,
fuse decisions, reviews and escalations that arrived after the last refresh:
the node totals, the escalations counted, what each fuse policy version did
and the trace-weighted figures."""

import dataclasses
import random
from datetime import timedelta
from unittest import mock

import pytest
from django.core.management import call_command
from django.db import connection

from metrics.catalog import METRICS
from metrics.counts import escalations, policy_versions
from metrics.models import HourRollup, HourTrace, RolledProject
from metrics.questions import Filters, Question
from metrics.rollups.refresh import refresh_rollups
from metrics.values import answer
from metrics.windows import recent_sql, rollup_part, scan, trace_weighted
from tenancy.models import Project
from tests.metrics.traffic import (
    AGENTS,
    STEPS,
    fuse_loop_events,
    late_fuse_events,
    post_in_batches,
    random_filters,
    random_window,
    workflow_events,
)
from tests.support.events import BASE_TIME, fuse_event, node_event


def as_dict(totals, question: Question | None = None) -> dict:
    """The figures, but those `question` did not ask for: work only they need is skipped, left incomplete."""
    figures = dataclasses.asdict(totals)
    figures["confidence_sum"] = pytest.approx(figures["confidence_sum"], abs=1e-9)
    if question is not None and not question.needs_traces:
        del figures["traces"], figures["low_traces"]
    if question is not None and not question.needs_runs:
        del figures["longest_fused_run"]
    return figures


WINDOWS = 30


def analyze_what_was_written() -> None:
    """Fresh statistics for the rows this test wrote, as autovacuum gathers after
    a load. The test server runs without autovacuum, so the reference counts
    (plain ORM queries) were planned on what an earlier test left and took most
    of a CI run (537 s for one test)."""
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE provenance_node, provenance_trace, provenance_edge, provenance_fuse, "
                       "provenance_escalation, provenance_review")


def assert_same_as_raw(project, questions) -> None:
    """Asked all at once, with their recent rows fetched once and added up in
    Python, and one at a time, added up by the database (metrics.windows.recent_sql)."""
    analyze_what_was_written()
    with mock.patch.object(recent_sql, "FEW_QUESTIONS", 0):
        answers = answer(project, questions)
    answers += [found for question in questions for found in answer(project, [question])]
    for question, found in answers:
        expected = scan.grouped(project, question)
        assert set(found) == set(expected), question
        for key, totals in found.items():
            assert as_dict(totals, question) == as_dict(expected[key], question), (question, key)
    # Escalations and policy versions are read per window (no series, no split): a few dozen windows.
    for window in list(dict.fromkeys((q.start, q.end, q.filters) for q in questions))[:WINDOWS]:
        assert escalations.count(project, *window) == escalations.orm_count(project, *window), window
        assert policy_versions.compare(project, *window) == policy_versions.scanned(project, *window), window
        start, end, filters = window
        # Unfiltered and by agent (read from the hour traces where rolled), otherwise filtered, another environment.
        for chosen in (Filters(), Filters(agent_id=AGENTS[0]), Filters(agent_id=tuple(AGENTS[1:3])), filters,
                       Filters(environment="evaluation")):
            found = trace_weighted.figures(project, start, end, chosen)
            assert found == pytest.approx(trace_weighted.scanned(project, start, end, chosen), abs=1e-12), (window, chosen)


def random_questions(seed: int, count: int) -> list[Question]:
    rng = random.Random(seed)
    questions = []
    for _ in range(count):
        start, end = random_window(rng)
        questions.append(Question(start, end, random_filters(rng), rng.choice(["", "", "hour", "day"]),
                                  rng.choice(["", "", "agent_id", "step", "round"])))
    return questions


@pytest.fixture
def traffic(project, ingest):
    events = workflow_events(seed=1, traces=120)
    events += fuse_loop_events(events, seed=11)
    # Evaluation traffic in the same hours: every figure counts production only.
    evaluation = workflow_events(seed=21, traces=30, prefix="eval-", environment="evaluation")
    post_in_batches(ingest, events + evaluation + fuse_loop_events(evaluation, seed=22, prefix="eval-"))
    return events


def test_rollups_equal_the_raw_scan(project, traffic):
    refresh_rollups()
    assert rollup_part.Coverage.of(project) is not None
    assert_same_as_raw(project, random_questions(seed=2, count=150))


def test_filters_of_several_values_equal_the_raw_scan(project, traffic):
    """A page's typed prefix filters by several values at once (IN): a trace with nodes of two of them counts once."""
    refresh_rollups()
    rng = random.Random(5)
    questions = []
    for _ in range(40):
        start, end = random_window(rng)
        filters = dataclasses.replace(random_filters(rng), agent_id=tuple(rng.sample(AGENTS, 2)),
                                      step=rng.choice(["", STEPS]))
        questions.append(Question(start, end, filters, rng.choice(["", "hour", "day"]),
                                  rng.choice(["", "step", "agent_id"]),
                                  metrics=rng.choice([METRICS, ("node_count", "fuse_rate", "consecutive_fuses"),
                                                      ("node_count", "mean_confidence", "failure_rate")])))
    for question, found in answer(project, questions):
        expected = scan.grouped(project, question)
        assert set(found) == set(expected), question
        for key, totals in found.items():
            # A question's figures are those of the metrics it asked for (the others are left incomplete).
            assert totals.values(question.metrics) == pytest.approx(expected[key].values(question.metrics)), (question, key)


def test_nodes_and_late_fuses_after_the_refresh_are_counted(project, ingest, traffic):
    refresh_rollups()
    # New nodes in old hours and in new ones, and fuse decisions about old nodes.
    late = workflow_events(seed=3, traces=15, hours=8, prefix="late-")
    post_in_batches(ingest, late + fuse_loop_events(late, seed=12, hours=8, prefix="late-"))
    ingest(*late_fuse_events(traffic, seed=4, count=25))
    # News of old traces: reviews and escalations, and decisions naming a version.
    post_in_batches(ingest, fuse_loop_events([e for e in traffic if e["type"] == "node"][:200], seed=13,
                                             prefix="news-"))
    assert len(rollup_part.Coverage.of(project).dirty) > 1
    assert_same_as_raw(project, random_questions(seed=5, count=120))
    refresh_rollups()
    assert rollup_part.Coverage.of(project).dirty == frozenset()
    assert_same_as_raw(project, random_questions(seed=6, count=120))


def test_covered_hours_are_read_from_the_rollups(project, ingest):
    ingest(*[node_event(f"n{i}", f"t{i}", seconds=60 * i) for i in range(30)])
    refresh_rollups()
    window = (BASE_TIME, BASE_TIME + timedelta(hours=1))
    question = Question(*window)
    [(_, before)] = answer(project, [question])
    HourRollup.objects.filter(project=project, mask=0).update(nodes=1000)
    [(_, after)] = answer(project, [question])
    assert (before[(BASE_TIME, None)].nodes, after[(BASE_TIME, None)].nodes) == (30, 1000)


def test_covered_hours_are_read_from_the_hour_traces(project, ingest):
    # Two hours of one trace, and a partial hour read raw: the trace sums its hours.
    ingest(*[node_event(f"n{i}", "t", seconds=60 * i, confidence=0.5) for i in range(150)])
    refresh_rollups()
    window = (BASE_TIME, BASE_TIME + timedelta(minutes=130))
    before = trace_weighted.figures(project, *window)
    assert before == trace_weighted.scanned(project, *window)
    HourTrace.objects.filter(project=project, mask=0).update(confidence_sum=0)
    after = trace_weighted.figures(project, *window)
    assert (before["traces"], before["mean_trace_confidence"], after["mean_trace_confidence"]) == (1, 0.5, 0.5 * 10 / 130)


def test_refreshing_twice_changes_nothing(project, traffic, ingest):
    refresh_rollups()
    ingest(*late_fuse_events(traffic, seed=7, count=10))
    call_command("refresh_metric_rollups")
    snapshot = sorted(HourRollup.objects.values_list(
        "hour", "mask", "agent_id", "step", "source_type", "round", "nodes", "traces", "low_traces", "fused",
        "run_best", "run_prefix", "run_suffix"), key=repr)
    hour_traces = sorted(HourTrace.objects.values_list(
        "hour", "mask", "agent_id", "trace_pk", "nodes", "fused", "confidence_count", "confidence_sum"))
    report = refresh_rollups()
    assert (report.nodes, report.fuses, report.hours) == (0, 0, 0)
    assert sorted(HourTrace.objects.values_list(
        "hour", "mask", "agent_id", "trace_pk", "nodes", "fused", "confidence_count", "confidence_sum")) == hour_traces
    assert sorted(HourRollup.objects.values_list(
        "hour", "mask", "agent_id", "step", "source_type", "round", "nodes", "traces", "low_traces", "fused",
        "run_best", "run_prefix", "run_suffix"), key=repr) == snapshot


def test_a_changed_threshold_is_not_answered_from_stale_rollups(project, traffic):
    refresh_rollups()
    Project.objects.filter(pk=project.pk).update(high_uncertainty_threshold=0.8)
    project.refresh_from_db()
    assert rollup_part.Coverage.of(project) is None
    assert_same_as_raw(project, random_questions(seed=8, count=20))
    refresh_rollups()
    assert RolledProject.objects.get(project=project).threshold == 0.8
    assert_same_as_raw(project, random_questions(seed=9, count=60))


def test_a_project_without_nodes_answers_empty(project):
    refresh_rollups()
    question = Question(BASE_TIME, BASE_TIME + timedelta(days=1), Filters(), "hour", "agent_id")
    assert answer(project, [question]) == [(question, {})]


def test_a_refresh_of_many_scattered_hours_equals_the_raw_scan(project, ingest):
    """New nodes in every other hour of three days: more runs of dirty hours
    than a refresh reads as separate ranges, so some ranges span clean hours
    whose nodes must not be counted twice."""
    from metrics.rollups.hour_ranges import MAX_RANGES

    hours = range(0, 72, 2)
    assert len(hours) > MAX_RANGES
    ingest(*[node_event(f"a{h}", f"t{h}", seconds=h * 3600 + 60, confidence=0.9) for h in range(72)])
    refresh_rollups()
    ingest(*[node_event(f"b{h}", f"t{h}", seconds=h * 3600 + 120, confidence=0.2, parents=[f"a{h}"]) for h in hours])
    refresh_rollups()
    end = BASE_TIME + timedelta(hours=72)
    assert_same_as_raw(project, [Question(BASE_TIME, end, Filters(), "hour"),
                                 Question(BASE_TIME, end, Filters(), "", "agent_id")])
    found = dict(answer(project, [Question(BASE_TIME, end, Filters())]))
    assert next(iter(next(iter(found.values())).values())).nodes == 72 + len(hours)


def test_new_nodes_in_rolled_hours_are_stitched_to_their_rollup(project, ingest):
    """An hour that only got new nodes since the refresh is read from its
    rollup plus those nodes, also for a window ending inside it (the hour a
    window ending now is in); once a fuse decision changes one of its rolled
    nodes, it is read raw."""
    ingest(*[node_event(f"n{i}", f"t{i}", seconds=60 * i) for i in range(30)])
    refresh_rollups()
    ingest(node_event("new", "t-new", seconds=60 * 31))
    coverage = rollup_part.Coverage.of(project)
    assert coverage.fresh == coverage.dirty == frozenset({BASE_TIME})
    HourRollup.objects.filter(project=project, mask=0).update(nodes=1000)
    # A window ending before a rolled node of the hour cannot take its rollup: it reads the part
    # whole, in the same batch as windows reading only the hour's newer nodes.
    whole, ending_inside, before_the_last = (Question(BASE_TIME, BASE_TIME + timedelta(minutes=minutes))
                                             for minutes in (60, 45, 20))
    found = dict(answer(project, [whole, ending_inside, before_the_last]))
    assert [found[q][(BASE_TIME, None)].nodes for q in (whole, ending_inside, before_the_last)] == [1001, 1001, 20]
    ingest(fuse_event("n3", "block", "t3", event_id="late-block"))
    assert rollup_part.Coverage.of(project).fresh == frozenset()
    [(_, changed)] = answer(project, [whole])
    assert changed[(BASE_TIME, None)].nodes == 31


@pytest.mark.parametrize("seed", range(16))
def test_fused_runs_of_new_nodes_interleaved_with_rolled_ones_equal_the_raw_scan(project, ingest, monkeypatch, seed):
    """Writers commit out of timestamp order: nodes arriving after the refresh
    fall between rolled ones of their agent, and runs of fused nodes span both.
    Read back a few rolled nodes at a time, the runs equal the raw scan's."""
    from metrics.windows import fresh_runs

    monkeypatch.setattr(fresh_runs, "CHUNK", 3)
    rng = random.Random(seed)
    fused_share = rng.choice([0.2, 0.5, 0.8])

    def events(prefix, count, earliest=0):
        return [node_event(f"{prefix}{i}", f"{prefix}t{i % 4}", seconds=rng.uniform(earliest, 3599),
                           agent_id=rng.choice(AGENTS[:2]), step=rng.choice(STEPS),
                           **({"fuse": {"decision": "block", "reason": "low"}} if rng.random() < fused_share else {}))
                for i in range(count)]

    ingest(*events("old", rng.randint(5, 40)))
    refresh_rollups()
    # Mostly late in the hour, as a live writer's: the runs of the hour's start are the rollup's.
    ingest(*events("new", rng.randint(1, 12), earliest=rng.choice([0, 2400, 3000])))
    assert rollup_part.Coverage.of(project).fresh == frozenset({BASE_TIME})
    ends = [BASE_TIME + timedelta(hours=1), BASE_TIME + timedelta(hours=2), BASE_TIME + timedelta(minutes=59.99)]
    questions = [Question(BASE_TIME - timedelta(hours=1), end, Filters(**filters), step, by,
                          metrics=("node_count", "trace_count", "consecutive_fuses"))
                 for end in ends for step in ("", "hour") for by in ("", "step")
                 for filters in ({}, {"agent_id": AGENTS[0]}, {"step": STEPS[1]})]
    assert_same_as_raw(project, questions)


# Fused (F) and clear (c) nodes of one agent each, a minute apart from 30 minutes into the hour.
SEQUENCES = {
    "all-fused": "FFFF",
    "fused-at-both-ends": "FFcFFFcF",
    "one-clear": "c",
    "one-fused": "F",
    "clear-at-both-ends": "cFFcFc",
    "no-fused": "ccc",
}


def test_fused_runs_of_a_windows_partial_start_hour_are_counted_by_the_database_as_raw(project, ingest):
    """A window starting inside a rolled hour reads that part raw: the
    database numbers each agent's clear nodes and counts the fused ones after
    each, whatever the sequence's shape."""
    events = []
    for agent, shape in SEQUENCES.items():
        for i, mark in enumerate(shape):
            fuse = {"fuse": {"decision": "block", "reason": "low"}} if mark == "F" else {}
            events.append(node_event(f"{agent}-{i}", f"t-{agent}", seconds=1800 + 60 * i + len(agent), agent_id=agent,
                                     **fuse))
    ingest(*events)
    refresh_rollups()
    windows = [Question(BASE_TIME + timedelta(minutes=minutes), BASE_TIME + timedelta(hours=2), Filters(agent_id=agent),
                        metrics=("consecutive_fuses", "node_count"))
               for minutes in (29, 31) for agent in SEQUENCES]
    found = {(q.start, q.filters.agent_id): totals for q, answered in answer(project, windows)
             for totals in answered.values()}
    for agent, shape in SEQUENCES.items():
        longest = max(len(run) for run in shape.split("c"))
        assert found[(BASE_TIME + timedelta(minutes=29), agent)].longest_fused_run == longest, agent
        # From 31 minutes on, the first node of each is outside the window.
        later = found.get((BASE_TIME + timedelta(minutes=31), agent))
        assert (later.longest_fused_run if later else 0) == max(len(run) for run in shape[1:].split("c")), agent
    assert_same_as_raw(project, windows)
