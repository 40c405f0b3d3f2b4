"""The drift page's verdict as its JSON gives it: the baseline it chose and
says, no verdict on an empty baseline, and flags only where the data moved."""

from datetime import timedelta

import pytest

from metrics.stats import drift
from tests.metrics.traffic import post_in_batches, steady_confidence_events
from tests.support.events import BASE_TIME

DAY0 = BASE_TIME.replace(hour=0)


def drift_json(member, **query):
    response = member.get("/metrics/acme/data/drift.json", query)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.fixture
def demo_like_day(ingest):
    """A day of steady traffic (40 values an hour) with the distribution shifted for 12:00–15:00."""
    post_in_batches(ingest, steady_confidence_events(DAY0, 24, shifted=range(12, 15)))


def test_the_planted_shift_is_flagged_and_the_quiet_buckets_are_not(member, demo_like_day):
    body = drift_json(member, start=DAY0.isoformat(), end=(DAY0 + timedelta(days=1)).isoformat())
    # 40 values an hour: 3-hour buckets, so that a bucket holds the 100 a verdict needs.
    assert body["bucket_seconds"] == 3 * 3600 and len(body["buckets"]) == 8
    assert body["baseline"]["source"] == "earliest"
    assert (body["baseline"]["start"], body["baseline"]["end"]) == ("2026-11-20T00:00:00Z", "2026-11-20T06:00:00Z")
    assert body["baseline"]["count"] == 240
    assert body["status"][:2] == ["baseline", "baseline"]
    assert body["verdict"] == "drift" and body["drifted"] == ["2026-11-20T12:00:00Z"]
    assert all(status in ("stable", "noise") for status in body["status"][2:4] + body["status"][5:])
    assert body["rule"] == {"watch": 0.1, "drift": 0.25, "min_values": drift.MIN_VALUES}


def test_the_period_before_is_the_baseline_when_the_range_starts_thin(member, demo_like_day):
    # From 23:00 the range holds one hour of data (40 values): too few for a baseline, so the
    # day before it serves; and no bucket of the range can be judged.
    body = drift_json(member, start=(DAY0 + timedelta(hours=23)).isoformat(),
                      end=(DAY0 + timedelta(hours=47)).isoformat())
    assert body["baseline"]["source"] == "before" and body["baseline"]["count"] == 23 * 40
    assert (body["baseline"]["start"], body["baseline"]["end"]) == ("2026-11-19T23:00:00Z", "2026-11-20T23:00:00Z")
    assert body["verdict"] == "too_few" and body["drifted"] == []


def test_an_empty_baseline_gives_no_verdict(member, demo_like_day):
    body = drift_json(member, start=DAY0.isoformat(), end=(DAY0 + timedelta(days=1)).isoformat(),
                      baseline_start=(DAY0 - timedelta(days=3)).isoformat(),
                      baseline_end=(DAY0 - timedelta(days=2)).isoformat())
    assert body["baseline"] == {**body["baseline"], "source": "given", "count": 0, "shares": None}
    assert body["verdict"] == "no_baseline"
    assert body["drifted"] == [] and body["watch"] == [] and set(body["status"]) == {"few"}
    assert body["psi"] == [None] * len(body["buckets"])


def test_a_range_without_data_gives_no_verdict(member, project):
    body = drift_json(member, start=DAY0.isoformat(), end=(DAY0 + timedelta(days=1)).isoformat())
    assert body["verdict"] == "no_baseline" and body["baseline"]["count"] == 0 and body["drifted"] == []


def test_the_page_carries_a_message_for_every_verdict(member, project):
    html = member.get("/metrics/acme/drift/").content.decode()
    for verdict in ("no_baseline", "too_few", "stable", "watch", "drift"):
        assert f'data-verdict="{verdict}"' in html
    assert "fewer than the" in html and 'data-baseline="earliest"' in html


def test_an_explicit_resolution_fixes_the_width(member, demo_like_day):
    body = drift_json(member, start=DAY0.isoformat(), end=(DAY0 + timedelta(days=1)).isoformat(), resolution="hour")
    assert body["bucket_seconds"] == 3600 and len(body["buckets"]) == 24
    assert set(body["status"][6:]) == {"few"}  # 40 values an hour: too few to judge
