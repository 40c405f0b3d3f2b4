"""Each contract metric on hand-built traffic, through ingest as an agent sends it."""

from datetime import timedelta

import pytest

from metrics.values import METRICS, Filters, many_window_values, window_values
from tests.support.events import BASE_TIME, fuse_event, node_event

START, END = BASE_TIME, BASE_TIME + timedelta(minutes=15)


def test_empty_window_has_zero_counts_and_no_mean(project):
    values = window_values(project, START, END)
    assert values == {
        "node_count": 0, "trace_count": 0, "mean_confidence": None, "high_uncertainty_ratio": 0.0,
        "fuse_rate": 0.0, "failure_rate": 0.0, "downweight_rate": 0.0, "consecutive_fuses": 0,
    }


def test_each_metric_on_a_small_workflow(project, ingest):
    ingest(
        node_event("a1", "t1", seconds=1, agent_id="retriever", confidence=0.4),
        node_event("a2", "t1", seconds=2, agent_id="retriever", confidence=0.9, fuse={"decision": "block", "reason": "x"}),
        node_event("a3", "t2", seconds=3, agent_id="retriever", confidence=0.8, status="error"),
        node_event("a4", "t2", seconds=4, agent_id="reasoner"),
        node_event("a5", "t3", seconds=5, agent_id="reasoner", confidence=0.6,
                   fuse={"decision": "downweight", "reason": "y"}),
        node_event("late", "t3", seconds=15 * 60, agent_id="reasoner", confidence=0.1),
    )
    values = window_values(project, START, END)
    assert values["node_count"] == 5
    assert values["trace_count"] == 3
    assert values["mean_confidence"] == pytest.approx((0.4 + 0.9 + 0.8 + 0.6) / 4)
    assert values["high_uncertainty_ratio"] == pytest.approx(1 / 3)
    assert values["fuse_rate"] == pytest.approx(1 / 5)
    assert values["failure_rate"] == pytest.approx(2 / 5)
    assert values["downweight_rate"] == pytest.approx(1 / 5)
    assert values["consecutive_fuses"] == 1


def test_nodes_without_confidence_leave_the_mean_undefined(project, ingest):
    ingest(node_event("a1", seconds=1), node_event("a2", seconds=2))
    values = window_values(project, START, END)
    assert values["node_count"] == 2
    assert values["mean_confidence"] is None
    assert values["high_uncertainty_ratio"] == 0.0


def test_a_late_fuse_event_counts_for_its_node(project, ingest):
    ingest(node_event("a1", seconds=1, confidence=0.9))
    assert window_values(project, START, END)["fuse_rate"] == 0.0
    ingest(fuse_event("a1", "block"))
    assert window_values(project, START, END)["fuse_rate"] == 1.0


def test_consecutive_fuses_is_the_longest_run_per_agent(project, ingest):
    block = {"decision": "block", "reason": "low"}
    ingest(
        # agent a: fused, fused, ok, fused, fused, fused -> 3
        *[node_event(f"a{i}", "t1", seconds=i, agent_id="a", **({"fuse": block} if i != 3 else {}))
          for i in range(1, 7)],
        # agent b's nodes interleave but do not break a's runs: fused x2 -> 2
        node_event("b1", "t2", seconds=3.5, agent_id="b", fuse=block),
        node_event("b2", "t2", seconds=3.6, agent_id="b", fuse=block),
    )
    assert window_values(project, START, END)["consecutive_fuses"] == 3
    assert window_values(project, START, END, Filters(agent_id="b"))["consecutive_fuses"] == 2


def test_ties_in_timestamp_are_ordered_by_arrival(project, ingest):
    block = {"decision": "block", "reason": "low"}
    ingest(node_event("x1", seconds=1, fuse=block), node_event("x2", seconds=1),
           node_event("x3", seconds=1, fuse=block))
    assert window_values(project, START, END)["consecutive_fuses"] == 1


def test_filters_narrow_every_metric(project, ingest):
    ingest(
        node_event("e1", "t1", seconds=1, agent_id="x", step="entity_extraction", source_type="reasoning",
                   round=1, confidence=0.2, fuse={"decision": "block", "reason": "low"}),
        node_event("e2", "t2", seconds=2, agent_id="x", step="entity_extraction", source_type="reasoning",
                   round=2, confidence=0.9),
        node_event("s1", "t1", seconds=3, agent_id="y", step="summary", source_type="summary", round=1,
                   confidence=0.9),
    )
    step = window_values(project, START, END, Filters(step="entity_extraction"))
    assert (step["node_count"], step["trace_count"], step["fuse_rate"]) == (2, 2, 0.5)
    assert step["high_uncertainty_ratio"] == 0.5
    assert window_values(project, START, END, Filters(round=2))["node_count"] == 1
    summary = window_values(project, START, END, Filters(source_type="summary"))
    assert (summary["trace_count"], summary["high_uncertainty_ratio"]) == (1, 0.0)
    none = window_values(project, START, END, Filters(agent_id="x", step="summary"))
    assert none["node_count"] == 0


def test_window_bounds_are_half_open(project, ingest):
    ingest(node_event("at-start", seconds=0), node_event("at-end", seconds=15 * 60))
    assert window_values(project, START, END)["node_count"] == 1


def test_other_projects_never_count(project, ingest, other_api):
    ingest(node_event("mine", seconds=1))
    ingest(node_event("theirs", seconds=1), client=other_api)
    assert window_values(project, START, END)["node_count"] == 1


def test_many_windows_at_once_match_one_at_a_time(project, ingest):
    ingest(*[node_event(f"n{i}", f"t{i % 3}", seconds=60 * i, agent_id=f"a{i % 2}", confidence=i / 20)
             for i in range(20)])
    requests = [(START, END, Filters()), (START, START + timedelta(minutes=5), Filters(agent_id="a1")),
                (END, END + timedelta(hours=1), Filters())]
    assert many_window_values(project, requests) == [window_values(project, *r) for r in requests]


def test_a_subset_of_metrics_can_be_asked_for(project):
    assert set(window_values(project, START, END, metrics=["fuse_rate"])) == {"fuse_rate"}
    with pytest.raises(ValueError):
        window_values(project, START, END, metrics=["nope"])
    assert len(METRICS) == 8


def test_each_request_may_name_its_own_metrics(project, ingest):
    ingest(node_event("a", seconds=1, confidence=0.2, fuse={"decision": "block", "reason": "x"}))
    first, second = many_window_values(project, [(START, END, Filters(), ["consecutive_fuses"]),
                                                 (START, END, Filters())], ["node_count"])
    assert first == {"consecutive_fuses": 1} and second == {"node_count": 1}
