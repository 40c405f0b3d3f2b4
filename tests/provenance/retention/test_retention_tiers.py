"""Past `full_content_days`, only the nodes that matter keep their full text;
the others keep a summary and say so (`content_tier`)."""

import hashlib
from datetime import timedelta

import pytest

from provenance.models import Node
from tests.provenance.ingest.test_ingest_fuse_loop import escalation_event
from tests.provenance.retention.retention_runs import apply_retention
from tests.support.events import BASE_TIME, fuse_event, node_event, review_event

pytestmark = pytest.mark.django_db

NOW = (BASE_TIME + timedelta(days=10)).isoformat()
TEXT = "The refund total for ticket 4711 is 10,060 EUR. " * 10  # 480 characters
RAW = "query: refund total; " * 20
YOUNG = 9 * 24 * 3600  # seconds after BASE_TIME: one day old at NOW


def node(product_id, trace_id, **body):
    body.setdefault("content", TEXT)
    body.setdefault("raw_input", RAW)
    return node_event(product_id, trace_id, **body)


# product id -> the tier it must have after a 7-day full-content policy, keep_full_below 0.8.
CASES = {
    "high-old": "summary",
    "high-young": "full",
    "low-old": "full",
    "at-threshold": "summary",
    "no-confidence": "summary",
    "fused": "full",
    "downweighted": "summary",
    "failed": "full",
    "reviewed-correct": "full",
    "reviewed-incorrect": "full",
    "escalated": "full",
    "final-of-reviewed-trace": "full",
    "sibling-in-reviewed-trace": "summary",
    "parent-of-low": "full",
    "low-child": "full",
    "grandparent-of-low": "summary",
    "parent-of-fused": "full",
    "fused-child": "full",
    "parent-of-plain": "summary",
    "plain-child": "summary",
    "grandparent-of-reviewed-final": "summary",
    "parent-of-reviewed-final": "full",
    "reviewed-final-with-parent": "full",
}


@pytest.fixture
def tiered(api, ingest):
    ingest(
        node("high-old", "t-a", confidence=0.95),
        node("high-young", "t-a", confidence=0.95, seconds=YOUNG),
        node("low-old", "t-a", confidence=0.5),
        node("at-threshold", "t-a", confidence=0.8),
        node("no-confidence", "t-a"),
        node("fused", "t-b", confidence=0.95),
        node("downweighted", "t-b", confidence=0.95),
        node("failed", "t-b", confidence=0.95, status="error"),
        node("reviewed-correct", "t-c", confidence=0.95),
        node("reviewed-incorrect", "t-c", confidence=0.95),
        node("escalated", "t-c", confidence=0.95),
        node("sibling-in-reviewed-trace", "t-d", confidence=0.95),
        node("final-of-reviewed-trace", "t-d", confidence=0.95, source_type="final_answer",
             parents=[], seconds=5),
        node("grandparent-of-low", "t-e", confidence=0.95),
        node("parent-of-low", "t-e", confidence=0.95, parents=["grandparent-of-low"], seconds=1),
        node("low-child", "t-e", confidence=0.3, parents=["parent-of-low"], seconds=2),
        node("parent-of-fused", "t-f", confidence=0.95),
        node("fused-child", "t-f", confidence=0.95, parents=["parent-of-fused"], seconds=1),
        node("parent-of-plain", "t-g", confidence=0.95),
        node("plain-child", "t-g", confidence=0.95, parents=["parent-of-plain"], seconds=1),
        node("grandparent-of-reviewed-final", "t-h", confidence=0.95),
        node("parent-of-reviewed-final", "t-h", confidence=0.95, parents=["grandparent-of-reviewed-final"],
             seconds=1),
        node("reviewed-final-with-parent", "t-h", confidence=0.95, source_type="final_answer",
             parents=["parent-of-reviewed-final"], seconds=2),
        fuse_event("fused", trace_id="t-b"),
        fuse_event("fused-child", trace_id="t-f"),
        fuse_event("downweighted", "downweight", trace_id="t-b"),
        review_event("t-c", "correct", "reviewed-correct"),
        review_event("t-c", "incorrect", "reviewed-incorrect"),
        review_event("t-d", "incorrect"),
        review_event("t-h", "correct"),
        escalation_event("escalated", "t-c"),
    )
    assert api.patch("/api/v1/project", {"retention": {"full_content_days": 7, "keep_full_below": 0.8}},
                     format="json").status_code == 200
    return api


def read(api, product_id) -> dict:
    trace_id = Node.objects.get(product_id=product_id).trace.trace_id
    answer = api.get(f"/api/v1/traces/{trace_id}/nodes/{product_id}")
    assert answer.status_code == 200
    return answer.json()


def test_tiers_follow_the_rules_exactly(tiered):
    apply_retention("--now", NOW)
    tiers = {product_id: read(tiered, product_id)["content_tier"] for product_id in CASES}
    assert tiers == CASES


def test_a_summary_keeps_the_first_280_characters_and_the_digest_of_the_full_text(tiered):
    apply_retention("--now", NOW)
    summary = read(tiered, "high-old")
    assert summary["content"] == TEXT[:280]
    assert summary["raw_input"] == RAW[:280]
    assert summary["content_sha256"] == hashlib.sha256(TEXT.encode()).hexdigest()
    assert summary["raw_input_sha256"] == hashlib.sha256(RAW.encode()).hexdigest()
    full = read(tiered, "low-old")
    assert (full["content"], full["raw_input"], full["content_tier"]) == (TEXT, RAW, "full")


def test_a_later_copy_of_the_full_text_is_matched_by_its_digest(tiered):
    apply_retention("--now", NOW)
    summarized = {product_id for product_id, tier in CASES.items() if tier == "summary"}

    def matching(field, text):
        digest = hashlib.sha256(text.encode()).hexdigest()
        return set(Node.objects.filter(**{field: digest}).values_list("product_id", flat=True))

    later_copy = "".join(["The refund total for ticket 4711 is 10,060 EUR. "] * 10)
    assert matching("content_sha256", later_copy) == summarized
    assert matching("raw_input_sha256", "query: refund total; " * 20) == summarized
    assert matching("content_sha256", later_copy + " (edited)") == set()


def test_the_trace_read_says_which_nodes_are_summaries(tiered):
    apply_retention("--now", NOW)
    nodes = {n["product_id"]: n["content_tier"] for n in tiered.get("/api/v1/traces/t-e").json()["nodes"]}
    assert nodes == {"grandparent-of-low": "summary", "parent-of-low": "full", "low-child": "full"}


def test_ids_parents_and_confidence_survive_so_walks_still_cross_summaries(tiered, ingest):
    ingest(node("answer", "t-g", confidence=0.95, parents=["plain-child"], seconds=3, source_type="final_answer"),
           node("cause", "t-g", confidence=0.95, seconds=4),
           node("answer-2", "t-g", confidence=0.95, parents=["plain-child", "cause"], seconds=5),
           fuse_event("cause", trace_id="t-g"))
    apply_retention("--now", NOW)
    assert read(tiered, "plain-child")["content_tier"] == "summary"
    assert read(tiered, "plain-child")["parent_ids"] == ["parent-of-plain"]
    impact = tiered.get("/api/v1/traces/t-g/nodes/parent-of-plain/impact").json()
    assert set(impact["descendants"]) == {"plain-child", "answer", "answer-2"}
    cause = tiered.get("/api/v1/traces/t-g/nodes/answer-2/root-cause").json()
    assert [c["product_id"] for c in cause["root_causes"]] == ["cause"]


def test_a_second_run_changes_nothing(tiered):
    apply_retention("--now", NOW)
    before = list(Node.objects.order_by("pk").values_list("product_id", "content", "summarized_at"))
    assert "summarized 0 nodes" in apply_retention("--now", NOW)
    assert list(Node.objects.order_by("pk").values_list("product_id", "content", "summarized_at")) == before


def test_a_dry_run_counts_and_writes_nothing(tiered):
    out = apply_retention("--now", NOW, "--dry-run")
    assert f"acme: would summarize {list(CASES.values()).count('summary')} nodes" in out
    assert not Node.objects.filter(summarized_at__isnull=False).exists()
    from provenance.models import RetentionRun

    assert not RetentionRun.objects.exists()


def test_other_projects_are_untouched(tiered, other_api, ingest):
    ingest(node("theirs", "t-x", confidence=0.95), client=other_api)
    apply_retention("--now", NOW)
    theirs = other_api.get("/api/v1/traces/t-x/nodes/theirs").json()
    assert (theirs["content_tier"], theirs["content"]) == ("full", TEXT)
