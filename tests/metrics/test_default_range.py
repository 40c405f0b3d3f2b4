"""The metrics pages' default range fits the project's data, so the period
before it has data too; explicit ranges and the API's default do not move."""

from datetime import UTC, datetime, timedelta

from metrics.params import fitted
from tests.support.events import BASE_TIME, node_event

NOW = datetime(2026, 12, 1, 12, 30, tzinfo=UTC)
HOUR, DAY = timedelta(hours=1), timedelta(days=1)


def test_three_days_of_data_open_on_the_last_24h():
    assert fitted(NOW - 3 * DAY, NOW - timedelta(minutes=1), NOW) == (NOW - DAY, NOW, "24h", "now")


def test_two_weeks_of_data_keep_the_usual_7_days():
    assert fitted(NOW - 15 * DAY, NOW, NOW) == (NOW - 7 * DAY, NOW, "7d", "now")
    assert fitted(NOW - 90 * DAY, NOW, NOW)[2] == "7d"


def test_less_than_two_hours_of_data_open_on_the_last_hour():
    assert fitted(NOW - timedelta(minutes=30), NOW, NOW)[2] == "1h"


def test_data_that_stopped_earlier_ends_the_range_at_its_newest_hour():
    newest = datetime(2026, 11, 20, 17, 42, tzinfo=UTC)
    end = datetime(2026, 11, 20, 18, 0, tzinfo=UTC)
    assert fitted(newest - 3 * DAY, newest, NOW) == (end - DAY, end, "24h", "data")


def test_the_default_page_range_has_a_previous_period_with_data(member, ingest):
    # 30 hours of data that stopped on 2026-11-21 ~15:00: the page opens on 6h up to it.
    ingest(*[node_event(f"n{h}", f"t{h}", seconds=h * 3600, confidence=0.8) for h in range(31)])
    html = member.get("/metrics/acme/").content.decode()
    assert 'id="range-fitted"' in html and "No range chosen: the last 6h up to the newest data" in html
    assert '<option value="6h" selected>' in html
    assert 'name="end" step="1" value="2026-11-21T16:00:00"' in html
    body = member.get("/metrics/acme/data/overview.json").json()
    assert body["query"]["range"] == "6h" and body["query"]["end"] == "2026-11-21T16:00:00Z"
    assert body["headline"]["previous"]["node_count"] == 6 and body["headline"]["current"]["node_count"] == 6


def test_a_page_that_compares_nothing_takes_all_the_data_the_usual_7_days_hold():
    assert fitted(NOW - 3 * DAY, NOW, NOW, compare=False) == (NOW - 7 * DAY, NOW, "7d", "now")
    assert fitted(NOW - 20 * HOUR, NOW, NOW, compare=False)[2] == "24h"
    assert fitted(NOW - 90 * DAY, NOW, NOW, compare=False)[2] == "7d"


def test_calibration_opens_on_all_the_reviews_while_the_overview_keeps_a_previous_period(member, ingest):
    ingest(*[node_event(f"n{h}", f"t{h}", seconds=h * 3600, confidence=0.8) for h in range(31)])
    calibration = " ".join(member.get("/metrics/acme/calibration/").content.decode().split())
    assert "No range chosen: the last 7d up to the newest data, the shortest preset (up to 7d) holding" in calibration
    query = member.get("/metrics/acme/data/calibration.json").json()["query"]
    assert query["range"] == "7d" and query["end"] == "2026-11-21T16:00:00Z"
    assert member.get("/metrics/acme/data/overview.json").json()["query"]["range"] == "6h"


def test_under_two_hours_of_data_the_note_does_not_promise_a_previous_period(member, ingest):
    ingest(node_event("n1", confidence=0.8), node_event("n2", seconds=1800, confidence=0.8))
    html = " ".join(member.get("/metrics/acme/").content.decode().split())
    assert "No range chosen: the last 1h up to the newest data" in html
    assert "also has data" not in html
    assert "this project's data spans less than 2 hours, so the previous 1h has none to compare with" in html


def test_explicit_ranges_and_the_api_default_are_not_fitted(member, api, ingest):
    ingest(node_event("n1", confidence=0.8), node_event("n2", seconds=3600, confidence=0.8))
    explicit = member.get("/metrics/acme/data/overview.json", {"range": "30d"}).json()["query"]
    assert explicit["range"] == "30d"
    ended = member.get("/metrics/acme/data/overview.json", {"end": (BASE_TIME + DAY).isoformat()}).json()["query"]
    assert ended["range"] == "7d" and ended["end"] == "2026-11-21T09:00:00Z"
    html = member.get("/metrics/acme/", {"range": "30d"}).content.decode()
    assert 'id="range-fitted"' not in html and '<option value="30d" selected>' in html
    api_query = api.get("/api/v1/metrics/overview").json()["query"]
    assert api_query["range"] == "7d"
