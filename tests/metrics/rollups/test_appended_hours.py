"""A refresh folds an hour that only got new nodes into its rows instead of
regrouping it (metrics.rollups.appended_hours): the rows it leaves are those a
rebuild from the raw nodes writes, whatever order the new nodes come in."""

import random

import pytest
from django.db.models import Sum

from metrics.models import (
    HourRollup,
    HourTrace,
    MinuteRollup,
    MinuteTrace,
    PolicyHour,
    PolicyItemHour,
    RolledProject,
    Watermark,
)
from metrics.rollups.refresh import ROLLUP_MODELS, refresh_rollups
from tests.metrics.traffic import AGENTS, SOURCES, STEPS, fuse_loop_events, post_in_batches
from tests.metrics.windows.test_rollups import assert_same_as_raw, random_questions
from tests.support.events import fuse_event, node_event

HOUR = 3600


def rows(project) -> dict:
    """Every rollup row of the project, floats to 9 digits (sums added in
    another order differ past them); fuse policy hours summed per group (a
    group's figures may be split over rows: they add up)."""
    found = {}
    for model in (HourRollup, HourTrace, MinuteRollup, MinuteTrace, PolicyItemHour):
        fields = [f.attname for f in model._meta.concrete_fields if f.attname not in ("id", "project_id")]
        found[model.__name__] = sorted(
            (tuple(round(v, 9) if isinstance(v, float) else v for v in row)
             for row in model.objects.filter(project=project).values_list(*fields)), key=repr)
    figures = ("decisions", "nodes", "fused", "traces", "reviewed", "incorrect", "escalations")
    found["PolicyHour"] = sorted(
        PolicyHour.objects.filter(project=project)
        .values_list("hour", "mask", "agent_id", "step", "source_type", "round", "policy_version")
        .annotate(*[Sum(name) for name in figures]), key=repr)
    return found


def rebuilt(project) -> dict:
    """The rows of every rollup built from nothing: all rows gone, the watermark back at zero."""
    for model in ROLLUP_MODELS:
        model.objects.filter(project=project).delete()
    RolledProject.objects.filter(project=project).delete()
    Watermark.objects.update(node_id=0, fuse_id=0, review_id=0, escalation_id=0)
    assert refresh_rollups().rebuilt_projects == 1
    return rows(project)


class Traffic:
    """Nodes of a few agents in traces lasting seconds to minutes, with a
    share of them fused, some in another environment."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.agents = AGENTS[:self.rng.randint(1, 3)]
        self.fused_share = self.rng.choice([0.05, 0.3, 0.6, 0.95])
        self.count = 0
        self.traces: list[str] = []

    def nodes(self, count: int, earliest: float, latest: float, old_traces: float = 0.0) -> list[dict]:
        events = []
        for _ in range(count):
            self.count += 1
            rng = self.rng
            if self.traces and rng.random() < old_traces:
                trace = rng.choice(self.traces)
            else:
                trace = f"t{self.count}"
                self.traces.append(trace)
            body = {"agent_id": rng.choice(self.agents), "step": rng.choice(STEPS), "source_type": rng.choice(SOURCES)}
            if rng.random() < 0.8:
                body["round"] = rng.randint(1, 2)
            if rng.random() < 0.9:
                body["confidence"] = round(rng.random(), 3)
            if rng.random() < 0.1:
                body["status"] = "error"
            if rng.random() < 0.05:
                body["environment"] = "evaluation"
                trace = f"eval-{trace}"
            if rng.random() < self.fused_share:
                body["fuse"] = {"decision": "block", "reason": "low"}
            events.append(node_event(f"n{self.count}", trace, seconds=rng.uniform(earliest, latest), **body))
        return events


@pytest.mark.parametrize("seed", range(12))
def test_new_nodes_folded_into_their_hours_leave_the_rows_a_rebuild_writes(project, ingest, seed):
    traffic = Traffic(seed)
    old = traffic.nodes(traffic.rng.randint(60, 240), 0, 3 * HOUR)
    post_in_batches(ingest, old + fuse_loop_events(old, seed=seed, hours=3))
    refresh_rollups()
    rng = traffic.rng
    for round_ in range(3):
        # Mostly the last minutes of the live hour, interleaved with rolled nodes and in their traces, as
        # concurrent writers send them; sometimes one far back in an hour, or in an hour of its own.
        end = 3 * HOUR - 1
        new = traffic.nodes(rng.randint(1, 40), end - rng.choice([30, 120, 600]), end, old_traces=0.5)
        if rng.random() < 0.3:
            new += traffic.nodes(1, HOUR, 2 * HOUR, old_traces=0.5)
        if rng.random() < 0.3:
            new += traffic.nodes(rng.randint(1, 5), 3 * HOUR, 4 * HOUR)
        # News of the fuse loop (late decisions, some about rolled nodes, reviews, escalations), and a
        # rolled node judged under another trace's key.
        if rng.random() < 0.5:
            new += fuse_loop_events(new, seed=100 * seed + round_, hours=4, prefix=f"r{round_}-")
        if rng.random() < 0.3:
            judged = rng.choice(old)
            fuse = fuse_event(judged["body"]["product_id"], "block", f"other-key-{round_}", event_id=f"other-{round_}",
                              policy_version=1)
            new.append({**fuse, "timestamp": judged["timestamp"]})
        post_in_batches(ingest, new)
        assert refresh_rollups().rebuilt_projects == 0
        assert_same_as_raw(project, random_questions(seed=seed, count=20))
    assert rows(project) == rebuilt(project)


def test_an_hour_a_fuse_decision_changed_is_regrouped_and_the_others_folded(project, ingest):
    ingest(*[node_event(f"a{i}", f"ta{i}", seconds=60 * i, confidence=0.3) for i in range(5)],
           *[node_event(f"b{i}", f"tb{i}", seconds=HOUR + 60 * i, confidence=0.3) for i in range(5)])
    refresh_rollups()
    ingest(node_event("a-new", "ta1", seconds=3000), node_event("b-new", "tb1", seconds=HOUR + 3000),
           fuse_event("a0", "block", "ta0", event_id="late"))
    report = refresh_rollups()
    assert (report.hours, report.folded_hours) == (2, 1)
    assert rows(project) == rebuilt(project)


@pytest.mark.parametrize("new_at", [3500, 3995, 3001.5])
def test_new_nodes_after_or_between_an_agents_rolled_ones_are_folded_in(project, ingest, new_at):
    """After every rolled node of their groups, the runs compose; between
    them (writers committing out of timestamp order), they are worked out
    from the last clear rolled node before the first new one."""
    fused = {"fuse": {"decision": "block", "reason": "low"}}
    ingest(node_event("early", "t-early", seconds=60, **fused),
           *[node_event(f"n{i}", f"t{i}", seconds=3000 + i, **(fused if i % 3 else {})) for i in range(10)])
    refresh_rollups()
    ingest(node_event("new-fused", "t1", seconds=new_at, **fused), node_event("new", "t-new", seconds=new_at + 0.5))
    report = refresh_rollups()
    assert (report.hours, report.folded_hours) == (1, 1)
    assert rows(project) == rebuilt(project)


def test_a_group_whose_cut_is_not_in_the_window_has_its_hour_regrouped(project, ingest):
    """A new node falls between an agent's rolled ones, and the agent's last
    clear rolled node before it lies long before: the window (from a minute
    before the first dirty minute) does not reach it, so the runs cannot be
    worked out from the window."""
    fused = {"fuse": {"decision": "block", "reason": "low"}}
    ingest(node_event("early", "t-early", seconds=60, agent_id="rare"),
           node_event("rolled-late", "t-late", seconds=3510, agent_id="rare", **fused))
    refresh_rollups()
    ingest(node_event("late", "t-late", seconds=3500, agent_id="rare", **fused))
    report = refresh_rollups()
    assert (report.hours, report.folded_hours) == (1, 0)
    assert HourRollup.objects.get(project=project, mask=1).run_best == 2
    assert rows(project) == rebuilt(project)


def test_a_tail_holding_the_longest_run_broken_by_a_new_node_has_its_hour_regrouped(project, ingest):
    """The longest run lay after the cut and a new clear node splits it: the
    head's longest run is unknown and could be the hour's, so the hour is regrouped."""
    fused = {"fuse": {"decision": "block", "reason": "low"}}
    ingest(*[node_event(f"head{i}", "t1", seconds=100 + i, **fused) for i in range(3)],
           node_event("clear", "t1", seconds=2990),
           *[node_event(f"tail{i}", "t1", seconds=3000 + 10 * i, **fused) for i in range(3)])
    refresh_rollups()
    ingest(node_event("splitter", "t2", seconds=3015))
    report = refresh_rollups()
    assert (report.hours, report.folded_hours) == (1, 0)
    assert HourRollup.objects.get(project=project, mask=1).run_best == 3
    assert rows(project) == rebuilt(project)
