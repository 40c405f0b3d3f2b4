"""While PostgreSQL is unreachable: every API request answers 503 with
Retry-After within 2 s (never 500), OTLP exporters get an OTLP Status, pages a
styled "temporarily unavailable" page; the server recovers on its own when the
database is back; and the SDK loses nothing recorded across the outage.

The database is a PostgreSQL server of this module's own (tests/support/own_postgres.py),
stopped and started here; the dashboard is `manage.py serve` with two workers."""

import json
import re
import time

import httpx
import psycopg
import pytest
from django.urls import URLResolver, get_resolver

from denoiseflow import Recorder
from tests.provenance.ingest.otlp.test_partial_success import export, span
from tests.support.own_postgres import manage, migrated_cluster
from tests.support.serving import Serve, signed_in

ANSWER_WITHIN_SECONDS = 2.0


@pytest.fixture(scope="module")
def own_postgres():
    with migrated_cluster() as server:
        yield server


@pytest.fixture(scope="module")
def dashboard(own_postgres, tmp_path_factory):
    """`serve` on the module's database, with a project and its key."""
    created = manage(own_postgres.url, "create_project", "outage", "--json")
    manage(own_postgres.url, "createsuperuser", "--noinput", "--username", "ops", "--email", "ops@example.com",
           DJANGO_SUPERUSER_PASSWORD="pw-ops-12345")
    with Serve(tmp_path_factory.mktemp("outage"), workers=2, DATABASE_URL=own_postgres.url) as server:
        server.api_key = json.loads(created)["api_key"]
        yield server


def api_paths() -> list[str]:
    """Every /api/v1/ route, with sample values for its parameters."""
    def walk(patterns, prefix=""):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + str(pattern.pattern))
            else:
                yield prefix + str(pattern.pattern)

    routes = {route for route in walk(get_resolver().url_patterns) if route.startswith("api/v1/")}
    return sorted("/" + re.sub(r"<[^>]+>", "x", re.sub(r"<int:[^>]+>", "1", route)) for route in routes)


def timed(method: str, url: str, **options) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = httpx.request(method, url, timeout=10, **options)
    return response, time.monotonic() - started


def test_while_the_database_is_down_every_api_request_is_503_with_retry_after_within_2s(dashboard, own_postgres):
    auth = {"Authorization": f"Bearer {dashboard.api_key}"}
    assert httpx.get(f"{dashboard.url}/api/v1/traces", headers=auth).status_code == 200
    paths = api_paths()
    assert "/api/v1/ingest" in paths and len(paths) > 20
    person = signed_in(dashboard.url, "ops", "pw-ops-12345")

    own_postgres.stop()
    try:
        for path in paths:
            for method in ("GET", "POST"):
                response, took = timed(method, dashboard.url + path, headers=auth, json={"batch": []})
                assert response.status_code == 503, (method, path, response.status_code, response.text[:300])
                assert response.headers["Retry-After"].isdigit(), (method, path)
                assert response.json()["error"] == "the database is unavailable; retry later"
                assert took < ANSWER_WITHIN_SECONDS, (method, path, took)

        otlp, took = timed("POST", f"{dashboard.url}/v1/traces", headers={**auth, "Content-Type": "application/json"},
                           content=export(span("00000000000000b1")))
        assert otlp.status_code == 503 and otlp.headers["Retry-After"].isdigit() and took < ANSWER_WITHIN_SECONDS
        assert otlp.json()["code"] == 14  # UNAVAILABLE: OTLP exporters retry it

        for page_path in ("/p/outage/traces/", "/metrics/outage/", "/alerts/outage/", "/"):
            started = time.monotonic()
            page = person.get(dashboard.url + page_path)
            assert page.status_code == 503, (page_path, page.status_code)
            assert time.monotonic() - started < ANSWER_WITHIN_SECONDS
            assert "Temporarily unavailable" in page.text and "/static/css/app." in page.text
    finally:
        own_postgres.start()

    # No restart: each worker's pool replaces the connections that died with the server.
    # Each worker finds out on its own; a connection per request reaches both.
    wait_for(lambda: all(httpx.get(f"{dashboard.url}/api/v1/traces", headers=auth, timeout=10).status_code == 200
                         for _ in range(8)), "every worker to answer again", timeout=60)


def stored_nodes(own_postgres, trace_prefix: str) -> tuple[int, int]:
    with psycopg.connect(own_postgres.url.replace("postgres://", "postgresql://")) as db:
        return db.execute(
            "SELECT count(*), count(DISTINCT n.product_id) FROM provenance_node n"
            " JOIN provenance_trace t ON t.id = n.trace_id WHERE t.trace_id LIKE %s", (trace_prefix + "%",),
        ).fetchone()


def test_5000_events_recorded_through_the_sdk_across_an_outage_are_all_stored_once(dashboard, own_postgres):
    """The outage lasts until the SDK has been refused OUTAGE_ATTEMPTS times
    (more than twice the 5 server errors after which it used to give a batch
    up): a state to wait on rather than a clock. The SDK honours the 503's
    Retry-After (5 s), so that is about the issue's 60 s outage."""
    recorder = Recorder(dashboard.url, dashboard.api_key, batch_size=100, flush_interval=0.05,
                        backoff_base=0.1, max_backoff=1.0, timeout=5, max_buffer=10_000)
    recorded = 0

    def record(count: int):
        nonlocal recorded
        for _ in range(count):
            recorder.record(f"sdk-outage-{recorded % 50}", "agent", f"artifact {recorded}",
                            product_id=f"sdk-outage-node-{recorded}")
            recorded += 1

    try:
        record(1000)
        wait_for(lambda: stored_nodes(own_postgres, "sdk-outage-")[0] > 0, "a first batch stored")
        own_postgres.stop()
        try:
            refused_before = recorder.stats()["retries"]
            record(3000)
            wait_for(lambda: recorder.stats()["retries"] - refused_before >= OUTAGE_ATTEMPTS,
                     f"{OUTAGE_ATTEMPTS} refused deliveries", timeout=300)
        finally:
            own_postgres.start()
        record(1000)
        assert recorder.flush(timeout=180)
    finally:
        recorder.close(timeout=5)

    stats = recorder.stats()
    assert (stats["sent"], stats["dropped"], stats["failed"], stats["rejected"]) == (5000, 0, 0, 0), stats
    assert stored_nodes(own_postgres, "sdk-outage-") == (5000, 5000)


OUTAGE_ATTEMPTS = 12


def wait_for(condition, what: str, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
