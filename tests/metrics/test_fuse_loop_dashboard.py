"""The Fuse rates dashboard and the fuse loop: reasons grouped by reason code
(raw text only where no code was sent), retry success and escalations, and
fuse rate, incorrect-verdict rate and escalation rate per policy version,
from the rollups once refreshed, with what arrived since."""

from datetime import timedelta

from metrics.models import PolicyHour
from metrics.rollups.refresh import refresh_rollups
from tests.support.events import BASE_TIME, fuse_event, node_event, review_event

RANGE = {"start": "2026-11-20T00:00:00Z", "end": "2026-11-21T00:00:00Z"}


def fuses(api) -> dict:
    response = api.get("/api/v1/metrics/fuses", RANGE)
    assert response.status_code == 200, response.content
    return response.json()


def test_reasons_are_grouped_by_code_and_text_only_without_one(api, ingest):
    ingest(
        *[node_event(f"n{i}", f"t{i}", seconds=i) for i in range(5)],
        fuse_event("n0", reason="confidence 0.31 below 0.5", reason_code="below_block"),
        fuse_event("n1", reason="confidence 0.12 below 0.5", reason_code="below_block"),
        fuse_event("n2", reason="votes split 2:3", reason_code="vote_split"),
        fuse_event("n3", reason="stale source"),
        fuse_event("n4", reason="stale source"),
    )
    assert fuses(api)["top_reasons"]["block"] == [
        {"reason": "below_block", "count": 2}, {"reason": "stale source", "count": 2},
        {"reason": "vote_split", "count": 1}]


def test_outcomes_and_the_effect_of_each_policy_version(api, ingest):
    events = []
    for i in range(4):  # version 1: every node fused; half the traces judged incorrect; one escalation
        events += [node_event(f"a{i}", f"v1-{i}", seconds=i),
                   fuse_event(f"a{i}", "block", f"v1-{i}", reason_code="below_block", policy_version=1),
                   review_event(f"v1-{i}", "incorrect" if i % 2 else "correct")]
    for i in range(4):  # version 2: one node in four fused, all correct
        events += [node_event(f"b{i}", f"v2-{i}", seconds=100 + i),
                   fuse_event(f"b{i}", "block" if i == 0 else "accept", f"v2-{i}", policy_version=2),
                   review_event(f"v2-{i}", "correct")]
    events += [node_event("a0-retry", "v1-0", retry_of="a0", attempt=2, seconds=50),
               node_event("a1-retry", "v1-1", retry_of="a1", attempt=2, seconds=51,
                          fuse={"decision": "block", "reason": "still low"}),
               {"id": "esc-1", "type": "escalation", "timestamp": "2026-11-20T09:01:00Z",
                "body": {"trace_id": "v1-1", "product_id": "a1-retry", "reason": "3 fuses"}}]
    ingest(*events)
    data = fuses(api)
    assert data["outcomes"]["retry_success_rate"] == 0.5
    assert data["outcomes"]["escalation_rate"] == 1 / 8
    rows = {row["policy_version"]: row for row in data["by_policy_version"]}
    assert (rows[1]["fuse_rate"], rows[1]["incorrect_rate"], rows[1]["escalation_rate"]) == (1.0, 0.5, 0.25)
    assert (rows[2]["fuse_rate"], rows[2]["incorrect_rate"], rows[2]["escalation_rate"]) == (0.25, 0.0, 0.0)
    assert rows[None]["decisions"] == 1  # the retry's inline fuse named no version


def test_the_fuse_rates_page_has_the_policy_version_table(member):
    page = member.get("/metrics/acme/fuses/").content.decode()
    assert 'id="policy-versions"' in page and 'id="fuse-outcomes"' in page


def policy_traffic() -> list[dict]:
    events = []
    for i in range(4):  # version 1 blocks every node
        events += [node_event(f"a{i}", f"v1-{i}", seconds=i),
                   fuse_event(f"a{i}", "block", f"v1-{i}", reason_code="below_block", policy_version=1)]
    events += [node_event("a0-retry", "v1-0", retry_of="a0", attempt=2, seconds=50),
               node_event("a1-retry", "v1-1", retry_of="a1", attempt=2, seconds=51,
                          fuse={"decision": "block", "reason": "still low"})]
    return events


def test_refreshed_rollups_answer_the_fuse_loop_and_news_since_are_added(api, ingest):
    ingest(*policy_traffic())
    refresh_rollups()
    data = fuses(api)
    assert data["outcomes"] == {"retry_success_rate": 0.5, "escalation_rate": 0.0}
    assert [(r["policy_version"], r["decisions"], r["nodes"], r["traces"], r["fuse_rate"], r["reviewed"])
            for r in data["by_policy_version"]] == [(1, 4, 4, 4, 1.0, 0), (None, 1, 1, 1, 1.0, 0)]

    # After the refresh: a review and an escalation of old traces, and version 1 judging
    # an old node again two hours later (the node and its trace count once).
    late = fuse_event("a2", "accept", "v1-2", policy_version=1, event_id="late-a2")
    late["timestamp"] = (BASE_TIME + timedelta(hours=2)).isoformat()
    ingest(review_event("v1-3", "incorrect"), late,
           {"id": "esc-1", "type": "escalation", "timestamp": (BASE_TIME + timedelta(hours=3)).isoformat(),
            "body": {"trace_id": "v1-1", "product_id": "a1-retry", "reason": "3 fuses"}})
    for refreshed in (False, True):
        if refreshed:
            refresh_rollups()
        data = fuses(api)
        assert data["outcomes"] == {"retry_success_rate": 0.5, "escalation_rate": 1 / 4}, refreshed
        [v1, _] = data["by_policy_version"]
        assert (v1["decisions"], v1["nodes"], v1["traces"], v1["fuse_rate"], v1["reviewed"], v1["incorrect_rate"],
                v1["escalations"]) == (5, 4, 4, 1.0, 1, 1.0, 1), refreshed


def test_closed_hours_are_read_from_the_policy_rollup(api, ingest):
    ingest(*policy_traffic())
    refresh_rollups()
    PolicyHour.objects.filter(policy_version=1, mask=0).exclude(decisions=0).update(decisions=1000)
    assert fuses(api)["by_policy_version"][0]["decisions"] == 1000
