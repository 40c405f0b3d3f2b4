"""Calibration from review verdicts: the statistics on known data, and which
node's confidence a review judges."""

import math

import pytest

from metrics.counts.judged_reviews import judged_nodes
from metrics.stats import calibration
from metrics.stats.calibration import Judged
from provenance.dag.reading import final_answer
from provenance.models import Trace
from tests.support.events import BASE_TIME, node_event, review_event

WINDOW = {"start": BASE_TIME.isoformat(), "end": "2026-11-21T09:00:00Z"}


def test_a_perfectly_calibrated_judge_has_no_calibration_error():
    judged = [Judged(0.25, i < 1) for i in range(4)] + [Judged(0.75, i < 3) for i in range(4)]
    assert calibration.expected_calibration_error(judged) == 0
    bins = calibration.reliability(judged)
    assert (bins[2]["count"], bins[2]["accuracy"], bins[7]["accuracy"]) == (4, 0.25, 0.75)


def test_brier_score_and_ece_of_known_answers():
    judged = [Judged(0.8, True), Judged(0.3, False)]
    assert math.isclose(calibration.brier(judged), (0.2 ** 2 + 0.3 ** 2) / 2)
    assert math.isclose(calibration.expected_calibration_error(judged), (0.2 + 0.3) / 2)


def test_roc_finds_the_threshold_that_separates_errors():
    judged = [Judged(0.1, False), Judged(0.2, False), Judged(0.7, True), Judged(0.9, True)]
    roc = calibration.roc(judged)
    assert roc["auc"] == 1.0
    assert roc["best"] == {"threshold": 0.7, "tpr": 1.0, "fpr": 0.0, "review_load": 0.5, "youden_j": 1.0}


def test_roc_of_an_uninformative_confidence_is_chance():
    judged = [Judged(0.5, i % 2 == 0) for i in range(10)]
    assert calibration.roc(judged)["auc"] == 0.5
    assert calibration.roc([Judged(0.5, True)])["auc"] is None


def test_uncertainty_correlates_with_incorrect_verdicts():
    judged = [Judged(0.9, True, {"semantic_entropy": 0.1}), Judged(0.8, True, {"semantic_entropy": 0.3}),
              Judged(0.3, False, {"semantic_entropy": 1.9}), Judged(0.2, False, {"semantic_entropy": 2.2})]
    found = {c["name"]: c for c in calibration.correlations(judged)}
    assert found["uncertainty (1 − confidence)"]["correlation"] > 0.9
    assert found["semantic_entropy"]["correlation"] > 0.9 and found["semantic_entropy"]["count"] == 4


@pytest.fixture
def reviewed(project, ingest):
    ingest(
        # t1 answers with its final_answer node, though a later node exists.
        node_event("t1-a", "t1", seconds=1, confidence=0.9),
        node_event("t1-final", "t1", seconds=2, confidence=0.2, source_type="final_answer", parents=["t1-a"]),
        node_event("t1-note", "t1", seconds=3, confidence=0.6, parents=["t1-final"]),
        # t2 has no final_answer node: its newest node nothing consumed answers.
        node_event("t2-a", "t2", seconds=1, confidence=0.4),
        node_event("t2-b", "t2", seconds=2, confidence=0.7, parents=["t2-a"]),
        node_event("t2-c", "t2", seconds=3, confidence=0.95, agent_id="side"),
        node_event("t2-d", "t2", seconds=4, confidence=0.1, parents=["t2-c"]),
        node_event("t3-a", "t3", seconds=1),  # no confidence
        review_event("t1", "incorrect"),
        review_event("t2", "correct"),
        review_event("t3", "correct"),
        review_event("t1", "correct", product_id="t1-a", event_id="r-node"),
        review_event("t1", "incorrect", product_id="missing", event_id="r-missing"),
    )
    # A second, later review of t1's answer overrides the first.
    later = review_event("t1", "correct", event_id="r-later")
    later["timestamp"] = "2026-11-20T10:00:00Z"
    ingest(later)


def test_each_review_judges_the_right_node(project, reviewed):
    judged, unscored = judged_nodes(project, BASE_TIME, BASE_TIME.replace(day=21))
    assert sorted((j.confidence, j.correct) for j in judged) == [(0.1, True), (0.2, True), (0.9, True)]
    assert unscored == 2  # the missing product, and t3's answer without a confidence
    for trace_id, expected in (("t1", "t1-final"), ("t2", "t2-d")):
        assert final_answer(Trace.objects.get(project=project, trace_id=trace_id)).product_id == expected


def test_the_calibration_endpoint_reports_counts_and_filters(api, reviewed):
    body = api.get("/api/v1/metrics/calibration", WINDOW).json()
    assert (body["count"], body["incorrect"], body["unscored_reviews"]) == (3, 0, 2)
    assert sum(b["count"] for b in body["reliability"]) == 3
    assert body["roc"]["auc"] is None  # no incorrect answer left to catch
    assert api.get("/api/v1/metrics/calibration", {**WINDOW, "agent_id": "side"}).json()["count"] == 0


def test_targets_follow_nodes_that_arrive_after_the_refresh(project, ingest):
    from metrics.rollups.refresh import refresh_rollups

    ingest(node_event("a", "t1", seconds=1, confidence=0.9), review_event("t1", "incorrect"),
           review_event("t1", "correct", product_id="late-node", event_id="r-late"))
    refresh_rollups()
    window = (BASE_TIME, BASE_TIME.replace(day=21))
    judged, unscored = judged_nodes(project, *window)
    assert ([(j.confidence, j.correct) for j in judged], unscored) == ([(0.9, False)], 1)
    ingest(node_event("final", "t1", seconds=5, confidence=0.3, source_type="final_answer"),
           node_event("late-node", "t9", seconds=6, confidence=0.6))
    for _ in ("before the refresh", "after it"):
        judged, unscored = judged_nodes(project, *window)
        assert (sorted((j.confidence, j.correct) for j in judged), unscored) == ([(0.3, False), (0.6, True)], 0)
        refresh_rollups()


def test_resolving_every_review_afresh_agrees_with_the_kept_targets(project, reviewed):
    from metrics.rollups.refresh import refresh_rollups

    refresh_rollups()
    window = (BASE_TIME, BASE_TIME.replace(day=21))
    kept, afresh = judged_nodes(project, *window), judged_nodes(project, *window, use_targets=False)
    assert sorted(kept[0], key=repr) == sorted(afresh[0], key=repr) and kept[1] == afresh[1]


def test_an_agent_whose_confidence_says_nothing_is_flagged_and_an_underconfident_one_is_not():
    # The extractor states 0.9 and is right 60% of the time, whatever the confidence;
    # the responder says 0.6 when right and 0.3 when wrong: underconfident, but its
    # confidence ranks its mistakes perfectly, which is what a fuse needs.
    extractor = [Judged(0.9, i % 5 < 3, agent_id="extractor") for i in range(30)]
    responder = [Judged(0.6 if i % 4 else 0.3, i % 4 != 0, agent_id="responder") for i in range(40)]
    few = [Judged(0.9, i % 2 == 0, agent_id="rare") for i in range(10)]
    rows = calibration.summary(extractor + responder + few)["by_agent"]
    assert [(r["agent_id"], r["badly_calibrated"], r["enough_reviews"]) for r in rows] == [
        ("extractor", True, True), ("responder", False, True), ("rare", False, False)]
    assert math.isclose(rows[0]["overconfidence"], 0.3) and rows[0]["auc"] == 0.5
    assert rows[1]["auc"] == 1.0 and rows[1]["overconfidence"] < 0


def test_figures_counted_by_distinct_value_equal_those_recomputed_review_by_review():
    # Few distinct confidences, as a window's reviews have: the figures are
    # summed per distinct value, and must equal the per-review definitions.
    import random

    rng = random.Random(7)
    judged = [Judged(round(rng.random(), 1), rng.random() < 0.7, {"semantic_entropy": round(rng.random(), 2)},
                     rng.choice("ab")) for _ in range(400)]
    found = calibration.summary(judged)
    assert math.isclose(found["brier"], sum((j.confidence - j.correct) ** 2 for j in judged) / len(judged))
    for b in found["reliability"]:
        inside = [j for j in judged if b["from"] <= j.confidence < b["to"] or (b["to"] == 1 and j.confidence == 1)]
        assert b["count"] == len(inside)
        if inside:
            assert math.isclose(b["accuracy"], sum(j.correct for j in inside) / len(inside))

    def mann_whitney(items):
        # P(an incorrect answer is less confident than a correct one), ties counting half: the ROC's area.
        wrong = [j.confidence for j in items if not j.correct]
        right = [j.confidence for j in items if j.correct]
        return sum((w < r) + (w == r) / 2 for w in wrong for r in right) / (len(wrong) * len(right))

    assert math.isclose(found["roc"]["auc"], mann_whitney(judged))
    for row in found["by_agent"]:
        mine = [j for j in judged if j.agent_id == row["agent_id"]]
        assert (row["count"], row["incorrect"]) == (len(mine), sum(not j.correct for j in mine))
        assert math.isclose(row["auc"], mann_whitney(mine))
    entropy = next(s for s in calibration.signal_rocs(judged) if s["signal"] == "semantic_entropy")
    assert math.isclose(entropy["auc"], mann_whitney(
        [Judged(-j.metrics["semantic_entropy"], j.correct) for j in judged]))
