"""Every metrics page in Chromium, under the strict CSP: the charts draw from
their JSON and no script error is logged."""

from datetime import UTC, datetime, timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from metrics.rollups.refresh import refresh_rollups
from provenance.health.runs import check_project
from provenance.ingest.write import ingest_events
from tests.metrics.traffic import steady_confidence_events, workflow_events
from tests.support.events import review_event

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# (path, charts drawn on it)
PAGES = [("", 2), ("fuses/", 3), ("uncertainty/", 3), ("drift/", 3), ("calibration/", 2)]


@pytest.fixture
def recent_traffic(project):
    """A day of traffic ending now, so the default range shows it."""
    events = workflow_events(seed=31, traces=60, hours=20)
    start = timezone.now() - timedelta(hours=22)
    for event in events:
        moved = start + (timezone.datetime.fromisoformat(event["timestamp"]) - timezone.datetime.fromisoformat(
            "2026-11-20T09:00:00+00:00"))
        event["timestamp"] = moved.isoformat()
    reviews = [review_event(f"t{i}", "incorrect" if i % 3 == 0 else "correct") for i in range(0, 60, 2)]
    for review in reviews:
        review["timestamp"] = timezone.now().isoformat()
    ingest_events(project, events + reviews)
    refresh_rollups()


def signed_in(page, live_server, member):
    page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME,
                               "value": member.cookies[settings.SESSION_COOKIE_NAME].value, "url": live_server.url}])
    problems = []
    page.on("console", lambda message: problems.append(message.text)
            if message.type == "error" and not message.location.get("url", "").endswith("/favicon.ico") else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    return problems


def test_every_page_draws_its_charts(live_server, page, member, recent_traffic):
    problems = signed_in(page, live_server, member)
    for path, charts in PAGES:
        page.goto(f"{live_server.url}/metrics/acme/{path}?range=24h")
        page.wait_for_selector("#metrics-root[data-state=ready]", timeout=15000)
        assert page.locator(".js-plotly-plot").count() >= charts, path
    assert problems == []


def test_overview_shows_headline_figures_and_filters_apply(live_server, page, member, project, recent_traffic):
    check_project(project, now=datetime(2026, 12, 1, 3, 4, 5, 678, tzinfo=UTC))
    signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/metrics/acme/?range=24h")
    page.wait_for_selector("#metrics-root[data-state=ready]")
    assert " in the check of 2026-12-01 03:04 UTC" in page.locator("#health p").text_content()
    nodes = page.locator("[data-metric=node_count] .value").text_content()
    assert int(nodes.replace(",", "")) > 0
    page.fill("input[name=agent_id]", "retriever")
    page.get_by_role("button", name="Apply").click()
    page.wait_for_selector("#metrics-root[data-state=ready]")
    assert "agent_id=retriever" in page.url
    filtered = page.locator("[data-metric=node_count] .value").text_content()
    assert 0 < int(filtered.replace(",", "")) < int(nodes.replace(",", ""))
    page.get_by_role("link", name="Drift").click()
    page.wait_for_selector("#metrics-root[data-state=ready]")
    assert page.locator("input[name=agent_id]").input_value() == "retriever"


def test_a_bimodal_distribution_is_flagged(live_server, page, member, project):
    now = timezone.now()
    events = []
    for i in range(80):
        confidence = 0.1 + (i % 5) * 0.01 if i % 2 else 0.9 - (i % 5) * 0.01
        events.append({"id": f"e{i}", "type": "node", "timestamp": (now - timedelta(minutes=i)).isoformat(),
                       "body": {"trace_id": f"t{i}", "product_id": f"p{i}", "agent_id": "extractor",
                                "step": "entity_extraction", "confidence": confidence}})
    ingest_events(project, events)
    signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/metrics/acme/uncertainty/?range=24h")
    page.wait_for_selector("#metrics-root[data-state=ready]")
    assert page.locator("[data-metric=confidence] h2 .flag").text_content() == "bimodal"


def test_drift_on_demo_like_data_flags_the_planted_shift_and_says_its_baseline(live_server, page, member, project):
    # Two days of steady traffic ending now (the default range fits to the last 24h, cut in
    # 3-hour buckets), with one 3-hour bucket shifted six to nine hours ago.
    hour = timezone.now().replace(minute=0, second=0, microsecond=0)
    start = hour - timedelta(hours=49)
    shifted_from = hour - timedelta(hours=hour.hour % 3 + 9)
    shifted = range(int((shifted_from - start) / timedelta(hours=1)), int((shifted_from - start) / timedelta(hours=1)) + 3)
    ingest_events(project, steady_confidence_events(start, 49, shifted=shifted))
    problems = signed_in(page, live_server, member)
    page.goto(f"{live_server.url}/metrics/acme/drift/")
    page.wait_for_selector("#metrics-root[data-state=ready]")
    assert page.locator("#range-fitted").is_visible()
    # The shared header names drift's bucket width, not the other pages' series step.
    assert "buckets of 3 hours" in page.locator(".metrics-window").text_content()
    assert "series per" not in page.locator(".metrics-window").text_content()
    assert page.locator("#drift-summary").get_attribute("data-verdict") == "drift"
    verdict = page.locator("#drift-verdict [data-verdict=drift]")
    assert verdict.is_visible() and "in 1 of" in verdict.text_content()
    assert f"{shifted_from:%Y-%m-%d %H:%M}–" in verdict.text_content()
    assert page.locator("[data-baseline=earliest]").is_visible()
    assert page.locator(".js-plotly-plot").count() == 3

    # From the day's first hour to its last: a run between 00:00 and 01:00 UTC once asked for
    # a baseline from 23:00 to 23:00 (start is 49 hours before the hour), which is a 400.
    empty = (start - timedelta(days=5)).replace(hour=0).strftime("%Y-%m-%dT%H:%M:%S")
    page.goto(f"{live_server.url}/metrics/acme/drift/?baseline_start={empty}&baseline_end={empty[:-8]}23:00:00")
    page.wait_for_selector("#metrics-root[data-state=ready]")
    message = page.locator("#drift-verdict [data-verdict=no_baseline]")
    assert message.is_visible() and "holds 0 values, fewer than the 100" in " ".join(message.text_content().split())
    assert not page.locator("#drift-verdict [data-verdict=stable]").is_visible()
    assert problems == []
