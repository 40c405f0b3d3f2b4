"""Every metric counts production unless asked for another environment: the
node totals, the price of certainty's metrics, the summary, the dashboards,
the per-policy-version figures and the Prometheus gauges; each figure
recomputed here from the raw rows."""

from collections import Counter
from datetime import timedelta

import pytest

from metrics.questions import Filters
from metrics.rollups.refresh import refresh_rollups
from metrics.values import window_values
from provenance.models import Escalation, Fuse, FuseDecision, Node, Review, Trace
from tests.metrics.traffic import fuse_loop_events, post_in_batches, workflow_events
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


def policy_traffic() -> list[dict]:
    """The fuse loop's decisions, reviews and escalations in both environments, in the same hours."""
    production = workflow_events(seed=31, traces=60)
    evaluation = workflow_events(seed=32, traces=40, prefix="eval-", environment="evaluation")
    return (production + fuse_loop_events(production, seed=33)
            + evaluation + fuse_loop_events(evaluation, seed=34, prefix="eval-"))


def versions_from_raw(project, environment: str, start, end) -> list[tuple]:
    """What each policy version did, recomputed in Python from the raw rows:
    the decisions about traces of `environment` (a trace not stored is production's)."""
    kept = {key: env for key, env in Trace.objects.filter(project=project).values_list("trace_id", "environment")}
    decisions = [f for f in Fuse.objects.filter(project=project, timestamp__gte=start, timestamp__lt=end)
                 if kept.get(f.trace_id, "production") == environment]
    newest = {}
    for review in Review.objects.filter(project=project).order_by("timestamp", "pk").select_related("trace"):
        newest[review.trace.trace_id] = review.verdict
    escalated = Counter(Escalation.objects.filter(project=project).values_list("trace__trace_id", flat=True))
    rows = []
    for version in sorted({f.policy_version for f in decisions}, key=lambda v: (v is None, v or 0)):
        mine = [f for f in decisions if f.policy_version == version]
        nodes = {f.product_id for f in mine}
        fused = {f.product_id for f in mine if f.decision == FuseDecision.BLOCK}
        traces = {f.trace_id for f in mine}
        reviewed = [t for t in traces if t in newest]
        incorrect = sum(newest[t] == "incorrect" for t in reviewed)
        escalations = sum(escalated[t] for t in traces)
        rows.append((version, len(mine), len(nodes), len(traces), pytest.approx(len(fused) / len(nodes)),
                     len(reviewed), pytest.approx(incorrect / len(reviewed)) if reviewed else None, escalations,
                     pytest.approx(escalations / len(traces))))
    return rows


@pytest.mark.parametrize("refreshed", [False, True])
def test_policy_version_figures_count_production_unless_asked(project, ingest, api, refreshed):
    post_in_batches(ingest, policy_traffic())
    if refreshed:
        refresh_rollups()
    window = (BASE_TIME, BASE_TIME + timedelta(hours=7))
    query = {"start": window[0].isoformat(), "end": window[1].isoformat()}
    for environment in ("production", "evaluation"):
        asked = query if environment == "production" else {**query, "environment": environment}
        response = api.get("/api/v1/metrics/fuses", asked)
        assert response.status_code == 200, response.content
        found = [(r["policy_version"], r["decisions"], r["nodes"], r["traces"], r["fuse_rate"], r["reviewed"],
                  r["incorrect_rate"], r["escalations"], r["escalation_rate"])
                 for r in response.json()["by_policy_version"]]
        expected = versions_from_raw(project, environment, *window)
        assert found == expected, environment
        assert sum(row[1] for row in expected) > 20, environment  # both environments judged plenty
