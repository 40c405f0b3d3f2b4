"""The metrics pages as a member sees them (server side)."""

import pytest

from metrics.rollups.refresh import refresh_rollups
from tests.support.events import node_event

PAGES = ["", "fuses/", "uncertainty/", "drift/", "calibration/"]
DATA = ["overview", "fuses", "distributions", "drift", "calibration"]
WINDOW = "start=2026-11-20T09:00:00&end=2026-11-20T12:00:00"


@pytest.mark.parametrize("path", PAGES)
def test_each_page_renders_with_sub_navigation_and_filters(member, project, ingest, path):
    ingest(node_event("n1", agent_id="retriever", step="retrieval", round=2, confidence=0.4))
    refresh_rollups()
    response = member.get(f"/metrics/acme/{path}?{WINDOW}")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'aria-label="Metrics pages"' in html and 'aria-current="page"' in html
    assert '<option value="retriever">' in html and '<option value="2">' in html
    assert 'data-source="/metrics/acme/data/' in html


@pytest.mark.parametrize("name", DATA)
def test_each_page_has_a_json_endpoint(member, project, name):
    response = member.get(f"/metrics/acme/data/{name}.json?{WINDOW}")
    assert response.status_code == 200
    assert response.json()["query"]["end"] == "2026-11-20T12:00:00Z"


def test_bad_filters_are_named_on_the_page_and_by_the_endpoint(member, project):
    html = member.get("/metrics/acme/?round=first").content.decode()
    assert "round</strong>" in html and 'data-source=""' in html
    response = member.get("/metrics/acme/data/overview.json?start=soon")
    assert response.status_code == 400
    assert "start" in response.json()["fields"]


@pytest.mark.parametrize("path", PAGES)
def test_bad_filters_show_the_errors_instead_of_empty_charts(member, project, path):
    html = member.get(f"/metrics/acme/{path}?range=zz&round=abc").content.decode()
    assert "zz&quot; is not a valid choice" in html and "round</strong>" in html
    assert "data-chart=" not in html and "drift-summary" not in html and "Buckets of" not in html


def test_another_project_is_not_found(member, make_project):
    make_project("globex")
    assert member.get("/metrics/globex/").status_code == 404
    assert member.get("/metrics/globex/data/overview.json").status_code == 404


def test_signing_in_is_required(client, project):
    assert client.get("/metrics/acme/").status_code == 302
    assert client.get("/metrics/acme/data/overview.json").status_code == 302


def test_agent_text_is_escaped(member, project, ingest):
    ingest(node_event("x1", agent_id='<img src=x onerror="alert(1)">', confidence=0.5))
    html = member.get("/metrics/acme/").content.decode()
    assert '<img src=x' not in html and "&lt;img src=x" in html


def test_charts_grouped_by_agents_named_in_unicode_digits_order_them_as_text(member, project, ingest):
    # "²" passes str.isdigit but int() refuses it: it must sort as a name.
    fused = {"decision": "block", "reason": "low"}
    ingest(*[node_event(f"u{i}", agent_id=agent, confidence=0.3, fuse=fused)
             for i, agent in enumerate(["²", "10", "2", "٣"])])
    refresh_rollups()
    response = member.get(f"/metrics/acme/data/fuses.json?{WINDOW}")
    assert response.status_code == 200
    assert [row["value"] for row in response.json()["by_agent"]] == ["2", "10", "²", "٣"]
