"""Odd and hostile input to every evaluation endpoint: a clear 4xx, never a 500, nothing stored."""

import pytest

from tests.support.evals import number_items


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


@pytest.fixture
def seeded(api, dataset, run):
    dataset("ds", number_items(2))
    return run("ds", {"q-1": 10}, finish=False)


ODD_BODIES = [None, [], "text", 5, {"items": [None]}, {"items": [[1]]}, {"items": [{"id": "a\x00b", "expected": 1}]},
              {"items": [{"id": "a", "expected": "x\x00"}]}, {"items": [{"id": "a", "expected": 1, "tags": ["t\x00"]}]},
              {"items": [{"id": "a", "expected": {"k\x00": 1}}]},
              {"items": [{"id": "a", "expected": 10**40, "tolerance": {"abs": 10**40}}]}]


@pytest.mark.parametrize("body", ODD_BODIES)
def test_odd_item_bodies(api, seeded, body):
    response = api.post("/api/v1/datasets/ds/items", body, format="json")
    assert response.status_code in (200, 400), response.content
    if response.status_code == 400:
        assert api.get("/api/v1/datasets/ds").json()["version"] == 1


@pytest.mark.parametrize("result", [
    {"item_id": "q-2", "actual": "a\x00"}, {"item_id": "q\x00", "actual": 1}, {"item_id": "q-2", "error": "e\x00"},
    {"item_id": "q-2", "actual": {"deep": [[[[[[1]]]]]]}}, {"item_id": "q-2", "actual": 10**40},
    {"item_id": "q-2", "latency_ms": 1e308}, {"item_id": "q-2", "trace_id": "x" * 300},
])
def test_odd_results_are_refused_cleanly(api, seeded, result):
    # A NUL anywhere in a body is refused whole (400) before any view; the rest are 207 entries.
    response = api.post(f"/api/v1/runs/{seeded['id']}/results", {"results": [result]}, format="json")
    assert response.status_code in (207, 400), response.content
    assert api.get(f"/api/v1/runs/{seeded['id']}").status_code == 200


@pytest.mark.parametrize("path", [
    "/api/v1/datasets?limit=abc", "/api/v1/datasets?offset=-1", "/api/v1/datasets?offset=99999999999999999999",
    "/api/v1/datasets/ds?version=-1", "/api/v1/datasets/ds?version=99999999999999999999",
    "/api/v1/runs/99999999999999999999", "/api/v1/runs?dataset=%00", "/api/v1/datasets/%00",
])
def test_odd_reads(api, seeded, path):
    assert 400 <= api.get(path).status_code < 500


@pytest.mark.parametrize("value", ["٣", "１２", " 1", "+1", "1_000", "1e3"])
def test_numbers_in_other_scripts_or_notations_are_refused_naming_the_parameter(api, seeded, value):
    response = api.get("/api/v1/datasets", {"limit": value})
    assert response.status_code == 400
    assert response.json()["fields"] == {"limit": "must be a whole number from 1 to 1000"}


def test_odd_compare_and_rollback(api, seeded):
    assert api.get(f"/api/v1/runs/{seeded['id']}/compare?to=x").status_code == 400
    assert api.get(f"/api/v1/runs/{seeded['id']}/compare?to=99999999999999999999").status_code in (400, 404)
    for body in [[], {"version": "1"}, {"version": True}, {"version": 10**30}, {"version": -5}]:
        assert api.post("/api/v1/datasets/ds/rollback", body, format="json").status_code == 400
    for body in [[], {"values": [{"item_id": "q-1", "current": "x\x00"}]}, {"values": "x"}]:
        assert api.post("/api/v1/datasets/ds/recheck", body, format="json").status_code == 400
    assert api.post("/api/v1/runs", {"dataset": "ds", "dataset_version": 10**30}, format="json").status_code == 400
    assert api.post("/api/v1/runs", {"dataset": "ds", "metadata": {"a\x00": 1}}, format="json").status_code == 400


def test_odd_page_parameters(member, project, seeded):
    run_id = seeded["id"]
    for url, codes in [(f"/p/{project.slug}/runs/{run_id}/compare/?to=99999999999999999999", (400,)),
                       (f"/p/{project.slug}/datasets/ds/?version=99999999999999999999", (400,)),
                       (f"/p/{project.slug}/datasets/ds/?page=abc&tag=%00", (200, 400)),
                       (f"/p/{project.slug}/runs/{run_id}/?page=-3&outcome=x", (200,)),
                       (f"/p/{project.slug}/datasets/%00/", (400, 404))]:
        assert member.get(url).status_code in codes, url
    assert member.post(f"/p/{project.slug}/datasets/ds/rollback", {"version": "99999999999999999999"}).status_code == 302
    for odd in ("²", "٣", "-1", ""):
        page = member.post(f"/p/{project.slug}/datasets/ds/rollback", {"version": odd}, follow=True)
        assert page.status_code == 200 and "Not rolled back: version" in page.content.decode(), odd
    assert member.post(f"/p/{project.slug}/datasets/from-trace", {"trace_id": "nope"}).status_code == 404
