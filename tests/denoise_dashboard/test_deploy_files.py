"""deploy/: the Grafana dashboard queries only series the server exports, and
the example scrape config scrapes both endpoints with bearer auth."""

import json
import re

from alerts.prometheus.exposition import GAUGES
from core import process_metrics
from tests.support.serving import REPO

SUFFIXES = ("_total", "_bucket", "_count", "_sum")


def exported() -> set[str]:
    names = {name for _, name, _ in GAUGES} | {"denoise_alert_firing", "denoise_health_findings",
                                               "denoise_celery_queue_lag_seconds", "denoise_celery_queue_length"}
    for metric in (process_metrics.INGEST_EVENTS, process_metrics.REQUEST_LATENCY, process_metrics.REQUESTS,
                   process_metrics.WEBHOOK_DELIVERIES):
        names.add(metric.describe()[0].name)
    return names


def test_the_grafana_dashboard_queries_exported_series():
    dashboard = json.loads((REPO / "deploy" / "grafana" / "denoise.json").read_text())
    exprs = [target["expr"] for panel in dashboard["panels"] for target in panel.get("targets", [])]
    assert exprs
    used = {name for expr in exprs for name in re.findall(r"denoise_[a-z_]+", expr)}
    for name in used:
        base = next((name[: -len(s)] for s in SUFFIXES if name.endswith(s) and name[: -len(s)] in exported()), name)
        assert base in exported(), name


def test_the_example_scrape_config_uses_bearer_auth_on_both_endpoints():
    text = (REPO / "deploy" / "prometheus.yml").read_text()
    assert "metrics_path: /metrics\n" in text and "metrics_path: /ops/metrics\n" in text
    assert text.count("type: Bearer") == 2
