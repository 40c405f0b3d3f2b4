"""The evaluation pages as a project member sees them."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.support.evals import number_items
from tests.support.events import node_event


@pytest.fixture
def member_role():
    """These tests change things from the pages: an editor may."""
    return "editor"


XSS = '<script>alert("x")</script>'


def test_empty_states_show_how_to_start(member, project):
    page = member.get(f"/p/{project.slug}/datasets/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "No truth sets yet" in text and "/api/v1/datasets" in text and "df.evaluate(" in text
    assert 'aria-current="page">Evaluation' in text


def test_pages_of_a_dataset_its_runs_a_run_and_a_comparison(member, project, api, dataset, run):
    dataset("ds", number_items(3, tags=["volume"]) + [{"id": "x", "input": XSS, "expected": XSS}])
    old = run("ds", {"q-1": 10, "q-2": 0, "x": XSS}, name=XSS)
    new = run("ds", {"q-1": 0, "q-2": 20, "q-3": 30}, name="new prompt")
    slug = project.slug

    listing = member.get(f"/p/{slug}/datasets/").content.decode()
    assert "/p/acme/datasets/ds/" in listing and "50.0%" in listing

    detail = member.get(f"/p/{slug}/datasets/ds/").content.decode()
    assert XSS not in detail and "&lt;script&gt;" in detail
    assert "Roll back to this" in detail and "export.jsonl" in detail
    assert "v0" in detail and "+4" in detail

    runs_page = member.get(f"/p/{slug}/datasets/ds/runs/").content.decode()
    assert 'id="runs-chart-data"' in runs_page and XSS not in runs_page
    assert "/static/js/evals-runs." in runs_page  # hashed once collected

    run_page = member.get(f"/p/{slug}/runs/{new['id']}/").content.decode()
    assert run_page.index('data-item="q-1"') < run_page.index('data-item="q-2"')  # failed first
    assert "|10 - 0| = 10 &gt; 0.5" in run_page
    filtered = member.get(f"/p/{slug}/runs/{new['id']}/?tag=volume&outcome=failed").content.decode()
    assert 'data-item="q-1"' in filtered and 'data-item="q-2"' not in filtered

    compare = member.get(f"/p/{slug}/runs/{new['id']}/compare/?to={old['id']}").content.decode()
    fixed = compare[compare.index('id="fixed"'):compare.index('id="broken"')]
    broken = compare[compare.index('id="broken"'):]
    assert 'data-item="q-3"' in fixed and 'data-item="q-2"' in fixed
    assert 'data-item="q-1"' in broken and 'data-item="x"' in broken
    assert XSS not in compare
    # Without `to`, the previous finished run.
    assert member.get(f"/p/{slug}/runs/{new['id']}/compare/").status_code == 200
    assert member.get(f"/p/{slug}/runs/{old['id']}/compare/").status_code == 302


def test_results_link_to_their_trace_opened_on_their_node(member, project, ingest, dataset, run):
    ingest(node_event("final-1", trace_id="eval-t-1"))
    dataset("ds", number_items(1))
    summary = run("ds", [{"item_id": "q-1", "actual": 3, "trace_id": "eval-t-1", "product_id": "final-1"}])
    page = member.get(f"/p/{project.slug}/runs/{summary['id']}/").content.decode()
    # A failed case: opened with its root cause already shown.
    assert f'href="/p/{project.slug}/traces/eval-t-1/?analyze=final-1"' in page
    assert "why is this wrong?" in page


def test_export_and_import_jsonl_from_the_page(member, project, api, dataset):
    dataset("ds", number_items(2))
    exported = member.get(f"/p/{project.slug}/datasets/ds/export.jsonl")
    assert exported.status_code == 200 and exported["Content-Type"] == "application/x-ndjson"
    assert len(exported.content.decode().splitlines()) == 2

    dataset("copy")
    upload = SimpleUploadedFile("ds.jsonl", exported.content, content_type="application/x-ndjson")
    response = member.post(f"/p/{project.slug}/datasets/copy/import", {"file": upload}, follow=True)
    assert "Version 1: 2 added" in response.content.decode()
    assert len(api.get("/api/v1/datasets/copy").json()["items"]) == 2

    bad = SimpleUploadedFile("bad.jsonl", b'{"id": "z", "expected": "x", "kind": "number"}\n')
    response = member.post(f"/p/{project.slug}/datasets/copy/import", {"file": bad}, follow=True)
    assert "Nothing imported: items[0].expected" in response.content.decode()
    assert api.get("/api/v1/datasets/copy").json()["version"] == 1


def test_rollback_and_create_from_the_page(member, project, api, dataset):
    member.post(f"/p/{project.slug}/datasets/", {"name": "ds", "description": "made on the page"})
    api.post("/api/v1/datasets/ds/items", {"items": number_items(2)}, format="json")
    response = member.post(f"/p/{project.slug}/datasets/ds/rollback", {"version": "0"}, follow=True)
    assert "Version 2 now equals version 0" in response.content.decode()
    assert api.get("/api/v1/datasets/ds").json()["items"] == []
    again = member.post(f"/p/{project.slug}/datasets/", {"name": "ds"}, follow=True)
    assert "already exists" in again.content.decode()
    bad = member.post(f"/p/{project.slug}/datasets/", {"name": "a/b"}, follow=True)
    assert "Not created: name" in bad.content.decode()


def test_add_a_trace_to_a_truth_set_from_the_trace_page(member, project, api, ingest):
    ingest(node_event("in", trace_id="ticket-9", source_type="user_input", content="How many refunds in May?"),
           node_event("out", trace_id="ticket-9", parents=["in"], content="12", seconds=1))
    page = member.get(f"/p/{project.slug}/traces/ticket-9/").content.decode()
    assert 'id="add-to-truth-set"' in page and "How many refunds in May?" in page
    response = member.post(f"/p/{project.slug}/datasets/from-trace",
                           {"trace_id": "ticket-9", "dataset": "", "new_dataset": "refund-counts",
                            "expected": "14", "tags": "refunds, may"}, follow=True)
    assert "Added ticket-9 to refund-counts" in response.content.decode()
    item = api.get("/api/v1/datasets/refund-counts").json()["items"][0]
    assert item == {"id": "ticket-9", "input": "How many refunds in May?", "expected": 14, "kind": "number",
                    "tags": ["refunds", "may"], "origin": "production", "tolerance": None, "drifted": False}
    label = member.post(f"/p/{project.slug}/datasets/from-trace",
                        {"trace_id": "ticket-9", "dataset": "refund-counts", "item_id": "intent-9",
                         "expected": "refund_status", "kind": "label"}, follow=True)
    assert "Added intent-9" in label.content.decode()
    bad = member.post(f"/p/{project.slug}/datasets/from-trace",
                      {"trace_id": "ticket-9", "dataset": "refund-counts", "expected": "many", "kind": "number"},
                      follow=True)
    assert "Not added to the truth set: item.expected" in bad.content.decode()


def test_another_projects_pages_are_not_found(member, make_project):
    other, key = make_project("globex")
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    client.post("/api/v1/datasets", {"name": "ds"}, format="json")
    run_id = client.post("/api/v1/runs", {"dataset": "ds"}, format="json").json()["id"]
    for url in ["/p/globex/datasets/", "/p/globex/datasets/ds/", "/p/globex/datasets/ds/runs/",
                f"/p/globex/runs/{run_id}/", "/p/acme/datasets/ds/", f"/p/acme/runs/{run_id}/"]:
        assert member.get(url).status_code == 404, url
