"""The health page: the latest findings grouped by kind, linked to their nodes, and the nightly trend."""

import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.provenance.health.health_runs import run_check
from tests.support.events import node_event

pytestmark = pytest.mark.django_db


def check(now):
    run_check("--now", now)


def test_without_a_report_the_page_says_so(member):
    response = member.get("/p/acme/health/")
    assert response.status_code == 200
    assert "No health report yet" in response.content.decode()
    assert b"plotly" not in response.content


def test_findings_are_grouped_by_kind_and_link_to_their_node(member, ingest):
    ingest(
        node_event("a", "run/1"), node_event("b", "run/1"),
        node_event("loop", "run 2", parents=["loop"]), node_event("<img src=x>", "run 2", parents=["loop"]),
    )
    check("2026-11-20T03:00:00Z")
    html = member.get("/p/acme/health/").content.decode()
    orphans = re.search(r'<section class="health-kind" id="kind-orphan".*?</section>', html, re.S).group(0)
    assert 'href="/p/acme/traces/run/1/?node=a"' in orphans and 'href="/p/acme/traces/run/1/?node=b"' in orphans
    cycles = re.search(r'id="kind-cycle".*?</section>', html, re.S).group(0)
    assert 'href="/p/acme/traces/run%202/?node=loop"' in cycles
    assert "lists itself as a parent" in cycles
    assert re.search(r'id="kind-broken_link".*?None\.', html, re.S)
    assert "<img src=x>" not in html and "&lt;img src=x&gt;" not in html  # a consumer, not a finding
    assert html.count('nonce="') >= 3


def test_untrusted_ids_are_escaped(member, ingest):
    ingest(node_event("<script>alert(1)</script>", "t"), node_event("x", "t"))
    check("2026-11-20T03:00:00Z")
    html = member.get("/p/acme/health/").content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_the_trend_counts_each_nights_last_run(member, ingest):
    night = timezone.localtime().replace(hour=3, minute=0, second=0, microsecond=0) - timedelta(days=2)
    ingest(node_event("a", "t"), node_event("b", "t"))
    check(night.isoformat())
    ingest(node_event("c", "t", parents=["a"]))
    check((night + timedelta(days=1)).isoformat())
    ingest(node_event("d", "t"))
    check((night + timedelta(days=1, hours=6)).isoformat())
    html = member.get("/p/acme/health/").content.decode()
    data = re.search(r'<script id="health-trend-data" type="application/json">(.*?)</script>', html, re.S).group(1)
    assert [(n["night"], n["orphan"]) for n in json.loads(data)] == [
        (night.date().isoformat(), 2), ((night + timedelta(days=1)).date().isoformat(), 2),
    ]
    assert 'src="/static/js/health-trend.' in html  # hashed once collected


def test_another_projects_page_is_404(member, make_project):
    make_project("globex")
    assert member.get("/p/globex/health/").status_code == 404


def test_the_page_requires_login(client, project):
    assert client.get("/p/acme/health/").status_code == 302
