"""The trace page's header and node panel show what the steps took and cost;
each figure is recomputed here from the events sent."""

import re

import pytest

from tests.support.events import node_event

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_smoke]

PRICES = {"m": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}}


@pytest.fixture
def priced_trace(api, ingest):
    api.patch("/api/v1/project", {"prices": PRICES}, format="json")
    events = [
        node_event("fetch", "t-cost", duration_ms=420, model="m", usage={"input_tokens": 1000, "output_tokens": 250}),
        node_event("think", "t-cost", parents=["fetch"], seconds=1, duration_ms=2300, model="m",
                   usage={"input_tokens": 3000, "output_tokens": 500}),
        node_event("unpriced", "t-cost", seconds=2, model="other", usage={"input_tokens": 7, "output_tokens": 3}),
        node_event("plain", "t-cost", seconds=3),
    ]
    ingest(*events)
    return events


def stat(page: str, name: str) -> str:
    match = re.search(rf'id="stat-{name}"[^>]*>(.*?)</div>', page, re.S)
    return re.sub(r"<[^>]+>", "", match.group(1)).strip()


def test_the_header_shows_step_time_tokens_and_cost(member, priced_trace):
    page = member.get("/p/acme/traces/t-cost/").content.decode()
    bodies = [e["body"] for e in priced_trace]
    tokens = sum(b["usage"]["input_tokens"] + b["usage"]["output_tokens"] for b in bodies if "usage" in b)
    cost = sum(b["usage"]["input_tokens"] * 2.0 / 1e6 + b["usage"]["output_tokens"] * 8.0 / 1e6
               for b in bodies if b.get("model") == "m")
    assert stat(page, "tokens") == str(tokens)
    assert stat(page, "cost") == f"${cost:.3g}"
    assert stat(page, "duration") == f"{(420 + 2300) / 1000:,.2f} s"


def test_a_trace_without_them_shows_dashes(member, ingest):
    ingest(node_event("only", "t-bare"))
    page = member.get("/p/acme/traces/t-bare/").content.decode()
    assert stat(page, "tokens") == stat(page, "cost") == stat(page, "duration") == "—"


def test_the_node_panel_reads_duration_model_usage_and_cost(member, priced_trace):
    think = member.get("/api/v1/traces/t-cost/nodes/think?view=explorer").json()
    assert (think["duration_ms"], think["model"], think["usage"]) == (2300, "m", {"input_tokens": 3000,
                                                                                 "output_tokens": 500})
    assert think["cost_usd"] == pytest.approx(3000 * 2.0 / 1e6 + 500 * 8.0 / 1e6)
    unpriced = member.get("/api/v1/traces/t-cost/nodes/unpriced?view=explorer").json()
    assert unpriced["cost_usd"] is None and unpriced["usage"] == {"input_tokens": 7, "output_tokens": 3}
