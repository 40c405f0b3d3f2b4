"""Every metric counts production unless asked for another environment: the
node totals, the price of certainty's metrics, the summary, the dashboards
and the Prometheus gauges; each figure recomputed here from the raw rows."""

from datetime import timedelta

import pytest

from metrics.questions import Filters
from metrics.rollups.refresh import refresh_rollups
from metrics.values import window_values
from provenance.models import FuseDecision, Node
from tests.metrics.traffic import post_in_batches
from tests.support.events import BASE_TIME, node_event

WINDOW = (BASE_TIME, BASE_TIME + timedelta(hours=4))
QUERY = {"start": WINDOW[0].isoformat(), "end": WINDOW[1].isoformat()}


def traffic() -> list[dict]:
    events = []
    for t in range(30):
        environment = "evaluation" if t % 3 == 0 else "production"
        for n in range(4):
            body = {"environment": environment, "confidence": 0.2 if environment == "evaluation" else 0.8,
                    "duration_ms": 1000.0 * (n + 1) if environment == "evaluation" else 10.0 * (n + 1),
                    "model": "gpt-4o-mini", "usage": {"input_tokens": 100, "output_tokens": 10 * n},
                    "cost_usd": 0.5 if environment == "evaluation" else 0.001 * n}
            if environment == "evaluation" and n == 0:
                body["fuse"] = {"decision": "block", "reason": "eval"}
            events.append(node_event(f"t{t}-n{n}", f"t{t}", seconds=300 * t + n, **body))
    return events


def raw(environment: str):
    return Node.objects.filter(trace__environment=environment, timestamp__gte=WINDOW[0], timestamp__lt=WINDOW[1])


def expected(environment: str) -> dict:
    nodes = raw(environment)
    durations = sorted(nodes.values_list("duration_ms", flat=True))
    costs = list(nodes.values_list("cost_usd", flat=True))
    traces = nodes.values("trace").distinct().count()
    return {
        "node_count": nodes.count(), "trace_count": traces,
        "fuse_rate": nodes.filter(fuse_state=FuseDecision.BLOCK).count() / nodes.count(),
        "mean_latency_ms": sum(durations) / len(durations),
        "p95_latency_ms": durations[-(-95 * len(durations) // 100) - 1],
        "tokens": sum(i + o for i, o in nodes.values_list("input_tokens", "output_tokens")),
        "cost_usd": sum(costs), "cost_per_trace": sum(costs) / traces,
    }


@pytest.mark.parametrize("refreshed", [False, True])
def test_metrics_count_production_unless_asked(project, ingest, api, refreshed):
    post_in_batches(ingest, traffic())
    if refreshed:
        refresh_rollups()
    for environment, filters in (("production", Filters()), ("evaluation", Filters(environment="evaluation"))):
        want = expected(environment)
        found = window_values(project, *WINDOW, filters, list(want))
        for name, value in want.items():
            assert found[name] == pytest.approx(value, rel=1e-9), (environment, name)
    answer = api.get("/api/v1/metrics/values", {**QUERY, "environment": "evaluation"}).json()["values"]
    assert answer["node_count"] == raw("evaluation").count()
    assert api.get("/api/v1/metrics/values", QUERY).json()["values"]["node_count"] == raw("production").count()
    summary = api.get("/api/v1/metrics/summary", {**QUERY, "metric": "duration_ms"}).json()
    assert (summary["count"], summary["max"]) == (raw("production").count(), 40.0)
    overview = api.get("/api/v1/metrics/overview", {**QUERY, "environment": "evaluation"}).json()
    assert overview["headline"]["current"]["fuse_rate"] == expected("evaluation")["fuse_rate"]


def test_gauges_count_production(project, ingest, api):
    from django.utils import timezone
    now = timezone.now()
    events = traffic()
    for e in events:
        e["timestamp"] = (now - timedelta(minutes=5)).isoformat()
    ingest(*events)
    text = api.get("/metrics").content.decode()
    line = next(x for x in text.splitlines() if x.startswith("denoise_tokens{"))
    production = Node.objects.filter(trace__environment="production")
    assert float(line.rsplit(" ", 1)[1]) == sum(i + o for i, o in production.values_list("input_tokens", "output_tokens"))
    line = next(x for x in text.splitlines() if x.startswith("denoise_p95_latency_ms{"))
    assert float(line.rsplit(" ", 1)[1]) == 40.0
