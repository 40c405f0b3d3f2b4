"""On the embedded default (SQLite): Apply's price is shown and recomputed
from the raw rows, nothing is written until the priced threshold is
confirmed, the cost objective picks the cheapest threshold, and a failed
case's and a bad answer's links open the analysis; retries are linked."""

import pytest

from tests.policy.calibration_data import reviewed_nodes
from tests.policy.test_threshold_price import APPLY, RANGE, block_of, price, raw, shown, thresholds
from tests.support.events import fuse_event, node_event


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


pytestmark = [pytest.mark.sqlite_smoke, pytest.mark.django_db]


def test_apply_prices_then_writes_only_what_was_confirmed(member, ingest, api):
    events = reviewed_nodes(60)
    ingest(*events)
    rows = raw(events)
    html = member.post(APPLY, {**RANGE, "scope": "profile"}).content.decode()
    block = block_of(html)
    assert shown(html) == (price(rows, 0.5), price(rows, block))
    assert api.get("/api/v1/policy").json()["version"] == 0

    def cost(t):
        return (10 * sum(not ok and c >= t for c, ok in rows) + sum(c < t for c, _ in rows), t)

    cheapest = member.post(APPLY, {**RANGE, "scope": "profile", "objective": "cost", "cost_miss": 10}).content.decode()
    assert block_of(cheapest) == round(min(thresholds(rows), key=cost), 3)
    member.post(APPLY, {**RANGE, "scope": "profile", "confirm": "yes", "block": str(block)})
    assert api.get("/api/v1/policy").json()["profiles"]["default"]["block"] == block


def test_links_open_the_analysis_and_retries_are_linked(member, ingest):
    ingest(node_event("q", "t"), node_event("a", "t", parents=["q"], confidence=0.2), fuse_event("a", trace_id="t"),
           node_event("a-2", "t", seconds=1, retry_of="a", attempt=2, confidence=0.3),
           node_event("answer", "t", parents=["a-2"], seconds=2, source_type="final_answer", confidence=0.1))
    assert 'href="/p/acme/traces/t/?analyze=answer"' in member.get("/p/acme/bad-answers/").content.decode()
    graph = member.get("/api/v1/traces/t/graph").json()
    ids, retries = graph["nodes"]["id"], graph["retries"]
    assert [(ids[retries[0]], ids[retries[1]])] == [("a", "a-2")]
