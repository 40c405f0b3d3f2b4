"""Apply this threshold shows its price first: on the same reviewed answers,
the fuse rate, people's reviews per day and the incorrect answers let through,
now and with the new threshold, and writes nothing until that threshold is
confirmed. The operating point can minimise an expected cost or fit a review
budget; a signal that ranks mistakes poorly gets "fix this signal first".
Every figure is recomputed here from the raw rows the test sent."""

import random
import re
from datetime import timedelta

import pytest

from tests.policy.calibration_data import reviewed_nodes
from tests.support.events import BASE_TIME, node_event, review_event


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


START, END = BASE_TIME.replace(hour=0), BASE_TIME.replace(hour=23)
RANGE = {"start": START.strftime("%Y-%m-%dT%H:%M:%S"), "end": END.strftime("%Y-%m-%dT%H:%M:%S")}
DAYS = (END - START).total_seconds() / 86400
APPLY = "/policy/acme/apply-threshold"


def raw(events) -> list[tuple[float, bool]]:
    """(confidence, correct) of each reviewed node, straight from the events sent."""
    confidence = {e["body"]["product_id"]: e["body"]["confidence"] for e in events if e["type"] == "node"}
    return [(confidence[e["body"]["product_id"]], e["body"]["verdict"] == "correct")
            for e in events if e["type"] == "review"]


def price(rows, threshold) -> dict:
    flagged = sum(c < threshold for c, _ in rows)
    return {"fuse_rate": f"{flagged / len(rows) * 100:.1f}%", "reviews_per_day": f"{flagged / DAYS:.1f}",
            "let_through": str(sum(not ok and c >= threshold for c, ok in rows))}


def shown(html) -> tuple[dict, dict]:
    table = re.search(r'<table id="apply-price">.*?</table>', html, re.S).group(0)
    before, after = {}, {}
    for figure, now, then in re.findall(r'<tr data-figure="(\w+)"><th>.*?</th>\s*<td>([^<]*)</td><td>([^<]*)</td>',
                                        table, re.S):
        before[figure], after[figure] = now, then
    return before, after


def block_of(html) -> float:
    return float(re.search(r'name="block" value="([^"]+)"', html).group(1))


def thresholds(rows):
    """Every threshold that flags a different set of answers, lowest first."""
    values = sorted({c for c, _ in rows})
    return [0.0, *values[1:], values[-1] + 1e-9]


def test_apply_shows_the_price_on_the_same_reviews_and_writes_nothing(member, ingest, api):
    events = reviewed_nodes(60)
    ingest(*events)
    response = member.post(APPLY, {**RANGE, "scope": "profile"})
    assert response.status_code == 200
    html = response.content.decode()
    block = block_of(html)
    rows = raw(events)
    before, after = shown(html)
    assert before == price(rows, 0.5)  # the default profile's block threshold, in force
    assert after == price(rows, block)
    assert 'name="confirm" value="yes"' in html and "Confirm: apply block" in html
    assert api.get("/api/v1/policy").json()["version"] == 0


def test_only_the_threshold_that_was_priced_is_written(member, ingest, api):
    ingest(*reviewed_nodes(60))
    stale = member.post(APPLY, {**RANGE, "scope": "profile", "confirm": "yes", "block": "0.123"}, follow=True)
    assert "the reviews changed since" in stale.content.decode()
    missing = member.post(APPLY, {**RANGE, "scope": "profile", "confirm": "yes"}, follow=True)
    assert "block: confirm the threshold shown" in missing.content.decode()
    assert api.get("/api/v1/policy").json()["version"] == 0

    block = block_of(member.post(APPLY, {**RANGE, "scope": "profile"}).content.decode())
    member.post(APPLY, {**RANGE, "scope": "profile", "confirm": "yes", "block": str(block)})
    policy = api.get("/api/v1/policy").json()
    assert (policy["version"], policy["profiles"]["default"]["block"]) == (1, block)
    assert "predicted on those reviews: fuse rate" in policy["note"]


@pytest.mark.parametrize("cost_miss, cost_review", [(1, 1), (10, 1), (1, 10)])
def test_the_operating_point_can_minimise_an_expected_cost(member, ingest, cost_miss, cost_review):
    events = reviewed_nodes(60)
    ingest(*events)
    rows = raw(events)

    def cost(t):
        return (cost_miss * sum(not ok and c >= t for c, ok in rows) + cost_review * sum(c < t for c, _ in rows), t)

    expected = round(min(thresholds(rows), key=cost), 3)
    html = member.post(APPLY, {**RANGE, "scope": "profile", "objective": "cost", "cost_miss": cost_miss,
                               "cost_review": cost_review}).content.decode()
    assert block_of(html) == expected
    assert "least expected cost" in html


def test_the_operating_point_can_fit_a_review_budget_per_day(member, ingest):
    events = reviewed_nodes(60)
    ingest(*events)
    rows = raw(events)
    budget = 12
    allowed = [t for t in thresholds(rows) if sum(c < t for c, _ in rows) / DAYS <= budget]
    expected = max(allowed, key=lambda t: (sum(not ok and c < t for c, ok in rows), -t))
    html = member.post(APPLY, {**RANGE, "scope": "profile", "objective": "budget", "budget": budget}).content.decode()
    assert block_of(html) == round(expected, 3)
    assert float(shown(html)[1]["reviews_per_day"]) <= budget
    refused = member.post(APPLY, {**RANGE, "scope": "profile", "objective": "budget"}, follow=True).content.decode()
    assert "budget: name the reviews a day" in refused


def test_a_signal_that_ranks_mistakes_poorly_gets_fix_this_signal_first(member, ingest, api):
    rng = random.Random(7)
    events = []
    for i in range(60):
        product = f"coin-{i}"
        node = node_event(product, f"coin-t{i}", confidence=round(rng.uniform(0.1, 0.95), 3), agent_id="coin_agent")
        review = review_event(f"coin-t{i}", "correct" if i % 2 else "incorrect", product, event_id=f"r-{product}")
        node["timestamp"] = review["timestamp"] = (BASE_TIME + timedelta(seconds=i)).isoformat()
        events += [node, review]
    ingest(*events)
    rows = raw(events)
    auc = _auc([c for c, ok in rows if not ok], [c for c, ok in rows if ok])
    assert auc < 0.7
    page = member.get("/metrics/acme/calibration/", RANGE).content.decode()
    assert "Fix this signal first" in page and "Apply this threshold" not in page
    assert f"ROC AUC {auc:.3f}" in page
    refused = member.post(APPLY, {**RANGE, "scope": "profile"}, follow=True).content.decode()
    assert "fix this signal first" in refused
    assert api.get("/api/v1/policy").json()["version"] == 0


def _auc(incorrect, correct) -> float:
    """P(an incorrect answer scores below a correct one), ties half: the area under the ROC."""
    wins = sum((i < c) + 0.5 * (i == c) for i in incorrect for c in correct)
    return wins / (len(incorrect) * len(correct))


def test_calibration_draws_a_roc_for_self_consistency_and_entropy(api, ingest):
    rng = random.Random(3)
    events, signals = [], []
    for i in range(50):
        correct = i % 3 != 0
        consistency = round(rng.uniform(0.6, 1.0) if correct else rng.uniform(0.2, 0.8), 3)
        entropy = round(rng.uniform(0.0, 0.9) if correct else rng.uniform(0.5, 1.5), 3)
        product = f"sig-{i}"
        node = node_event(product, f"sig-t{i}", confidence=round(rng.uniform(0.3, 0.9), 3),
                          metrics={"self_consistency_score": consistency, "semantic_entropy": entropy})
        review = review_event(f"sig-t{i}", "correct" if correct else "incorrect", product, event_id=f"r-{product}")
        node["timestamp"] = review["timestamp"] = (BASE_TIME + timedelta(seconds=i)).isoformat()
        events += [node, review]
        signals.append((consistency, entropy, correct))
    ingest(*events)
    body = api.get("/api/v1/metrics/calibration", RANGE).json()
    found = {s["signal"]: s for s in body["signals"]}
    assert list(found) == ["confidence", "self_consistency_score", "semantic_entropy"]
    assert found["self_consistency_score"]["auc"] == pytest.approx(
        _auc([s for s, _, ok in signals if not ok], [s for s, _, ok in signals if ok]))
    # Higher entropy is less sure: its negation is ranked.
    assert found["semantic_entropy"]["auc"] == pytest.approx(
        _auc([-e for _, e, ok in signals if not ok], [-e for _, e, ok in signals if ok]))
    assert found["confidence"]["auc"] == pytest.approx(body["roc"]["auc"])
    assert found["semantic_entropy"]["count"] == 50
