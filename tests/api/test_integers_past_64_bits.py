"""A number that would be stored as an integer past 64 bits (2**64, or 1e20,
which jsonb writes back as 100000000000000000000) is refused with a 400 naming
its field wherever JSON is stored, and nothing is stored. Once stored, no JSON
encoder of ours could write it again: the run it sat in answered 500 for good."""

import orjson
import pytest

from evals.models import Item, Run
from provenance.models import Node
from tests.support.evals import number_items
from tests.support.events import node_event

BIG = 18446744073709551616  # 2**64
HUGE_FLOAT = 1e20
LIMITS = [-(2**63), 2**64 - 1]  # what a 64-bit encoder writes: kept


def raw(api, method: str, path: str, body: bytes, content_type="application/json"):
    return api.generic(method, path, body, content_type=content_type)


def number_body(template: str, number) -> bytes:
    return template.replace("N", orjson.dumps(number).decode() if isinstance(number, float) else str(number)).encode()


@pytest.fixture
def ds(dataset):
    dataset("ds", number_items(2))


CASES = [
    ("POST", "/api/v1/runs", '{"dataset": "ds", "metadata": {"n": N}}', "metadata.n"),
    ("POST", "/api/v1/runs", '{"dataset": "ds", "metadata": {"list": [1, {"deep": N}]}}', "metadata.list[1].deep"),
    ("POST", "/api/v1/datasets/ds/items", '{"items": [{"id": "q-9", "expected": N}]}', "items[0].expected"),
    ("POST", "/api/v1/datasets/ds/items", '{"items": [{"id": "q-9", "input": {"a": N}, "expected": 1}]}',
     "items[0].input.a"),
    ("PUT", "/api/v1/policy", '{"profiles": {"default": {"max_rounds": N}}}', "profiles.default.max_rounds"),
    ("POST", "/api/v1/alert-rules", '{"name": "r", "conditions": [{"metric": "fused_rate", "op": ">", "value": N}]}',
     "conditions[0].value"),
]


@pytest.mark.parametrize("number", [BIG, -BIG, HUGE_FLOAT], ids=["2**64", "-2**64", "1e20"])
@pytest.mark.parametrize(("method", "path", "template", "field"), CASES, ids=[c[3] for c in CASES])
def test_api_bodies_with_such_a_number_are_400_naming_the_field(api, ds, method, path, template, field, number):
    runs_before, items_before = Run.objects.count(), Item.objects.count()
    response = raw(api, method, path, number_body(template, number))
    assert response.status_code == 400, response.content
    assert field in response.json()["fields"], response.json()
    assert "64-bit" in response.json()["error"]
    assert (Run.objects.count(), Item.objects.count()) == (runs_before, items_before)


def test_a_run_result_with_such_a_number_is_refused(api, ds, run):
    opened = run("ds", finish=False)
    response = raw(api, "POST", f"/api/v1/runs/{opened['id']}/results",
                   number_body('{"results": [{"item_id": "q-1", "actual": N}]}', BIG))
    assert response.status_code == 400 and "results[0].actual" in response.json()["fields"]
    assert api.post(f"/api/v1/runs/{opened['id']}/finish").status_code == 200
    assert api.get(f"/api/v1/runs/{opened['id']}").status_code == 200


@pytest.mark.parametrize("number", [BIG, HUGE_FLOAT], ids=["2**64", "1e20"])
@pytest.mark.parametrize("name", ["metrics", "metadata"])
def test_ingest_refuses_the_event_naming_the_field(api, project, name, number):
    event = node_event("p1", "t-big")
    event["body"][name] = {"ok": 1, "n": 0}
    body = orjson.dumps({"batch": [event, node_event("p2", "t-big")]}).replace(b'"n":0', number_body('"n":N', number))
    response = raw(api, "POST", "/api/v1/ingest", body)
    assert response.status_code == 207
    (error,) = response.json()["errors"]
    assert error["status"] == 400 and f"{name}.n" in error["message"] and "64-bit" in error["message"]
    assert list(Node.objects.filter(project=project).values_list("product_id", flat=True)) == ["p2"]


def test_jsonl_import_names_the_line_and_field(api, ds):
    body = b'{"id": "q-8", "expected": 1}\n{"id": "q-9", "expected": {"n": 18446744073709551616}}\n'
    response = raw(api, "POST", "/api/v1/datasets/ds/items?format=jsonl", body, "application/x-ndjson")
    assert response.status_code == 400 and "items[1].expected.n" in response.json()["fields"]
    assert not Item.objects.filter(item_id__in=["q-8", "q-9"]).exists()


@pytest.mark.parametrize("number", LIMITS)
def test_the_64_bit_limits_themselves_are_kept_and_read_back(api, ds, number):
    created = raw(api, "POST", "/api/v1/runs", number_body('{"dataset": "ds", "metadata": {"n": N}}', number))
    assert created.status_code == 201, created.content
    run_id = created.json()["id"]
    assert api.post(f"/api/v1/runs/{run_id}/finish").status_code == 200
    assert api.get(f"/api/v1/runs/{run_id}").json()["metadata"] == {"n": number}
