"""The price of a step: `duration_ms`, `model`, `usage` and `cost_usd` through
JSON ingest, the cost computed from the project's prices when not sent, and
the trace's totals. Every expected figure is recomputed from the events sent."""

import pytest

from provenance.models import Node
from tenancy.models import Project
from tests.provenance.stored import error_for, node_of, stored_rows
from tests.support.events import node_event

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite_smoke]

PRICES = {"gpt-4o-mini": {"input_per_mtok": 0.15, "output_per_mtok": 0.6},
          "big-model": {"input_per_mtok": 5, "output_per_mtok": 15}}


def priced(api):
    assert api.patch("/api/v1/project", {"prices": PRICES}, format="json").status_code == 200


def cost(model, input_tokens, output_tokens):
    price = PRICES[model]
    return input_tokens * price["input_per_mtok"] / 1e6 + output_tokens * price["output_per_mtok"] / 1e6


def test_the_fields_are_stored_as_sent_and_read_back(api, ingest):
    ingest(node_event("p1", duration_ms=412.5, model="gpt-4o-mini",
                      usage={"input_tokens": 1200, "output_tokens": 300}, cost_usd=0.25))

    node = node_of(api, "t1", "p1")
    assert node["duration_ms"] == 412.5
    assert node["model"] == "gpt-4o-mini"
    assert node["usage"] == {"input_tokens": 1200, "output_tokens": 300}
    assert node["cost_usd"] == 0.25  # sent: kept, even with a price table that says otherwise


def test_a_node_without_them_reads_null(api, ingest):
    ingest(node_event("p1"))
    node = api.get("/api/v1/traces/t1").json()["nodes"][0]
    assert (node["duration_ms"], node["model"], node["usage"], node["cost_usd"]) == (None, None, None, None)


def test_cost_is_computed_from_the_price_table_when_not_sent(api, ingest):
    priced(api)
    ingest(node_event("p1", model="gpt-4o-mini", usage={"input_tokens": 1200, "output_tokens": 300}),
           node_event("p2", model="big-model", usage={"input_tokens": 10, "output_tokens": 0}, seconds=1))

    assert node_of(api, "t1", "p1")["cost_usd"] == pytest.approx(cost("gpt-4o-mini", 1200, 300))
    assert node_of(api, "t1", "p2")["cost_usd"] == pytest.approx(cost("big-model", 10, 0))


def test_a_model_without_a_price_or_a_node_without_usage_is_unpriced(api, ingest):
    priced(api)
    ingest(node_event("no-price", model="mystery", usage={"input_tokens": 5, "output_tokens": 5}),
           node_event("no-usage", model="gpt-4o-mini", seconds=1),
           node_event("no-model", usage={"input_tokens": 5, "output_tokens": 5}, seconds=2))
    assert [n["cost_usd"] for n in api.get("/api/v1/traces/t1").json()["nodes"]] == [None, None, None]


def test_a_price_added_later_does_not_rewrite_stored_costs(api, ingest):
    ingest(node_event("before", model="gpt-4o-mini", usage={"input_tokens": 100, "output_tokens": 100}))
    priced(api)
    ingest(node_event("after", model="gpt-4o-mini", usage={"input_tokens": 100, "output_tokens": 100}, seconds=1))
    api.patch("/api/v1/project", {"prices": {"gpt-4o-mini": {"input_per_mtok": 99, "output_per_mtok": 99}}},
              format="json")

    assert node_of(api, "t1", "before")["cost_usd"] is None
    assert node_of(api, "t1", "after")["cost_usd"] == pytest.approx(cost("gpt-4o-mini", 100, 100))


def test_the_trace_answers_its_cost_and_tokens_over_the_nodes_that_have_them(api, ingest):
    priced(api)
    ingest(node_event("a", model="gpt-4o-mini", usage={"input_tokens": 1000, "output_tokens": 200}),
           node_event("b", model="mystery", usage={"input_tokens": 50, "output_tokens": 7}, seconds=1),
           node_event("c", cost_usd=0.5, seconds=2),
           node_event("d", seconds=3))

    trace = api.get("/api/v1/traces/t1").json()
    assert trace["cost_usd"] == pytest.approx(cost("gpt-4o-mini", 1000, 200) + 0.5)
    assert trace["tokens"] == 1000 + 200 + 50 + 7


def test_a_trace_where_no_node_has_them_has_null_totals(api, ingest):
    ingest(node_event("a"))
    trace = api.get("/api/v1/traces/t1").json()
    assert (trace["cost_usd"], trace["tokens"]) == (None, None)


BAD = {
    "duration_ms negative": ({"duration_ms": -1}, "duration_ms:"),
    "duration_ms a string": ({"duration_ms": "12"}, "duration_ms:"),
    "duration_ms a bool": ({"duration_ms": True}, "duration_ms:"),
    "duration_ms enormous": ({"duration_ms": 1e308}, "duration_ms:"),
    "duration_ms 2^63": ({"duration_ms": 2**63}, "duration_ms:"),
    "cost_usd negative": ({"cost_usd": -0.01}, "cost_usd:"),
    "cost_usd a string": ({"cost_usd": "free"}, "cost_usd:"),
    "cost_usd enormous": ({"cost_usd": 1e308}, "cost_usd:"),
    "usage not an object": ({"usage": [1, 2]}, "usage:"),
    "usage a number": ({"usage": 12}, "usage:"),
    "usage with an unknown key": ({"usage": {"input_tokens": 1, "output_tokens": 2, "tokens": 3}}, "usage.tokens:"),
    "usage missing output_tokens": ({"usage": {"input_tokens": 1}}, "usage.output_tokens:"),
    "tokens negative": ({"usage": {"input_tokens": -1, "output_tokens": 2}}, "usage.input_tokens:"),
    "tokens not integers": ({"usage": {"input_tokens": 1.5, "output_tokens": 2}}, "usage.input_tokens:"),
    "tokens strings": ({"usage": {"input_tokens": 1, "output_tokens": "2"}}, "usage.output_tokens:"),
    "tokens 2^63": ({"usage": {"input_tokens": 2**63, "output_tokens": 0}}, "usage.input_tokens:"),
    "tokens 1e308": ({"usage": {"input_tokens": 0, "output_tokens": 1e308}}, "usage.output_tokens:"),
    "tokens a bool": ({"usage": {"input_tokens": True, "output_tokens": 0}}, "usage.input_tokens:"),
    "model not a string": ({"model": 4}, "model:"),
    "model too long": ({"model": "m" * 256}, "model:"),
}


@pytest.mark.parametrize(("fields", "message"), BAD.values(), ids=BAD.keys())
def test_bad_values_are_a_400_naming_the_field_and_store_nothing_for_the_event(api, project, ingest, fields, message):
    priced(api)
    result = ingest(node_event("bad", event_id="ev-bad", **fields), node_event("good", seconds=1))

    error = error_for(result, "ev-bad")
    assert error["status"] == 400
    assert error["message"].startswith(message), error["message"]
    assert list(Node.objects.filter(project=project).values_list("product_id", flat=True)) == ["good"]
    assert stored_rows(project)["traces"] == 1


def test_the_copy_and_the_conflict_safe_paths_store_the_same(api, project, ingest):
    """A resend in the batch sends it down the conflict-safe insert, which must
    write the new fields exactly as COPY does."""
    priced(api)
    node = {"duration_ms": 5.5, "model": "gpt-4o-mini", "usage": {"input_tokens": 3, "output_tokens": 4}}
    ingest(node_event("first", **node))
    ingest(node_event("first", **node), node_event("second", seconds=1, **node))
    rows = list(Node.objects.filter(project=project).order_by("product_id")
                .values_list("duration_ms", "model", "input_tokens", "output_tokens", "cost_usd"))
    assert rows[0] == rows[1] == (5.5, "gpt-4o-mini", 3, 4, pytest.approx(cost("gpt-4o-mini", 3, 4)))


def test_costs_use_the_projects_own_prices(api, other_api, ingest):
    priced(api)
    event = node_event("p1", model="gpt-4o-mini", usage={"input_tokens": 10, "output_tokens": 10})
    ingest(event, client=other_api)
    assert Node.objects.get(project=Project.objects.get(slug="globex")).cost_usd is None
