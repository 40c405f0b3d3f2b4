"""GET /ops/metrics: the server's own metrics (ingest outcomes, latency by
route, webhook outcomes, Celery queue lag), summed over every worker process."""

import os
import subprocess
import sys
import uuid

import httpx
import orjson
import pytest
import redis
from celery import Celery
from django.db import connection
from prometheus_client.parser import text_string_to_metric_families

from core.process_metrics import CeleryQueueLag
from tests.support.events import node_event
from tests.support.serving import REPO, Serve, database_url

TOKEN = "ops-token-for-tests"
REDIS = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def samples(text: str) -> dict[str, list]:
    """{sample name (e.g. denoise_ingest_events_total): samples}."""
    found: dict[str, list] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append(sample)
    return found


def total(found: dict, name: str, **labels) -> float:
    return sum(s.value for s in found.get(name, []) if all(s.labels.get(k) == v for k, v in labels.items()))


def test_counters_of_several_processes_add_up(tmp_path):
    """Each process counts into its own file; any process's exposition sums them."""
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "denoise_dashboard.settings"}
    count = ("from core import process_metrics as m; "
             "m.INGEST_EVENTS.labels('/api/v1/ingest', 'accepted').inc({n}); m.WEBHOOK_DELIVERIES.labels('failed').inc()")
    for n in (3, 4):
        subprocess.run([sys.executable, "-c", count.format(n=n)], cwd=REPO, env=env, check=True)
    shown = subprocess.run(
        [sys.executable, "-c", "import sys; from core import process_metrics as m; "
                               "sys.stdout.write(m.exposition().decode())"],
        cwd=REPO, env=env, check=True, capture_output=True, text=True,
    ).stdout
    found = samples(shown)
    assert total(found, "denoise_ingest_events_total", outcome="accepted") == 7
    assert total(found, "denoise_webhook_deliveries_total", outcome="failed") == 2


@pytest.mark.django_db(transaction=True)
def test_serve_with_two_workers_answers_for_all_of_them(tmp_path, make_project):
    if connection.vendor != "postgresql":
        pytest.skip("serve tests run against PostgreSQL")
    _, key = make_project("ops")
    with Serve(tmp_path, workers=2, DATABASE_URL=database_url(connection.settings_dict),
               OPS_METRICS_TOKEN=TOKEN) as server:
        for i in range(6):
            # A new connection each time, so either worker may answer.
            server.ingest(key, node_event(f"n{i}", "t"), node_event(f"bad{i}", "t", confidence="high"))
        httpx.get(f"{server.url}/api/v1/traces/secret-trace-id", headers={"Authorization": f"Bearer {key}"})
        assert httpx.get(f"{server.url}/ops/metrics").status_code == 401
        assert httpx.get(f"{server.url}/ops/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 401
        # Whichever worker answers the scrape, it reports every worker's counts.
        for _ in range(4):
            response = httpx.get(f"{server.url}/ops/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
            found = samples(response.text)
            assert total(found, "denoise_ingest_events_total", outcome="accepted") == 6
            assert total(found, "denoise_ingest_events_total", outcome="rejected") == 6
            assert total(found, "denoise_http_request_duration_seconds_count", route="/api/v1/ingest",
                         method="POST") == 6
            routes = {s.labels.get("route") for s in found["denoise_http_request_duration_seconds_count"]}
            assert "/api/v1/traces/<path:trace_id>" in routes
            assert not any("secret-trace-id" in (route or "") for route in routes)
    assert list((tmp_path / "serve-var" / "prometheus").glob("*.db"))


def otlp_span(span_id: str, **attributes) -> dict:
    return {"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": span_id, "name": "step",
            "startTimeUnixNano": "1763629200000000000",
            "attributes": [{"key": key, "value": {"stringValue": value}} for key, value in attributes.items()]}


def test_events_of_both_ingest_endpoints_are_counted_by_route(client, settings, ingest, project_and_key):
    settings.OPS_METRICS_TOKEN = TOKEN

    def counted() -> dict:
        found = samples(client.get("/ops/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode())
        return {(route, outcome): total(found, "denoise_ingest_events_total", route=route, outcome=outcome)
                for route in ("/api/v1/ingest", "/v1/traces") for outcome in ("accepted", "rejected")}

    before = counted()
    ingest(node_event("n1", "t"), node_event("bad", "t", confidence="high"))
    spans = [otlp_span("00000000000000a1"), otlp_span("00000000000000a2"),
             otlp_span("00000000000000a3", **{"denoise.confidence": "very sure"})]
    exported = client.post("/v1/traces", orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}),
                           content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {project_and_key[1]}")
    assert exported.json()["partialSuccess"]["rejectedSpans"] == "1"
    after = counted()
    assert {labels: after[labels] - before[labels] for labels in after} == {
        ("/api/v1/ingest", "accepted"): 1, ("/api/v1/ingest", "rejected"): 1,
        ("/v1/traces", "accepted"): 2, ("/v1/traces", "rejected"): 1,
    }


@pytest.mark.django_db
def test_off_unless_a_token_is_configured(client, settings):
    settings.OPS_METRICS_TOKEN = ""
    assert client.get("/ops/metrics", HTTP_AUTHORIZATION="Bearer anything").status_code == 404


def test_queue_lag_is_the_age_of_the_oldest_waiting_task():
    queue = f"test-lag-{uuid.uuid4().hex}"
    client = redis.Redis.from_url(REDIS)
    try:
        client.ping()
    except redis.RedisError:
        pytest.skip("needs the Redis on this machine")
    broker = Celery(broker=REDIS, set_as_current=False)
    try:
        assert lag_and_length(queue) == (0.0, 0)
        import denoise_dashboard.celery  # noqa: F401  (stamps sent_at on publish)

        broker.send_task("alerts.tasks.never_run", queue=queue)
        broker.send_task("alerts.tasks.never_run", queue=queue)
        lag, length = lag_and_length(queue)
        assert length == 2 and 0.0 <= lag < 60
    finally:
        client.delete(queue)
        client.close()


def lag_and_length(queue: str) -> tuple[float, int]:
    families = {f.name: f.samples for f in CeleryQueueLag(REDIS, [queue]).collect()}
    return families["denoise_celery_queue_lag_seconds"][0].value, int(families["denoise_celery_queue_length"][0].value)

